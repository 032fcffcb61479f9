// approvals.js — the Approvals page: pending requests, live from the feed, each with what is
// being asked (tool, risk, who, session, the arguments) and how long is left; approve once,
// for the session or always (these arguments), or deny with a reason. A request that
// requires confirmation can only be approved after the tool's name is typed back.
//
// The arguments are shown whole (the API never shortens them). When a string hides text — a
// run of thousands of spaces before `; rm -rf ~`, a `\r`, an ANSI escape, a zero-width or bidi
// character — the card warns, shows the server's visible form (`⟨2100 spaces⟩`, `⟨CR⟩`,
// `⟨U+202E⟩`) first and the exact text below it, both scrollable.
//
// Keys: j/k select a request, `a` approves it once (or focuses its confirmation field),
// `d` denies it (with the reason typed in its field, if any).

import { Selection, emptyState, errorNotice, fill, fmtCountdown, fmtTime, h, jsonBlock, notice, outcomePill, riskBadge } from './ui.js';

const SCOPES = [
  { scope: 'once', label: 'Approve once', cls: 'primary', title: 'Let this one call through' },
  { scope: 'session', label: 'For this session', cls: '', title: 'Approve this tool for the rest of the session' },
  { scope: 'always', label: 'Always', cls: '', title: 'Always approve this tool with exactly these arguments, for this principal' },
];

