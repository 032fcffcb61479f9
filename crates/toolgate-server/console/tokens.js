// tokens.js — the Tokens page (operators): the bearer tokens issued through the store, with
// their state, expiry and last use, a Revoke button for each active one, and a form that
// issues a token and shows it once. Every server sharing the store admits or refuses a token
// within a second of a change. Refreshed every 5 s.

import { ApiError, api } from './api.js';
import { emptyState, errorNotice, fill, fmtTime, h, notice } from './ui.js';

const REFRESH_MS = 5000;

export function mount(el, ctx) {
  const status = h('div', { id: 'tokens-status' });
  const list = h('div', { class: 'panel', id: 'tokens-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const issued = h('div', { id: 'token-issued' });
  el.append(
    h('header', { class: 'page-head' }, h('div', {}, h('h1', {}, 'Tokens'),
      h('p', { class: 'sub' }, 'Bearer tokens issued through the store. A change holds on every server within a second.'))),
    status, createForm(issued, refresh), issued,
    h('h2', { class: 'section' }, 'Issued'), list);

  if (!ctx.me?.operator) {
    fill(list, emptyState('Operators only', 'Listing and revoking tokens needs an operator token.'));
    return {};
  }

  async function refresh() {
    try {
      const tokens = await api('/v1/tokens');
      fill(list, tokens.length ? table(tokens, revoke) : emptyState('No tokens issued',
        'Issue one above, or with `toolgate token create --principal P --role R`.'));
    } catch (e) {
      fill(list, errorNotice(e, 'Cannot list the tokens'));
    }
  }

  async function revoke(t) {
    try {
      await api(`/v1/tokens/${encodeURIComponent(t.id)}/revoke`, { method: 'POST' });
      fill(status, notice('ok', `Revoked ${t.id}`, `${t.principal} can no longer call with it.`));
    } catch (e) {
      fill(status, errorNotice(e, `Cannot revoke ${t.id}`));
    }
    refresh();
  }

  refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return { unmount: () => clearInterval(timer) };
}

function table(tokens, revoke) {
  return h('table', { class: 'grid', id: 'tokens-table' },
    h('thead', {}, h('tr', {}, ['Id', 'Principal', 'Role', 'State', 'Expires', 'Last used', 'Note', ''].map((c) => h('th', {}, c)))),
    h('tbody', {}, tokens.map((t) => h('tr', { dataset: { key: t.id, state: t.state } },
      h('td', { class: 'mono' }, t.id),
      h('td', { class: 'strong' }, t.principal, t.operator ? h('span', { class: 'pill', title: 'may decide approvals and read the audit' }, ' operator') : null),
      h('td', {}, t.role),
      h('td', {}, h('span', { class: `avail avail-${t.state === 'active' ? 'ok' : 'bad'}` }, h('span', { class: 'dot' }), t.state)),
      h('td', {}, t.expires_at ? fmtTime(t.expires_at) : 'never'),
      h('td', {}, t.last_used_at ? fmtTime(t.last_used_at) : 'never'),
      h('td', { class: 'muted' }, t.note || ''),
      h('td', {}, t.state === 'active'
        ? h('button', { type: 'button', class: 'danger revoke', onclick: () => revoke(t) }, 'Revoke')
        : null)))));
}

function createForm(issued, refresh) {
  const principal = h('input', { name: 'principal', id: 'new-token-principal', required: true, placeholder: 'principal', autocomplete: 'off' });
  const role = h('input', { name: 'role', id: 'new-token-role', required: true, placeholder: 'role', value: 'default', autocomplete: 'off' });
  const operator = h('input', { type: 'checkbox', name: 'operator', id: 'new-token-operator' });
  const days = h('input', { type: 'number', min: '1', name: 'days', id: 'new-token-days', placeholder: 'never', 'aria-label': 'expires in days' });
  const note = h('input', { name: 'note', id: 'new-token-note', placeholder: 'note', autocomplete: 'off' });
  const form = h('form', { class: 'token-create', id: 'token-create', onsubmit: async (e) => {
    e.preventDefault();
    const body = { principal: principal.value.trim(), role: role.value.trim(), operator: operator.checked };
    if (note.value.trim()) body.note = note.value.trim();
    if (days.value) body.expires_in_secs = Math.round(Number(days.value) * 86400);
    try {
      const t = await api('/v1/tokens', { method: 'POST', body });
      fill(issued, notice('ok', `Issued ${t.id} for ${t.principal}`,
        h('p', {}, 'Copy it now: it is shown this once, and only its SHA-256 is kept.'),
        h('code', { class: 'mono secret', id: 'issued-token' }, t.token)));
      form.reset();
      role.value = 'default';
    } catch (err) {
      fill(issued, errorNotice(err, err instanceof ApiError && err.status === 400 ? 'Not issued' : 'Request failed'));
    }
    refresh();
  } },
  principal, role, h('label', {}, operator, ' operator'), days, note,
  h('button', { type: 'submit', class: 'primary' }, 'Issue token'));
  return form;
}
