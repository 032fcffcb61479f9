// api.js — the console's only way to the server: requests to /v1 and /metrics with the
// bearer token (kept in sessionStorage, so it dies with the tab), and a server-sent-events
// reader.
//
// The stream is read with fetch() rather than EventSource because EventSource cannot send an
// Authorization header, and tokens must never travel in URLs. The wire format is the same
// text/event-stream; the reader reconnects with backoff like EventSource does.

const TOKEN_KEY = 'toolgate.token';

/** An answer other than 2xx, carrying the server's error body `{error: {code, message, …}}`. */
export class ApiError extends Error {
  constructor(status, body, fallback) {
    const e = (body && body.error) || {};
    super(e.message || fallback || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || (status === 0 ? 'unreachable' : 'http_' + status);
    this.hint = e.hint || '';
    this.body = body;
  }
}

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(value) {
  const t = value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const authListeners = new Set();

/** `fn(err)` runs whenever the server answers 401: the caller needs (another) token. */
export function onUnauthorized(fn) {
  authListeners.add(fn);
}

function headers(accept) {
  const h = { Accept: accept };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

/**
 * GET or POST `path`; resolves to the parsed JSON (or, with `as: 'text'`, the body as it
 * came, e.g. /metrics), rejects with an ApiError.
 */
export async function api(path, { method = 'GET', body, signal, as = 'json' } = {}) {
  const h = headers(as === 'text' ? 'text/plain' : 'application/json');
  if (body !== undefined) h['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, null, `the server did not answer (${e.message})`);
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data, text.slice(0, 200) || res.statusText);
    if (res.status === 401) authListeners.forEach((fn) => fn(err));
    throw err;
  }
  return as === 'text' ? text : data;
}

/** Builds `path?k=v&…` from the non-empty entries of `params`. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads the event stream at `path` until stopped: `onEvent(name, data)` per event (data
 * parsed as JSON when it is JSON), `onState(state, err?)` with `connecting` | `live` |
 * `retrying` | `forbidden` | `unauthorized`. After a 401 or 403 it stops retrying until
 * `restart()` (a new token).
 */
export function eventStream(path, { onEvent, onState }) {
  let stopped = false;
  let ctrl = null;
  let generation = 0;

  async function loop(gen) {
    let delay = 500;
    while (!stopped && gen === generation) {
      ctrl = new AbortController();
      onState('connecting');
      try {
        const res = await fetch(path, { headers: headers('text/event-stream'), signal: ctrl.signal, cache: 'no-store', credentials: 'omit' });
        if (res.status === 401 || res.status === 403) {
          const body = await res.json().catch(() => null);
          const err = new ApiError(res.status, body);
          if (res.status === 401) authListeners.forEach((fn) => fn(err));
          onState(res.status === 401 ? 'unauthorized' : 'forbidden', err);
          return;
        }
        if (!res.ok || !res.body) throw new ApiError(res.status, null, `stream answered HTTP ${res.status}`);
        onState('live');
        delay = 500;
        await readEvents(res.body, onEvent);
      } catch (e) {
        if (stopped || gen !== generation) return;
        if (e.name !== 'AbortError') console.debug('approval stream:', e.message);
      }
      if (stopped || gen !== generation) return;
      onState('retrying');
      await sleep(delay);
      delay = Math.min(delay * 2, 8000);
    }
  }

  loop(generation);
  return {
    stop() {
      stopped = true;
      ctrl?.abort();
    },
    restart() {
      stopped = false;
      generation += 1;
      ctrl?.abort();
      loop(generation);
    },
  };
}

/** Parses text/event-stream blocks: `event:` names, `data:` lines, `:` comments skipped. */
async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf = (buf + value).replace(/\r\n?/g, '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (!line || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') name = val;
        else if (field === 'data') data.push(val);
      }
      if (!data.length) continue;
      const text = data.join('\n');
      let parsed = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
      onEvent(name, parsed);
    }
  }
}
