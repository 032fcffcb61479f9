// audit.js — the Audit page: the newest records matching the filters (tool, principal,
// outcome, since), each row expandable to the whole record, and "Verify chain", which asks
// the server to re-hash the log and shows plainly whether it is intact or where it broke.

import { api, withQuery } from './api.js';
import { Selection, emptyState, errorNotice, fill, fmtDuration, fmtTime, h, jsonBlock, notice, outcomePill, shortJson } from './ui.js';

const OUTCOMES = ['ok', 'started', 'approval_required', 'approval_denied', 'approval_expired', 'policy_denied',
  'forbidden', 'invalid_arguments', 'unknown_tool', 'unavailable', 'execution_failed', 'timeout', 'cancelled',
  'result_too_large'];
const SINCE = [['', 'any time'], ['15m', 'last 15 min'], ['1h', 'last hour'], ['24h', 'last 24 h'], ['7d', 'last 7 days']];
const SINCE_MS = { '15m': 15 * 60e3, '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3 };
const LIMIT = 200;

export function mount(el, ctx) {
  const verifyBtn = h('button', { type: 'button', id: 'verify-chain', class: 'primary' }, 'Verify chain');
  const verdict = h('div', { id: 'verify-result', 'aria-live': 'polite' });
  const summary = h('p', { class: 'sub' });
  el.append(h('header', { class: 'page-head' },
    h('div', {}, h('h1', {}, 'Audit'), summary),
    h('div', { class: 'head-actions' }, verifyBtn)), verdict);

  if (!ctx.me?.operator) {
    verifyBtn.disabled = true;
    el.append(notice('warn', 'Operator access needed', 'The audit log is for operators.',
      h('div', { class: 'notice-actions' }, h('button', { type: 'button', class: 'primary',
        onclick: () => ctx.askToken('The audit log is for operators: enter an operator token.') }, 'Use an operator token'))));
    return {};
  }

  const field = (id, label, placeholder) => h('input', { type: 'search', id, placeholder, 'aria-label': label, autocomplete: 'off', spellcheck: 'false' });
  const tool = field('audit-tool', 'Tool', 'tool   /');
  const principal = field('audit-principal', 'Principal', 'principal');
  const outcome = h('select', { id: 'audit-outcome', 'aria-label': 'Outcome' },
    h('option', { value: '' }, 'any outcome'), OUTCOMES.map((o) => h('option', { value: o }, o)));
  const since = h('select', { id: 'audit-since', 'aria-label': 'Since' }, SINCE.map(([v, l]) => h('option', { value: v }, l)));
  const form = h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); load(); } },
    tool, principal, outcome, since, h('button', { type: 'submit' }, 'Apply'));
  const body = h('div', { class: 'table-wrap' });
  el.append(form, body);

  let records = [];
  const open = new Set();
  const sel = new Selection(body, 'tr.row');
  let seq = 0;

  async function load() {
    const mine = ++seq;
    const q = {
      tool: tool.value.trim(), principal: principal.value.trim(), outcome: outcome.value,
      since: since.value ? new Date(Date.now() - SINCE_MS[since.value]).toISOString() : '',
      limit: LIMIT, newest_first: 'true',
    };
    try {
      const list = await api(withQuery('/v1/audit', q));
      if (mine !== seq) return;
      records = list || [];
      summary.textContent = records.length >= LIMIT ? `newest ${LIMIT} records` : `${records.length} record${records.length === 1 ? '' : 's'}`;
      draw();
    } catch (e) {
      if (mine !== seq) return;
      fill(body, errorNotice(e, 'Cannot query the audit log'));
    }
  }

  function detail(r) {
    return h('tr', { class: 'detail' }, h('td', { colspan: 7 }, jsonBlock(r)));
  }

  function draw() {
    if (!records.length) {
      fill(body, emptyState('No records', 'Nothing in the audit log matches these filters.'));
      return;
    }
    const rows = [];
    for (const r of records) {
      const key = String(r.seq);
      rows.push(h('tr', {
        class: `row tone-${r.outcome === 'ok' ? 'ok' : 'other'}`, dataset: { key }, 'aria-expanded': open.has(key) ? 'true' : 'false',
        onclick: () => toggle(key),
      },
      h('td', { class: 'mono muted num' }, key),
      h('td', { class: 'mono small nowrap', title: r.ts }, fmtTime(r.ts)),
      h('td', { class: 'mono strong' }, r.tool),
      h('td', {}, r.principal),
      h('td', {}, outcomePill(r.outcome), r.kind === 'attempt' ? h('span', { class: 'muted small' }, ' attempt') : null),
      h('td', { class: 'mono small num' }, fmtDuration(r.duration_us)),
      h('td', { class: 'desc mono small' }, r.error ? h('span', { class: 'err-text' }, shortJson(r.error, 110)) : shortJson(r.arguments, 110))));
      if (open.has(key)) rows.push(detail(r));
    }
    fill(body, h('table', { class: 'grid', id: 'audit-table' },
      h('thead', {}, h('tr', {}, ['Seq', 'Time', 'Tool', 'Principal', 'Outcome', 'Took', 'Detail'].map((c) => h('th', {}, c)))),
      h('tbody', {}, rows)));
    sel.apply();
  }

  function toggle(key) {
    if (open.has(key)) open.delete(key);
    else open.add(key);
    sel.select(key);
    draw();
  }

  async function verify() {
    verifyBtn.disabled = true;
    fill(verdict, notice('info', 'Verifying the hash chain…'));
    try {
      const v = await api('/v1/audit/verify', { method: 'POST' });
      if (v.ok) {
        fill(verdict, h('div', { class: 'verdict verdict-ok', role: 'status' },
          h('div', { class: 'verdict-mark' }, '✓'),
          h('div', {}, h('div', { class: 'verdict-title' }, 'Chain intact'),
            h('div', { class: 'verdict-body' }, `${v.records} record${v.records === 1 ? '' : 's'} verified`,
              v.head ? [' · head ', h('code', {}, v.head.slice(0, 16) + '…')] : ''))));
      } else {
        const b = v.first_bad || {};
        fill(verdict, h('div', { class: 'verdict verdict-bad', role: 'alert' },
          h('div', { class: 'verdict-mark' }, '✗'),
          h('div', {}, h('div', { class: 'verdict-title' }, `Chain broken at line ${b.line}`),
            h('div', { class: 'verdict-body' }, b.reason || 'unknown reason',
              b.seq !== undefined && b.seq !== null ? ` (seq ${b.seq})` : ''),
            h('div', { class: 'verdict-foot' }, `${v.records} record${v.records === 1 ? '' : 's'} before it verified. The log was changed outside toolgate: keep a copy of it as evidence.`))));
      }
    } catch (e) {
      fill(verdict, errorNotice(e, 'Verification failed to run'));
    } finally {
      verifyBtn.disabled = false;
    }
  }

  verifyBtn.addEventListener('click', verify);
  outcome.addEventListener('change', load);
  since.addEventListener('change', load);
  let debounce = 0;
  for (const input of [tool, principal]) {
    input.addEventListener('input', () => {
      clearTimeout(debounce);
      debounce = setTimeout(load, 250);
    });
  }
  load();

  return {
    unmount: () => clearTimeout(debounce),
    focusFilter: () => tool.focus(),
    onKey(key) {
      if (key === 'j' || key === 'ArrowDown') return !!sel.move(1);
      if (key === 'k' || key === 'ArrowUp') return !!sel.move(-1);
      if (key === 'Enter' && sel.key) {
        toggle(sel.key);
        return true;
      }
      if (key === 'v') {
        verify();
        return true;
      }
      if (key === 'r') {
        load();
        return true;
      }
      return false;
    },
  };
}
