// ui.js — building DOM and formatting values. Everything the server sends is put on the
// page as text nodes, never parsed as HTML: tool arguments come from models and must never
// become markup.

/** h('div', {class: 'x', onclick: f}, child, 'text', [more]) → an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'text') el.textContent = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces everything inside `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const RISKS = { read: 'read', write: 'write', dangerous: 'dangerous' };

export function riskBadge(risk) {
  const r = RISKS[risk] || 'unknown';
  return h('span', { class: `badge risk-${r}`, title: `risk: ${risk}` }, risk || '?');
}

/** An outcome code as a coloured pill: ok green, waiting amber, refusals and failures red. */
export function outcomePill(outcome) {
  return h('span', { class: `pill outcome-${outcomeTone(outcome)}` }, outcome || '—');
}

export function outcomeTone(outcome) {
  if (outcome === 'ok' || outcome === 'approved') return 'ok';
  if (outcome === 'started' || outcome === 'pending') return 'info';
  if (['approval_required', 'expired', 'abandoned', 'approval_expired', 'cancelled', 'timeout'].includes(outcome)) return 'warn';
  return 'bad';
}

/** Microseconds → "812 µs", "12.4 ms", "3.2 s". */
export function fmtDuration(us) {
  if (us === undefined || us === null) return '';
  if (us < 1000) return `${us} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)} ms`;
  return `${(us / 1_000_000).toFixed(1)} s`;
}

/** Seconds → "3d 4h", "2h 05m", "4m 09s", "12s". */
export function fmtUptime(secs) {
  const s = Math.max(0, Math.floor(secs));
  const d = Math.floor(s / 86400), hr = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60), sec = s % 60;
  const two = (n) => String(n).padStart(2, '0');
  if (d) return `${d}d ${hr}h`;
  if (hr) return `${hr}h ${two(m)}m`;
  if (m) return `${m}m ${two(sec)}s`;
  return `${sec}s`;
}

/** Milliseconds left → "9:41", or "expired". */
export function fmtCountdown(msLeft) {
  if (msLeft <= 0) return 'expired';
  const s = Math.ceil(msLeft / 1000);
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

/** An RFC 3339 time or epoch ms → local "14:03:07" today, or "2026-12-01 14:03". */
export function fmtTime(t) {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const two = (n) => String(n).padStart(2, '0');
  const clock = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return clock;
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${clock.slice(0, 5)}`;
}

/** Pretty JSON as a <pre> with keys, strings, numbers and literals tinted. */
export function jsonBlock(value, cls = '') {
  const pre = h('pre', { class: `json ${cls}`.trim() });
  writeJson(pre, value, 0);
  return pre;
}

function writeJson(out, v, depth) {
  const pad = '  '.repeat(depth);
  if (Array.isArray(v)) {
    if (!v.length) return out.append('[]');
    out.append('[\n');
    v.forEach((x, i) => {
      out.append(pad + '  ');
      writeJson(out, x, depth + 1);
      out.append(i < v.length - 1 ? ',\n' : '\n');
    });
    out.append(pad + ']');
  } else if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return out.append('{}');
    out.append('{\n');
    keys.forEach((k, i) => {
      out.append(pad + '  ', h('span', { class: 'j-key' }, JSON.stringify(k)), ': ');
      writeJson(out, v[k], depth + 1);
      out.append(i < keys.length - 1 ? ',\n' : '\n');
    });
    out.append(pad + '}');
  } else if (typeof v === 'string') {
    out.append(h('span', { class: 'j-str' }, JSON.stringify(v)));
  } else if (typeof v === 'number') {
    out.append(h('span', { class: 'j-num' }, String(v)));
  } else {
    out.append(h('span', { class: 'j-lit' }, String(v)));
  }
}

/** One line of JSON, cut to `max` characters. */
export function shortJson(value, max = 90) {
  const s = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** A notice box: tone is ok | warn | bad | info. */
export function notice(tone, title, ...body) {
  return h('div', { class: `notice notice-${tone}`, role: tone === 'bad' ? 'alert' : 'status' },
    h('strong', {}, title), body.length ? h('div', { class: 'notice-body' }, body) : null);
}

/** An error from the API as a notice, with its hint when it has one. */
export function errorNotice(err, title = 'Request failed') {
  return notice('bad', title, err.message, err.hint ? h('div', { class: 'hint' }, err.hint) : null);
}

export function emptyState(title, text) {
  return h('div', { class: 'empty' }, h('div', { class: 'empty-title' }, title), h('p', {}, text));
}

/**
 * Keyboard selection over the rows of a list: `move(+1)` / `move(-1)` for j/k, the selected
 * row marked with `.selected` and `aria-selected`, kept in view, remembered by key so a
 * re-render keeps it.
 */
export class Selection {
  constructor(container, rowSelector) {
    this.container = container;
    this.rowSelector = rowSelector;
    this.key = null;
  }

  rows() {
    return [...this.container.querySelectorAll(this.rowSelector)];
  }

  current() {
    return this.rows().find((r) => r.dataset.key === this.key) || null;
  }

  move(delta) {
    const rows = this.rows();
    if (!rows.length) return null;
    const at = rows.findIndex((r) => r.dataset.key === this.key);
    const next = at < 0 ? (delta > 0 ? 0 : rows.length - 1) : Math.min(rows.length - 1, Math.max(0, at + delta));
    return this.select(rows[next].dataset.key);
  }

  select(key) {
    this.key = key;
    return this.apply();
  }

  /** Marks the selected row again after the list was rebuilt. */
  apply() {
    let found = null;
    for (const r of this.rows()) {
      const on = r.dataset.key === this.key;
      r.classList.toggle('selected', on);
      r.setAttribute('aria-selected', on ? 'true' : 'false');
      if (on) found = r;
    }
    found?.scrollIntoView({ block: 'nearest' });
    return found;
  }
}
