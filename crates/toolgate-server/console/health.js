// health.js — the Health page: liveness and uptime, readiness and its checks, where the
// server listens, who you are to it, and the MCP servers it federates (name, transport, state
// with the error of a server that is down, tool count — in /v1/ready, for operators).
// Refreshed every 5 s.

import { ApiError, api } from './api.js';
import { fill, fmtUptime, h } from './ui.js';

const REFRESH_MS = 5000;

export function mount(el, ctx) {
  const updated = h('p', { class: 'sub' }, 'Checking…');
  const grid = h('div', { class: 'tiles', id: 'health-tiles' });
  const servers = h('div', { class: 'panel', id: 'mcp-servers' }, h('p', { class: 'muted' }, 'Checking…'));
  el.append(h('header', { class: 'page-head' }, h('div', {}, h('h1', {}, 'Health'), updated)), grid,
    h('h2', { class: 'section' }, 'MCP servers'), servers);

  async function readiness() {
    try {
      return await api('/v1/ready');
    } catch (e) {
      const details = e instanceof ApiError ? e.body?.error?.details : null;
      if (details && typeof details.ready === 'boolean') return { ...details, reason: e.message };
      throw e;
    }
  }

  async function refresh() {
    const [health, ready] = await Promise.allSettled([api('/v1/health'), readiness()]);
    const hv = health.status === 'fulfilled' ? health.value : null;
    const rv = ready.status === 'fulfilled' ? ready.value : null;
    const healthy = hv && hv.status === 'ok';
    fill(grid,
      tile('Status', healthy ? 'ok' : 'down', healthy ? 'ok' : 'bad',
        hv ? `up ${fmtUptime(hv.uptime_secs ?? 0)}` : health.reason?.message, 'health-status'),
      tile('Readiness', rv ? (rv.ready ? 'ready' : 'not ready') : 'unknown', rv?.ready ? 'ok' : 'bad',
        rv ? [rv.reason ? h('div', {}, rv.reason) : null, checks(rv.checks)] : ready.reason?.message, 'health-ready'),
      tile('Listening on', hv?.listen || location.host, 'plain',
        h('span', {}, 'console at ', h('code', {}, location.origin)), 'health-listen'),
      tile('You', ctx.me?.principal || 'not signed in', 'plain',
        ctx.me ? `role ${ctx.me.role} · ${ctx.me.operator ? 'operator' : 'not an operator'}` : 'no identity', 'health-me'),
      tile('Approvals feed', ctx.feed.state, ctx.feed.state === 'live' ? 'ok' : 'plain',
        `${ctx.feed.pending().length} pending`, 'health-feed'));
    fill(servers, mcpServers(rv, ready.reason));
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return { unmount: () => clearInterval(timer) };
}

function tile(label, value, tone, sub, id) {
  return h('section', { class: `tile tone-${tone}`, id },
    h('div', { class: 'tile-label' }, label),
    h('div', { class: 'tile-value' }, tone === 'ok' || tone === 'bad' ? h('span', { class: 'dot' }) : null, value),
    sub ? h('div', { class: 'tile-sub' }, sub) : null);
}

const TRANSPORTS = { stdio: 'stdio', streamable_http: 'http' };

// The federated MCP servers from readiness: only operators get `mcp_servers`.
function mcpServers(rv, failure) {
  if (!rv) return h('p', { class: 'muted' }, `unknown: ${failure?.message || 'readiness did not answer'}`);
  if (!Array.isArray(rv.mcp_servers)) return h('p', { class: 'muted' }, 'MCP server status is shown to operators');
  if (!rv.mcp_servers.length) return h('p', { class: 'muted' }, 'no MCP servers configured');
  return h('table', { class: 'grid', id: 'mcp-table' },
    h('thead', {}, h('tr', {}, ['Name', 'Transport', 'State', 'Tools'].map((c) => h('th', {}, c)))),
    h('tbody', {}, rv.mcp_servers.map((s) => h('tr', { dataset: { key: s.name } },
      h('td', { class: 'mono strong' }, s.name),
      h('td', {}, TRANSPORTS[s.transport] || s.transport),
      h('td', {}, serverState(s)),
      h('td', { class: 'num' }, String(s.tools ?? 0))))));
}

function serverState(s) {
  const tone = s.state === 'ready' ? 'ok' : s.state === 'failed' ? 'bad' : 'plain';
  const label = s.state === 'failed' ? 'down' : s.state;
  return h('span', { class: `avail avail-${tone}`, title: s.error || s.state },
    h('span', { class: 'dot' }), label, s.error ? h('span', { class: 'muted server-error' }, ` — ${s.error}`) : null);
}

function checks(c) {
  if (!c || typeof c !== 'object') return null;
  return h('ul', { class: 'checks' }, Object.entries(c).map(([k, v]) =>
    h('li', {}, h('span', { class: `dot ${v === 'ok' ? 'ok' : 'bad'}` }), `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)));
}
