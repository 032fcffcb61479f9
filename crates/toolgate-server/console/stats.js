// stats.js — the Dashboard's numbers from parsed /metrics: a snapshot of one poll (calls by
// tool and outcome, the call-duration buckets of every tool added up, approvals waiting, MCP
// servers up), and the window between two snapshots: calls per second, errors, and p50/p99
// from the bucket deltas, interpolated linearly inside the bucket as Prometheus'
// histogram_quantile does.

import { number, samples } from './metrics.js';

/** What one poll of /metrics says; `at` is when it was read (performance.now() ms). */
export function snapshot(families, at) {
  const byTool = new Map();
  const byOutcome = new Map();
  let total = 0;
  for (const s of samples(families, 'toolgate_calls_total')) {
    const tool = s.labels.gen_ai_tool_name ?? '';
    const outcome = s.labels.toolgate_outcome ?? '';
    total += s.value;
    byOutcome.set(outcome, (byOutcome.get(outcome) || 0) + s.value);
    const t = byTool.get(tool) || { tool, calls: 0, errors: 0 };
    t.calls += s.value;
    if (outcome !== 'ok') t.errors += s.value;
    byTool.set(tool, t);
  }
  const le = new Map();
  for (const s of samples(families, 'toolgate_call_duration_seconds_bucket')) {
    const bound = number(s.labels.le ?? '');
    if (bound !== null && !Number.isNaN(bound)) le.set(bound, (le.get(bound) || 0) + s.value);
  }
  const pending = samples(families, 'toolgate_approvals_pending');
  return {
    at,
    total,
    errors: total - (byOutcome.get('ok') || 0),
    byTool,
    byOutcome,
    buckets: [...le.entries()].sort((a, b) => a[0] - b[0]),
    pending: pending.length ? pending.reduce((n, s) => n + s.value, 0) : null,
    mcp: families.has('toolgate_mcp_server_up')
      ? samples(families, 'toolgate_mcp_server_up').map((s) => ({
        name: s.labels.toolgate_mcp_server ?? '', state: s.labels.toolgate_mcp_server_state ?? '', up: s.value === 1,
      })).sort((a, b) => a.name.localeCompare(b.name))
      : [],
  };
}

/**
 * The window from `prev` to `cur`: {cumulative, secs, calls, errors, rate, p50, p99}. With no
 * `prev` (the first poll) it is everything since the server started, and `rate` is null. A
 * counter that went down means the server restarted: the window then starts from zero.
 */
export function windowOf(cur, prev) {
  const reset = prev && (cur.total < prev.total || cur.buckets.some(([le, n]) => n < countAt(prev.buckets, le)));
  const base = prev && !reset ? prev : null;
  const buckets = cur.buckets.map(([le, n]) => [le, n - (base ? countAt(base.buckets, le) : 0)]);
  const calls = cur.total - (base ? base.total : 0);
  const secs = base ? Math.max((cur.at - base.at) / 1000, 0.001) : null;
  return {
    cumulative: !base,
    secs,
    calls,
    errors: cur.errors - (base ? base.errors : 0),
    rate: secs ? calls / secs : null,
    p50: quantile(buckets, 0.5),
    p99: quantile(buckets, 0.99),
  };
}

function countAt(buckets, le) {
  const b = buckets.find(([x]) => x === le);
  return b ? b[1] : 0;
}

/**
 * The q-quantile (0..1) of cumulative buckets [[le, count], …] sorted by le, the last +Inf:
 * the bucket holding the rank, linearly between its lower and upper bound (the first bucket
 * from 0). A rank in the +Inf bucket is the highest finite bound. Null with no observations.
 */
export function quantile(buckets, q) {
  if (!buckets.length) return null;
  const total = buckets[buckets.length - 1][1];
  if (!(total > 0)) return null;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of buckets) {
    if (count >= rank && count > below) {
      if (le === Infinity) return lower;
      return lower + (le - lower) * ((rank - below) / (count - below));
    }
    lower = le === Infinity ? lower : le;
    below = count;
  }
  return lower;
}

/** The `n` tools with the most calls, most first (ties by name). */
export function busiest(snap, n = 5) {
  return [...snap.byTool.values()].sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool)).slice(0, n);
}

/** Calls by error code (every outcome but `ok`) with at least one call, most first. */
export function errorCodes(snap) {
  return [...snap.byOutcome.entries()].filter(([code, n]) => code !== 'ok' && n > 0)
    .map(([code, calls]) => ({ code, calls })).sort((a, b) => b.calls - a.calls || a.code.localeCompare(b.code));
}