export function mount(el, ctx) {
  const { feed } = ctx;
  const summary = h('p', { class: 'sub' });
  const list = h('div', { class: 'cards', id: 'approval-list' });
  const recent = h('div', { class: 'table-wrap', id: 'recent-decisions' });
  el.append(h('header', { class: 'page-head' }, h('div', {}, h('h1', {}, 'Approvals'), summary)), list);

  if (!ctx.me?.operator) {
    fill(list, notice('warn', 'Operator access needed',
      ctx.me ? `You are ${ctx.me.principal} (role ${ctx.me.role}), not an operator. Deciding approvals needs an operator's token.`
        : 'Sign in with an operator token to see and decide approval requests.',
      h('div', { class: 'notice-actions' }, h('button', { type: 'button', class: 'primary', id: 'use-operator-token',
        onclick: () => ctx.askToken('Approvals are for operators: enter an operator token.') }, 'Use an operator token'))));
    return {};
  }
  el.append(h('h2', { class: 'section' }, 'Recent decisions'), recent);

  const sel = new Selection(list, '.card');
  const cards = new Map();

  function card(a) {
    const confirmInput = a.requires_confirmation ? h('input', {
      type: 'text', class: 'confirm-input', autocomplete: 'off', spellcheck: 'false',
      placeholder: a.tool, 'aria-label': `Type ${a.tool} to confirm`,
    }) : null;
    const reason = h('input', { type: 'text', class: 'reason', placeholder: 'Reason (optional)', 'aria-label': 'Reason', autocomplete: 'off' });
    const errorBox = h('div', { class: 'card-error' });
    const countdown = h('span', { class: 'countdown', dataset: { expires: a.expires_at_ms } }, fmtCountdown(a.expires_at_ms - Date.now()));
    const approveButtons = SCOPES.map((s) => h('button', {
      type: 'button', class: `approve ${s.cls}`.trim(), title: s.title, dataset: { scope: s.scope },
      onclick: () => decide(a, { approve: true, scope: s.scope }),
    }, s.label));
    const deny = h('button', { type: 'button', class: 'danger deny', onclick: () => decide(a, { approve: false }) }, 'Deny');
    const refresh = () => {
      const ok = !confirmInput || confirmInput.value.trim() === a.tool;
      approveButtons.forEach((b) => { b.disabled = !ok; });
      if (confirmInput) confirmInput.classList.toggle('matched', ok);
    };
    if (confirmInput) {
      confirmInput.addEventListener('input', refresh);
      confirmInput.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && !approveButtons[0].disabled) decide(a, { approve: true, scope: 'once' });
      });
    }
    reason.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') decide(a, { approve: false });
    });
    const node = h('article', {
      class: `card${feed.fresh.has(a.id) ? ' fresh' : ''}`, dataset: { key: a.id, tool: a.tool }, 'aria-label': `Approval ${a.id} for ${a.tool}`,
      onclick: (e) => {
        if (!e.target.closest('button, input')) sel.select(a.id);
      },
      onfocusin: () => sel.select(a.id),
    },
    h('div', { class: 'card-head' },
      h('span', { class: 'tool-name mono' }, a.tool),
      riskBadge(a.risk),
      a.requires_confirmation ? h('span', { class: 'chip chip-warn' }, 'typed confirmation') : null,
      h('span', { class: 'spacer' }),
      h('span', { class: 'muted small' }, 'expires in '), countdown),
    h('div', { class: 'meta' },
      metaItem('principal', a.principal), metaItem('session', a.session), metaItem('role', a.role),
      metaItem('requested', fmtTime(a.created_at_ms ?? a.created_at)), metaItem('id', a.id, 'mono')),
    argumentsView(a),
    confirmInput ? h('label', { class: 'confirm' },
      h('span', {}, 'Dangerous: type ', h('code', {}, a.tool), ' to enable approval'), confirmInput) : null,
    h('div', { class: 'actions' }, approveButtons, h('span', { class: 'spacer' }), reason, deny),
    errorBox);
    refresh();
    node._parts = { confirmInput, reason, errorBox, approveButtons, deny };
    if (feed.fresh.has(a.id)) setTimeout(() => { feed.fresh.delete(a.id); node.classList.remove('fresh'); }, 4000);
    return node;
  }

  async function decide(a, { approve, scope }) {
    const node = cards.get(a.id);
    const p = node?._parts;
    if (!p) return;
    const body = { approve };
    if (approve) {
      body.scope = scope || 'once';
      if (p.confirmInput) body.confirm = p.confirmInput.value.trim();
    }
    const reason = p.reason.value.trim();
    if (reason) body.reason = reason;
    node.classList.add('busy');
    [...p.approveButtons, p.deny].forEach((b) => { b.disabled = true; });
    fill(p.errorBox);
    try {
      await feed.decide(a.id, body);
      const next = feed.pending()[0];
      if (next && sel.key === a.id) sel.key = next.id;
    } catch (e) {
      node.classList.remove('busy');
      p.deny.disabled = false;
      p.approveButtons.forEach((b) => { b.disabled = !!p.confirmInput && p.confirmInput.value.trim() !== a.tool; });
      fill(p.errorBox, errorNotice(e, approve ? 'Approval failed' : 'Deny failed'));
    }
  }

  function draw() {
    const pending = feed.pending();
    const live = feed.state === 'live' ? 'live' : feed.state === 'forbidden' ? 'operator only' : feed.state;
    summary.textContent = `${pending.length} pending · ${live}`;
    for (const [id, node] of cards) {
      if (!pending.some((a) => a.id === id)) {
        node.remove();
        cards.delete(id);
      }
    }
    if (!pending.length) {
      fill(list, feed.error && feed.state !== 'live' ? errorNotice(feed.error, 'Cannot load approvals')
        : emptyState('Nothing waiting', 'New approval requests appear here as soon as they are made.'));
    } else {
      list.querySelector('.empty, .notice')?.remove();
      pending.forEach((a, i) => {
        let node = cards.get(a.id);
        if (!node) {
          node = card(a);
          cards.set(a.id, node);
        }
        if (list.children[i] !== node) list.insertBefore(node, list.children[i] || null);
      });
    }
    if (!pending.some((a) => a.id === sel.key)) sel.key = pending[0]?.id ?? null;
    sel.apply();
    drawRecent();
  }

  function drawRecent() {
    const done = feed.recent();
    if (!done.length) return fill(recent, h('p', { class: 'muted small pad' }, 'No decisions yet.'));
    fill(recent, h('table', { class: 'grid compact' },
      h('thead', {}, h('tr', {}, ['Decided', 'Tool', 'Status', 'By', 'Scope', 'Principal', 'Reason'].map((c) => h('th', {}, c)))),
      h('tbody', {}, done.map((a) => h('tr', { dataset: { id: a.id } },
        h('td', { class: 'mono small' }, fmtTime(a.decided_at_ms ?? a.expires_at_ms)),
        h('td', { class: 'mono' }, a.tool),
        h('td', {}, outcomePill(statusLabel(a))),
        h('td', {}, a.decided_by ? (a.decided_via ? `${a.decided_by} via ${a.decided_via}` : a.decided_by) : '—'),
        h('td', {}, a.status === 'approved' ? a.scope || 'once' : '—'),
        h('td', {}, a.principal),
        h('td', { class: 'muted' }, a.reason || ''))))));
  }

  const tick = setInterval(() => {
    let expired = false;
    for (const c of list.querySelectorAll('.countdown')) {
      const left = Number(c.dataset.expires) - Date.now();
      c.textContent = fmtCountdown(left);
      c.classList.toggle('urgent', left < 60_000);
      if (left <= 0) expired = true;
    }
    if (expired) draw();
  }, 1000);
  const unsubscribe = feed.subscribe(draw);
  draw();

  return {
    unmount() {
      clearInterval(tick);
      unsubscribe();
    },
    onKey(key) {
      if (key === 'j' || key === 'ArrowDown') return !!sel.move(1);
      if (key === 'k' || key === 'ArrowUp') return !!sel.move(-1);
      const node = sel.current();
      const a = node && feed.byId.get(node.dataset.key);
      if (!a) return false;
      if (key === 'a') {
        if (node._parts.confirmInput && node._parts.confirmInput.value.trim() !== a.tool) node._parts.confirmInput.focus();
        else decide(a, { approve: true, scope: 'once' });
        return true;
      }
      if (key === 'd') {
        decide(a, { approve: false });
        return true;
      }
      return false;
    },
  };
}

/** The arguments as an approver must read them: the visible form, then the exact text. */
function argumentsView(a) {
  const exact = a.arguments ?? {};
  if (!a.arguments_hidden) return jsonBlock(exact, 'args');
  const chars = JSON.stringify(exact).length;
  return h('div', { class: 'args-hidden' },
    notice('warn', 'Hidden text in these arguments',
      'Long whitespace runs or invisible characters are shown as ⟨…⟩ markers below. Read to the end of every value: the exact text follows.'),
    jsonBlock(a.arguments_view ?? exact, 'args args-view'),
    h('details', { class: 'args-exact' },
      h('summary', {}, `Exact arguments (${chars} characters of JSON)`),
      jsonBlock(exact, 'args exact')));
}

function metaItem(label, value, cls = '') {
  return h('span', { class: 'meta-item' }, h('span', { class: 'meta-label' }, label), ' ', h('span', { class: cls }, value ?? '—'));
}

function statusLabel(a) {
  if (a.status === 'pending' && a.expires_at_ms <= Date.now()) return 'expired';
  return a.consumed && a.status === 'approved' ? 'approved' : a.status;
}
