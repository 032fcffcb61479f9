// feed.js — the live set of approval requests, shared by the nav badge and the Approvals page.
//
// Fed by GET /v1/approvals/stream (one `approval` event per pending request on connect, then
// one per creation or status change) and seeded with GET /v1/approvals?status=all so recent
// decisions show too. Every change notifies subscribers; ids seen for the first time after
// the initial load are marked fresh so the page can highlight them.

import { api, eventStream } from './api.js';

export class ApprovalFeed {
  constructor() {
    this.byId = new Map();
    this.fresh = new Set();
    this.listeners = new Set();
    this.state = 'off';
    this.error = null;
    this.stream = null;
    this.loaded = false;
    this.generation = 0;
  }

  /** `fn()` on every change; returns the unsubscribe function. */
  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  notify() {
    this.listeners.forEach((fn) => fn());
  }

  /** Pending requests, the ones about to expire first. */
  pending() {
    const now = Date.now();
    return [...this.byId.values()]
      .filter((a) => a.status === 'pending' && a.expires_at_ms > now)
      .sort((a, b) => a.created_at_ms - b.created_at_ms || a.id.localeCompare(b.id));
  }

  /** Decided or expired requests, newest first. */
  recent(limit = 12) {
    const now = Date.now();
    return [...this.byId.values()]
      .filter((a) => a.status !== 'pending' || a.expires_at_ms <= now)
      .sort((a, b) => (b.decided_at_ms ?? b.expires_at_ms ?? 0) - (a.decided_at_ms ?? a.expires_at_ms ?? 0)
        || b.created_at_ms - a.created_at_ms)
      .slice(0, limit);
  }

  /** Records an Approval (from the stream, a list or a decision's answer). */
  put(a) {
    if (!a || !a.id) return;
    if (!this.byId.has(a.id) && this.loaded && a.status === 'pending') this.fresh.add(a.id);
    this.byId.set(a.id, { ...this.byId.get(a.id), ...a, decided_at_ms: decidedMs(a) });
    this.notify();
  }

  setState(state, err = null) {
    this.state = state;
    this.error = err;
    this.notify();
  }

  async start() {
    this.stop();
    const gen = ++this.generation;
    this.byId.clear();
    this.loaded = false;
    try {
      const all = await api('/v1/approvals?status=all&limit=50');
      if (gen !== this.generation) return;
      for (const a of all || []) this.put(a);
    } catch (e) {
      if (gen !== this.generation) return;
      if (e.status === 401 || e.status === 403) {
        this.setState(e.status === 401 ? 'unauthorized' : 'forbidden', e);
        return;
      }
      this.error = e;
    }
    this.loaded = true;
    this.notify();
    this.stream = eventStream('/v1/approvals/stream', {
      onEvent: (name, data) => {
        if (name === 'approval' && data && typeof data === 'object') this.put(data);
      },
      onState: (state, err) => this.setState(state, err),
    });
  }

  stop() {
    this.generation += 1;
    this.stream?.stop();
    this.stream = null;
    this.state = 'off';
  }

  /** POST a decision; the answer replaces the request here at once (the stream confirms it). */
  async decide(id, decision) {
    const a = await api(`/v1/approvals/${encodeURIComponent(id)}/decision`, { method: 'POST', body: decision });
    this.fresh.delete(id);
    this.put(a);
    return a;
  }
}

function decidedMs(a) {
  if (typeof a.decided_at_ms === 'number') return a.decided_at_ms;
  if (!a.decided_at) return undefined;
  const t = Date.parse(a.decided_at);
  return Number.isNaN(t) ? undefined : t;
}

/** The one feed of this page. */
export const feed = new ApprovalFeed();
