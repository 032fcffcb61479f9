// dashboard.js — the Dashboard page (operators): this server's own GET /metrics, polled every
// 2 s and read in the browser. Totals come straight from the counters; calls per second and
// the p50/p99 latency are the deltas between this poll and the previous one (the first poll
// shows everything since the server started). Also the error codes, the busiest tools,
// approvals waiting and the federated MCP servers, with the last ~2 minutes as sparklines.

import { api } from './api.js';
import { sparkline, shareBar } from './charts.js';
import { parse } from './metrics.js';
import { busiest, errorCodes, snapshot, windowOf } from './stats.js';
import { emptyState, errorNotice, fill, fmtDuration, h, notice, outcomePill } from './ui.js';

const POLL_MS = 2000;
const HISTORY = 60;

export function mount(el, ctx) {
  const updated = h('p', { class: 'sub', id: 'dash-updated' }, 'Reading /metrics…');
  el.append(h('header', { class: 'page-head' }, h('div', {}, h('h1', {}, 'Dashboard'), updated)));
  if (!ctx.me?.operator) {
    updated.textContent = 'Live numbers from this server\'s /metrics.';
    el.append(notice('warn', 'Operator access needed', 'The metrics are for operators.',
      h('div', { class: 'notice-actions' }, h('button', { type: 'button', class: 'primary',
        onclick: () => ctx.askToken('The dashboard reads /metrics, which is for operators: enter an operator token.') },
      'Use an operator token'))));
    return {};
  }

  const status = h('div', { id: 'dash-status' });
  const tiles = h('div', { class: 'tiles dash-tiles', id: 'dash-tiles' });
  const charts = h('div', { class: 'dash-charts', id: 'dash-charts' });
  const tools = h('div', { class: 'panel', id: 'dash-tools' }, h('p', { class: 'muted' }, 'Loading…'));
  const errors = h('div', { class: 'panel', id: 'dash-errors' }, h('p', { class: 'muted' }, 'Loading…'));
  const servers = h('div', { class: 'panel', id: 'dash-mcp' }, h('p', { class: 'muted' }, 'Loading…'));
  el.append(status, tiles, charts,
    h('div', { class: 'dash-cols' },
      h('section', {}, h('h2', { class: 'section' }, 'Busiest tools'), tools),
      h('section', {}, h('h2', { class: 'section' }, 'Errors by code'), errors)),
    h('h2', { class: 'section' }, 'MCP servers'), servers);

  let prev = null;
  const history = [];
  let timer = null;
  let stopped = false;
  const ctrl = new AbortController();

  async function poll() {
    try {
      const text = await api('/metrics', { as: 'text', signal: ctrl.signal });
      const cur = snapshot(parse(text), performance.now());
      const win = windowOf(cur, prev);
      prev = cur;
      history.push({ rate: win.rate, p99: !win.cumulative && win.calls > 0 ? win.p99 : null });
      if (history.length > HISTORY) history.shift();
      fill(status);
      fill(tiles, ...summaryTiles(cur, win));
      fill(charts, chart('Calls per second', 'dash-rate-chart', history.map((p) => p.rate), fmtRate),
        chart('p99 latency', 'dash-p99-chart', history.map((p) => p.p99), fmtSecs));
      fill(tools, toolsTable(cur));
      fill(errors, errorsTable(cur));
      fill(servers, mcpServers(cur));
      tiles.dataset.polls = String(Number(tiles.dataset.polls || 0) + 1);
      updated.textContent = `This server's /metrics, read every ${POLL_MS / 1000} s · updated ${new Date().toLocaleTimeString()}`;
    } catch (e) {
      if (e.name === 'AbortError') return;
      fill(status, errorNotice(e, 'Cannot read /metrics'));
    }
    if (!stopped) timer = setTimeout(poll, POLL_MS);
  }

  poll();
  return {
    unmount: () => {
      stopped = true;
      clearTimeout(timer);
      ctrl.abort();
    },
  };
}

const plural = (n, one, many = `${one}s`) => `${fmtCount(n)} ${n === 1 ? one : many}`;

function fmtCount(n) {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—';
}

function fmtRate(r) {
  if (r === null || !Number.isFinite(r)) return '—';
  return r < 10 ? r.toFixed(2) : r < 100 ? r.toFixed(1) : String(Math.round(r));
}

function fmtSecs(s) {
  return s === null || !Number.isFinite(s) ? '—' : fmtDuration(Math.max(1, Math.round(s * 1e6)));
}

function fmtPct(part, whole) {
  if (!(whole > 0)) return '—';
  const p = (part / whole) * 100;
  return `${p === 0 || p >= 10 ? p.toFixed(0) : p.toFixed(1)}%`;
}

function tile(id, label, value, sub, tone = 'plain', raw) {
  return h('section', { class: `tile tone-${tone}`, id },
    h('div', { class: 'tile-label' }, label),
    h('div', { class: 'tile-value', 'data-testid': id, 'data-value': raw ?? '' }, value),
    sub ? h('div', { class: 'tile-sub' }, sub) : null);
}

