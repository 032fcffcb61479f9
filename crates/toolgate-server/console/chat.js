// chat.js — the Chat page: talk to the agent as the signed-in caller. Conversations on the
// left (GET /v1/conversations), the open one's journal on the right, streamed from
// GET /v1/conversations/{id}/events: each message, each tool call and its result, an
// approval card (the complete, redacted arguments, Approve/Deny, the typed name for a
// dangerous tool) and the answer as the model writes it. Everything the server sends is
// shown as text, never as markup.

import { ApiError, api, eventStream } from './api.js';
import { emptyState, errorNotice, fill, h, jsonBlock, riskBadge } from './ui.js';

function conversationFromHash() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  return parts[0] === 'chat' && parts[1] ? decodeURIComponent(parts[1]) : null;
}

export function mount(el, ctx) {
  const list = h('ul', { class: 'chat-list', id: 'chat-list' });
  const log = h('div', { class: 'chat-log', id: 'chat-log', 'aria-live': 'polite' });
  const input = h('textarea', {
    id: 'chat-input', rows: '3', placeholder: 'Ask the agent… (/help for commands)',
    'aria-label': 'Message',
  });
  const send = h('button', { type: 'submit', class: 'primary', id: 'chat-send' }, 'Send');
  const status = h('div', { class: 'muted small', id: 'chat-status' });
  const form = h('form', { class: 'chat-compose', onsubmit: (e) => { e.preventDefault(); post(); } },
    input, send);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      post();
    }
  });
  const newButton = h('button', { type: 'button', id: 'chat-new', onclick: () => openConversation(null) },
    'New conversation');
  fill(el,
    h('div', { class: 'page-head' }, h('h1', {}, 'Chat'),
      h('p', { class: 'muted' }, ctx.me ? `As ${ctx.me.principal} (role ${ctx.me.role}): every tool call goes through the gateway.` : '')),
    h('div', { class: 'chat' },
      h('aside', { class: 'chat-side' }, newButton, list),
      h('section', { class: 'chat-main' }, log, form, status)));

  const view = { id: conversationFromHash(), seen: new Set(), stream: null, live: null, cards: new Map() };

  async function loadList() {
    try {
      const rows = await api('/v1/conversations?limit=50');
      fill(list, rows.map((c) => h('li', {},
        h('a', { href: `#/chat/${encodeURIComponent(c.id)}`, class: c.id === view.id ? 'active' : '', dataset: { id: c.id } },
          h('span', { class: 'chat-title' }, c.title || '(new conversation)'),
          h('span', { class: 'muted small' }, `${c.entry}${c.busy ? ' · working' : ''}`)))));
    } catch (e) {
      fill(list, h('li', {}, errorNotice(e, 'Cannot list conversations')));
    }
  }

  function openConversation(id) {
    view.stream?.stop();
    view.id = id;
    view.seen = new Set();
    view.cards = new Map();
    view.live = null;
    fill(log, id ? [] : emptyState('A new conversation', 'Say something to start it.'));
    if (id) {
      if (location.hash !== `#/chat/${encodeURIComponent(id)}`) history.replaceState(null, '', `#/chat/${encodeURIComponent(id)}`);
      view.stream = eventStream(`/v1/conversations/${encodeURIComponent(id)}/events`, {
        onEvent: (name, data) => onEvent(name, data),
        onState: (s, err) => { status.textContent = s === 'live' ? '' : (err ? err.message : s); },
      });
    } else if (location.hash !== '#/chat') {
      history.replaceState(null, '', '#/chat');
    }
    loadList();
    input.focus();
  }

  async function post() {
    const text = input.value.trim();
    if (!text) return input.focus();
    send.disabled = true;
    try {
      if (!view.id) {
        const c = await api('/v1/conversations', { method: 'POST', body: { text } });
        input.value = '';
        openConversation(c.id);
      } else {
        const r = await api(`/v1/conversations/${encodeURIComponent(view.id)}/messages`, { method: 'POST', body: { text } });
        input.value = '';
        if (r.opened) openConversation(r.opened);
      }
      status.textContent = '';
    } catch (e) {
      status.textContent = e instanceof ApiError ? `${e.message}${e.hint ? ` — ${e.hint}` : ''}` : String(e);
    } finally {
      send.disabled = false;
    }
  }

  function bubble(cls, ...children) {
    const b = h('div', { class: `chat-msg ${cls}` }, ...children);
    log.append(b);
    log.scrollTop = log.scrollHeight;
    return b;
  }

  function onEvent(name, data) {
    if (name === 'delta') {
      if (!view.live) view.live = bubble('agent streaming', '');
      view.live.textContent += data.text;
      log.scrollTop = log.scrollHeight;
      return;
    }
    if (name === 'tool') {
      const line = log.querySelector(`[data-call="${CSS.escape(data.call_id)}"] .tool-state`);
      if (line) line.textContent = data.state === 'started' ? 'running…' : data.state;
      return;
    }
    if (name !== 'entry' || view.seen.has(data.seq)) return;
    view.seen.add(data.seq);
    showEntry(data);
  }

  function endLive() {
    view.live?.remove();
    view.live = null;
  }

  function showEntry(e) {
    switch (e.kind) {
      case 'user':
        bubble('user', e.text);
        break;
      case 'prelude':
        bubble('notice muted', `(${e.messages.length} earlier messages from the client)`);
        break;
      case 'assistant':
        endLive();
        if (e.turn.text && e.turn.tool_calls?.length) bubble('agent', e.turn.text);
        for (const c of e.turn.tool_calls || []) {
          log.append(h('div', { class: 'chat-msg tool', dataset: { call: c.id } },
            h('span', { class: 'tool-name' }, c.name), ' ', h('code', {}, c.arguments),
            ' ', h('span', { class: 'tool-state muted' }, 'queued')));
        }
        break;
      case 'results':
        for (const r of e.results) {
          const line = log.querySelector(`[data-call="${CSS.escape(r.call_id)}"]`);
          const state = line?.querySelector('.tool-state');
          if (state) state.textContent = r.is_error ? 'failed' : 'ok';
          line?.append(h('details', {}, h('summary', {}, 'result'), h('pre', { class: 'json' }, r.content)));
        }
        break;
      case 'approval':
        showCard(e);
        break;
      case 'answer':
        endLive();
        bubble('agent answer', e.text);
        loadList();
        break;
      case 'failed':
        endLive();
        bubble('failed', e.message);
        loadList();
        break;
      case 'notice':
        bubble('notice', e.text);
        break;
      default:
        break;
    }
  }

  async function showCard(e) {
    if (view.cards.has(e.approval_id)) return;
    const card = bubble('card', h('strong', {}, `${e.tool} needs your approval`));
    card.dataset.approval = e.approval_id;
    view.cards.set(e.approval_id, card);
    const base = `/v1/conversations/${encodeURIComponent(view.id)}/approvals/${encodeURIComponent(e.approval_id)}`;
    let request;
    try {
      request = await api(base);
    } catch (err) {
      card.append(errorNotice(err, 'Cannot read the request'));
      return;
    }
    const confirm = e.requires_confirmation
      ? h('input', { class: 'confirm', placeholder: `type ${e.tool} to approve`, 'aria-label': 'Tool name to confirm' })
      : null;
    const result = h('div', { class: 'card-result muted' });
    const decide = async (approve) => {
      try {
        const body = { approve };
        if (approve && confirm) body.confirm = confirm.value.trim();
        const r = await api(`${base}/decision`, { method: 'POST', body });
        buttons.remove();
        result.textContent = `${r.status} by ${r.decided_by}`;
      } catch (err) {
        result.textContent = err.message;
      }
    };
    const buttons = h('div', { class: 'card-buttons' }, confirm,
      h('button', { type: 'button', class: 'primary approve', onclick: () => decide(true) }, 'Approve'),
      h('button', { type: 'button', class: 'deny', onclick: () => decide(false) }, 'Deny'));
    card.append(h('div', {}, riskBadge(request.risk), ' ', h('code', {}, request.tool)));
    if (request.arguments_hidden) {
      card.append(h('p', { class: 'warn small' }, 'The arguments hold hidden characters: read the shown view.'));
    }
    card.append(jsonBlock(request.arguments_view));
    if (request.status === 'pending') card.append(buttons);
    else result.textContent = `${request.status}${request.decided_by ? ` by ${request.decided_by}` : ''}`;
    card.append(result);
  }

  openConversation(view.id);
  return {
    unmount() {
      view.stream?.stop();
    },
    focusFilter() {
      input.focus();
    },
  };
}
