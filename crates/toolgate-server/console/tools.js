// tools.js — the Tools page: every tool the caller's role can see, with its risk, source,
// availability and pin status (docs/pinning.md: an MCP tool whose definition changed since it
// was pinned is quarantined), filtered as you type. Enter (or a click) opens a tool's full
// definition, fetched from GET /v1/tools/{name}, with when and by whom it was pinned.

import { api } from './api.js';
import { Selection, emptyState, errorNotice, fill, h, jsonBlock, riskBadge } from './ui.js';

export function mount(el, ctx) {
  const filter = h('input', {
    type: 'search', id: 'tools-filter', class: 'filter', placeholder: 'Filter tools   /',
    'aria-label': 'Filter tools', autocomplete: 'off', spellcheck: 'false',
  });
  const summary = h('p', { class: 'sub' }, 'Loading…');
  const body = h('div', { class: 'table-wrap' });
  el.append(
    h('header', { class: 'page-head' },
      h('div', {}, h('h1', {}, 'Tools'), summary),
      h('div', { class: 'head-actions' }, filter)),
    body);

  let tools = [];
  const open = new Set();
  const details = new Map();
  const sel = new Selection(body, 'tr.row');

  function matches(t, q) {
    if (!q) return true;
    const hay = [t.name, t.title, t.description, t.risk, t.source, t.availability?.state, t.pin?.state, ...(t.tags || [])]
      .filter(Boolean).join(' ').toLowerCase();
    return q.split(/\s+/).every((w) => hay.includes(w));
  }

  function availability(a) {
    const state = a?.state || 'unknown';
    return h('span', { class: `avail avail-${state === 'available' ? 'ok' : 'bad'}`, title: a?.reason || state },
      h('span', { class: 'dot' }), state, a?.reason ? h('span', { class: 'muted' }, ` — ${a.reason}`) : null);
  }

  // The Pin column: quarantined in red (with why), pinned in green, `—` for built-in tools.
  function pinCell(t) {
    const p = t.pin || {};
    if (p.state === 'quarantined') {
      const why = t.availability?.reason || 'its definition changed since it was pinned';
      return h('td', { class: 'pin', title: `quarantined: ${why}` },
        h('span', { class: 'pill outcome-bad' }, 'quarantined'), ' ', h('span', { class: 'mono muted small pin-hash' }, p.hash || ''));
    }
    if (p.state === 'pinned') {
      return h('td', { class: 'pin', title: `definition pinned (sha256 ${p.hash}…); a change quarantines the tool` },
        h('span', { class: 'pill outcome-ok' }, 'pinned'), ' ', h('span', { class: 'mono muted small pin-hash' }, p.hash || ''));
    }
    return h('td', { class: 'pin muted', title: 'not pinned: only MCP servers\' tools are pinned, built-in tools are not' }, '—');
  }

  // What the pin book holds about a pinned tool, in the opened definition.
  function pinDetail(name, p) {
    if (!p || p.state === 'unpinned' || !p.since) return null;
    const pinned = `sha256 ${p.pinned_hash}… pinned ${p.since} by ${p.pinned_by}`;
    const text = p.state === 'quarantined'
      ? [`Quarantined: the definition now served (sha256 ${p.hash}…) differs from the one ${pinned}. Review and approve it with `,
        h('code', {}, `toolgate tools approve-change ${name}`), '.']
      : [`Definition ${pinned}.`];
    return [h('h3', {}, 'Pin'), h('p', { class: 'prose pin-detail' }, ...text)];
  }

  // What in the definition will make a model guess (the linter's findings, docs/lint.md),
  // each with its fix; absent when the server runs no check.
  function lintDetail(findings) {
    if (!Array.isArray(findings)) return null;
    if (!findings.length) {
      return [h('h3', {}, 'Definition check'), h('p', { class: 'muted lint-none' }, 'No findings: nothing here should make a model guess.')];
    }
    const tone = { error: 'outcome-bad', warning: 'outcome-warn', note: '' };
    return [h('h3', {}, `Definition check (${findings.length})`),
      h('ul', { class: 'lint-findings' }, ...findings.map((f) => h('li', { class: 'lint-finding', 'data-rule': f.rule },
        h('span', { class: `pill ${tone[f.severity] ?? ''}` }, f.severity), ' ',
        h('span', { class: 'mono small' }, f.rule), f.path ? [' ', h('span', { class: 'mono muted small' }, f.path)] : null,
        h('div', { class: 'prose' }, f.message),
        h('div', { class: 'muted small' }, 'Fix: ', f.fix))))];
  }

  function detailRow(t) {
    const d = details.get(t.name);
    let content;
    if (!d) content = h('p', { class: 'muted' }, 'Loading definition…');
    else if (d instanceof Error) content = errorNotice(d, `Cannot load ${t.name}`);
    else content = h('div', { class: 'detail-grid' },
      h('div', {}, h('h3', {}, 'Description'), h('p', { class: 'prose' }, d.description || '—'),
        pinDetail(t.name, d.pin),
        lintDetail(d.lint),
        d.annotations && Object.keys(d.annotations).length ? [h('h3', {}, 'Annotations'), jsonBlock(d.annotations)] : null),
      h('div', {}, h('h3', {}, 'Input schema'), jsonBlock(d.input_schema ?? d.inputSchema ?? d.parameters ?? {})));
    return h('tr', { class: 'detail' }, h('td', { colspan: 6 }, content));
  }

  async function toggle(name) {
    if (open.has(name)) open.delete(name);
    else {
      open.add(name);
      if (!details.has(name)) {
        api(`/v1/tools/${encodeURIComponent(name)}`)
          .then((d) => details.set(name, d), (e) => details.set(name, e))
          .then(draw);
      }
    }
    sel.select(name);
    draw();
  }

  function draw() {
    const q = filter.value.trim().toLowerCase();
    const shown = tools.filter((t) => matches(t, q));
    summary.textContent = tools.length
      ? `${shown.length === tools.length ? tools.length : `${shown.length} of ${tools.length}`} tools visible to role ${ctx.me?.role ?? '—'}`
      : summary.textContent;
    if (!shown.length) {
      fill(body, tools.length ? emptyState('No tool matches', `Nothing matches “${filter.value}”.`)
        : emptyState('No tools', 'This role sees no tools.'));
      return;
    }
    const rows = [];
    for (const t of shown) {
      rows.push(h('tr', {
        class: 'row', dataset: { key: t.name }, 'aria-expanded': open.has(t.name) ? 'true' : 'false',
        onclick: () => toggle(t.name),
      },
      h('td', { class: 'mono strong' }, h('span', { class: 'tool-id' }, t.name), t.title && t.title !== t.name ? h('div', { class: 'muted small sans' }, t.title) : null),
      h('td', {}, riskBadge(t.risk)),
      h('td', { class: 'mono' }, t.source || '—'),
      h('td', {}, availability(t.availability)),
      pinCell(t),
      h('td', { class: 'desc' }, h('div', { class: 'clamp', title: t.description || '' }, t.description || ''))));
      if (open.has(t.name)) rows.push(detailRow(t));
    }
    fill(body, h('table', { class: 'grid', id: 'tools-table' },
      h('thead', {}, h('tr', {}, ['Name', 'Risk', 'Source', 'Availability', 'Pin', 'Description'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows)));
    sel.apply();
  }

  filter.addEventListener('input', draw);
  filter.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === 'ArrowDown') {
      e.preventDefault();
      filter.blur();
      sel.move(1);
    }
  });

  api('/v1/tools').then((list) => {
    tools = (list || []).slice().sort((a, b) => a.name.localeCompare(b.name));
    summary.textContent = '';
    draw();
  }, (e) => {
    summary.textContent = '';
    fill(body, errorNotice(e, 'Cannot list tools'));
  });

  return {
    focusFilter: () => filter.focus(),
    onKey(key) {
      if (key === 'j' || key === 'ArrowDown') return !!sel.move(1);
      if (key === 'k' || key === 'ArrowUp') return !!sel.move(-1);
      if (key === 'Enter' && sel.key) {
        toggle(sel.key);
        return true;
      }
      return false;
    },
  };
}