/** Where a window's numbers come from, in words. */
function span(win) {
  if (win.cumulative) return 'since the server started';
  return `last ${win.secs.toFixed(1)} s`;
}

function summaryTiles(cur, win) {
  const latencySub = win.calls > 0 ? `${span(win)} · ${plural(win.calls, 'call')}`
    : win.cumulative ? 'no calls yet' : `no calls in the ${span(win)}`;
  const errSub = [`${plural(cur.errors, 'error')} in ${plural(cur.total, 'call')}`];
  if (!win.cumulative && win.calls > 0) errSub.push(` · ${fmtPct(win.errors, win.calls)} in the ${span(win)}`);
  return [
    tile('dash-total', 'Total calls', fmtCount(cur.total), 'since the server started', 'plain', cur.total),
    tile('dash-rate', 'Calls / s', fmtRate(win.rate),
      win.rate === null ? 'measuring…' : `${plural(win.calls, 'call')} in the ${span(win)}`, 'plain', win.rate ?? ''),
    tile('dash-error-rate', 'Error rate', fmtPct(cur.errors, cur.total), errSub,
      cur.errors > 0 ? 'bad' : 'plain', cur.total > 0 ? cur.errors / cur.total : ''),
    tile('dash-p50', 'Latency p50', win.calls > 0 ? fmtSecs(win.p50) : '—', latencySub, 'plain', win.calls > 0 ? win.p50 : ''),
    tile('dash-p99', 'Latency p99', win.calls > 0 ? fmtSecs(win.p99) : '—', latencySub, 'plain', win.calls > 0 ? win.p99 : ''),
    tile('dash-approvals', 'Approvals', cur.pending === null ? '—' : fmtCount(cur.pending),
      ['waiting for a human · ', h('a', { href: '#/approvals' }, 'open')], cur.pending > 0 ? 'warn' : 'plain', cur.pending ?? ''),
  ];
}

function chart(title, id, values, fmt) {
  const shown = values.filter((v) => v !== null && Number.isFinite(v));
  const last = values.length ? values[values.length - 1] : null;
  return h('section', { class: 'panel dash-chart' },
    h('div', { class: 'chart-head' }, h('h3', {}, title),
      h('span', { class: 'chart-now' }, fmt(last)),
      h('span', { class: 'muted small' }, shown.length ? `max ${fmt(Math.max(...shown))}` : 'no data yet')),
    sparkline(values, { slots: HISTORY, label: `${title}, the last ${HISTORY} polls`, id }),
    h('div', { class: 'chart-foot muted small' }, h('span', {}, `${(HISTORY * POLL_MS) / 60000} min ago`), h('span', {}, 'now')));
}

function toolsTable(cur) {
  const top = busiest(cur);
  if (!top.length) return emptyState('No calls yet', 'Tool calls through any front end (API, MCP, agent) are counted here.');
  const most = top[0].calls;
  return h('table', { class: 'grid compact', id: 'dash-tools-table' },
    h('thead', {}, h('tr', {}, ['Tool', 'Calls', 'Errors', ''].map((c) => h('th', {}, c)))),
    h('tbody', {}, top.map((t) => h('tr', { dataset: { key: t.tool } },
      h('td', { class: 'mono strong tool' }, t.tool),
      h('td', { class: 'num calls' }, fmtCount(t.calls)),
      h('td', { class: `num errors${t.errors ? ' err-text' : ''}` }, fmtCount(t.errors)),
      h('td', { class: 'share' }, shareBar(t.calls / most))))));
}

function errorsTable(cur) {
  const codes = errorCodes(cur);
  if (!codes.length) return h('p', { class: 'muted' }, cur.total ? 'No errors since the server started' : 'No calls yet');
  return h('table', { class: 'grid compact', id: 'dash-errors-table' },
    h('thead', {}, h('tr', {}, ['Code', 'Calls', 'Share', ''].map((c) => h('th', {}, c)))),
    h('tbody', {}, codes.map((c) => h('tr', { dataset: { key: c.code } },
      h('td', { class: 'code' }, outcomePill(c.code)),
      h('td', { class: 'num calls' }, fmtCount(c.calls)),
      h('td', { class: 'num' }, fmtPct(c.calls, cur.total)),
      h('td', { class: 'share' }, shareBar(c.calls / cur.errors, 'bad'))))));
}

function mcpServers(cur) {
  if (!cur.mcp.length) return h('p', { class: 'muted' }, 'no MCP servers configured');
  return h('table', { class: 'grid compact', id: 'dash-mcp-table' },
    h('thead', {}, h('tr', {}, ['Server', 'Up', 'State'].map((c) => h('th', {}, c)))),
    h('tbody', {}, cur.mcp.map((s) => h('tr', { dataset: { key: s.name, up: s.up ? '1' : '0' } },
      h('td', { class: 'mono strong' }, s.name),
      h('td', { class: 'up' }, h('span', { class: `avail avail-${s.up ? 'ok' : 'bad'}` }, h('span', { class: 'dot' }), s.up ? 'up' : 'down')),
      h('td', { class: 'muted state' }, s.state)))));
}
