// app.js — the console shell: hash routing between the seven pages, who the caller is, the
// token prompt, the live approvals badge, and the keyboard.
//
// A page module exports `mount(el, ctx)` returning a handle `{unmount?, focusFilter?,
// onKey?}`. `ctx` is {me, feed, askToken(reason)}.

import { api, onUnauthorized, setToken, token } from './api.js';
import { feed } from './feed.js';
import { installKeys } from './keys.js';
import { fill, h } from './ui.js';
import * as dashboard from './dashboard.js';
import * as chat from './chat.js';
import * as tools from './tools.js';
import * as approvals from './approvals.js';
import * as audit from './audit.js';
import * as health from './health.js';
import * as tokens from './tokens.js';

const PAGES = { dashboard, chat, tools, approvals, audit, health, tokens };
const TITLES = {
  dashboard: 'Dashboard', chat: 'Chat', tools: 'Tools', approvals: 'Approvals', audit: 'Audit', health: 'Health', tokens: 'Tokens',
};

const state = { me: null, page: null, handle: null };

function $(id) {
  return document.getElementById(id);
}

function pageFromHash() {
  const name = location.hash.replace(/^#\/?/, '').split('/')[0];
  return PAGES[name] ? name : 'tools';
}

function go(page) {
  if (location.hash !== `#/${page}`) location.hash = `#/${page}`;
  else render();
}

function render() {
  const page = pageFromHash();
  state.handle?.unmount?.();
  state.page = page;
  document.title = `${TITLES[page]} · toolgate`;
  for (const a of document.querySelectorAll('.nav-item')) {
    const on = a.dataset.page === page;
    a.classList.toggle('active', on);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = fill($('view'));
  view.dataset.page = page;
  state.handle = PAGES[page].mount(view, { me: state.me, feed, askToken }) || {};
}

/** Shows the token prompt at the top of the page, with why it is needed. */
function askToken(reason) {
  const panel = $('token-panel');
  const input = h('input', {
    type: 'password', id: 'token-input', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'Bearer token', 'aria-label': 'Bearer token',
  });
  const form = h('form', { class: 'token-form', onsubmit: (e) => {
    e.preventDefault();
    if (!input.value.trim()) return input.focus();
    setToken(input.value);
    panel.hidden = true;
    boot();
  } },
  input, h('button', { type: 'submit', class: 'primary' }, 'Use token'));
  fill(panel,
    h('div', { class: 'token-card' },
      h('div', {},
        h('strong', {}, 'This server needs a bearer token'),
        h('p', { class: 'muted', id: 'token-reason' }, reason),
        h('p', { class: 'muted small' }, 'Kept in this tab only (sessionStorage) and sent as Authorization: Bearer.')),
      form));
  panel.hidden = false;
  input.focus();
}

function showWho() {
  const me = state.me;
  $('forget-token').hidden = !token();
  if (!me) return fill($('whoami'), h('span', { class: 'muted' }, 'not signed in'));
  fill($('whoami'),
    h('div', { class: 'who-name', title: 'principal' }, me.principal),
    h('div', { class: 'muted small' }, `role ${me.role}`, me.operator ? ' · operator' : ''));
}

function showLive() {
  const count = feed.pending().length;
  const badge = $('pending-count');
  badge.textContent = String(count);
  badge.hidden = count === 0;
  const live = $('live');
  const labels = {
    live: 'live', connecting: 'connecting…', retrying: 'reconnecting…',
    forbidden: 'approvals: operator only', unauthorized: 'token needed', off: 'not live',
  };
  live.dataset.state = feed.state;
  $('live-text').textContent = labels[feed.state] || feed.state;
}

async function boot() {
  try {
    state.me = await api('/v1/me');
  } catch (e) {
    state.me = null;
    if (e.status !== 401) console.warn('/v1/me:', e.message);
  }
  showWho();
  if (state.me && state.me.operator) feed.start();
  else {
    feed.stop();
    feed.byId.clear();
    feed.setState(state.me ? 'forbidden' : 'off');
  }
  render();
}

let unauthorizedShown = false;
onUnauthorized((err) => {
  if (unauthorizedShown && !$('token-panel').hidden) return;
  unauthorizedShown = true;
  askToken(token() ? `The token was refused: ${err.message}` : err.message);
});

function toggleHelp(open) {
  const help = $('help');
  const want = open === undefined ? help.hidden : open;
  const changed = help.hidden === want;
  help.hidden = !want;
  if (want) $('help-close').focus();
  return changed;
}

window.addEventListener('hashchange', render);
feed.subscribe(showLive);
$('forget-token').addEventListener('click', () => {
  setToken('');
  unauthorizedShown = false;
  boot();
});
$('show-help').addEventListener('click', () => toggleHelp(true));
$('help-close').addEventListener('click', () => toggleHelp(false));
$('help').addEventListener('click', (e) => {
  if (e.target === $('help')) toggleHelp(false);
});
installKeys({ go, view: () => state.handle, toggleHelp });
boot();
