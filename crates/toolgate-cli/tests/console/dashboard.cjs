// The Dashboard in headless Chromium against a fresh `toolgate serve` (started by
// crates/toolgate-cli/tests/console.rs, no MCP servers): the metrics parser and the window
// arithmetic on known input, then known calls over /v1/calls (5 ok, 2 to a tool that does
// not exist) and the live page showing exactly them without a reload, an approval request
// moving the approvals gauge, and steady traffic for the sparklines and the screenshot.
// Exits non-zero on the first failed check.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { assert, cfg, http, call, keys, launch, watchErrors, shot, texts, until, step } = require('./lib.cjs');

const OK_TOOL = 'list_dir';
const MISSING = 'no_such_tool';
// Metrics count every tool the catalog lacks under one name (docs/telemetry.md).
const UNKNOWN = '_unknown';

/** The text of the value in the tile `id`. */
async function tileValue(page, id) {
  return (await page.locator(`#${id} .tile-value`).textContent()).trim();
}

/** Waits until the page has polled /metrics after now (so what it shows is at least this fresh). */
async function nextPoll(page) {
  const seen = Number(await page.locator('#dash-tiles').getAttribute('data-polls'));
  await until(page, (n) => Number(document.querySelector('#dash-tiles')?.dataset.polls) > n, seen);
}

/** Waits until the tile `id` shows `text`. */
async function tileShows(page, id, text) {
  await until(page, ([i, t]) => document.querySelector(`#${i} .tile-value`)?.textContent.trim() === t, [id, text]);
}

async function parserAndArithmetic(page) {
  step('the parser and the window arithmetic on known input (the modules the page runs)');
  const got = await page.evaluate(async () => {
    const { parse } = await import('/assets/metrics.js');
    const { quantile, snapshot, windowOf } = await import('/assets/stats.js');
    const round = (x) => Math.round(x * 1e9) / 1e9;
    const text = [
      '# HELP toolgate_calls_total Tool calls \\\\ by tool\\nand outcome',
      '# TYPE toolgate_calls_total counter',
      'toolgate_calls_total{gen_ai_tool_name="say \\"hi\\"\\n",toolgate_outcome="ok",toolgate_role="a\\\\b"} 3',
      'toolgate_calls_total{ gen_ai_tool_name = "x" , toolgate_outcome="forbidden", } 2 1700000000000',
      '# TYPE toolgate_call_duration_seconds histogram',
      'toolgate_call_duration_seconds_bucket{le="+Inf"} 5',
      'toolgate_call_duration_seconds_bucket{le="0.1"} 4',
      'toolgate_call_duration_seconds_bucket{le="0.01"} 0',
      'toolgate_call_duration_seconds_sum 0.3',
      'toolgate_call_duration_seconds_count 5',
      'odd NaN',
      'odd{k="-"} -Inf',
    ].join('\n');
    const fams = parse(text);
    const calls = fams.get('toolgate_calls_total');
    const hist = fams.get('toolgate_call_duration_seconds');
    const snap = snapshot(fams, 0);
    const later = { ...snap, at: 2000, total: 9, errors: 3, buckets: [[0.01, 2], [0.1, 8], [Infinity, 9]] };
    const win = windowOf(later, snap);
    let bad = '';
    try { parse('x{a="1"} one'); } catch (e) { bad = e.message; }
    return {
      families: [...fams.keys()],
      help: calls.help,
      labels: calls.samples.map((s) => s.labels),
      values: calls.samples.map((s) => s.value),
      histogram: [hist.type, hist.samples.map((s) => `${s.name}${s.labels.le ? ` le=${s.labels.le}` : ''} ${s.value}`)],
      odd: fams.get('odd').samples.map((s) => String(s.value)),
      snap: [snap.total, snap.errors, snap.buckets.map(([le, n]) => [String(le), n])],
      win: [win.cumulative, win.secs, win.calls, win.errors, win.rate, round(win.p50), round(win.p99)],
      cumulative: round(windowOf(snap, null).p50),
      q: [quantile([[0.1, 10], [Infinity, 20]], 0.99), quantile([[1, 0], [Infinity, 0]], 0.5)],
      bad,
    };
  });
  assert.deepEqual(got, {
    families: ['toolgate_calls_total', 'toolgate_call_duration_seconds', 'odd'],
    help: 'Tool calls \\ by tool\nand outcome',
    labels: [
      { gen_ai_tool_name: 'say "hi"\n', toolgate_outcome: 'ok', toolgate_role: 'a\\b' },
      { gen_ai_tool_name: 'x', toolgate_outcome: 'forbidden' },
    ],
    values: [3, 2],
    histogram: ['histogram', [
      'toolgate_call_duration_seconds_bucket le=+Inf 5',
      'toolgate_call_duration_seconds_bucket le=0.1 4',
      'toolgate_call_duration_seconds_bucket le=0.01 0',
      'toolgate_call_duration_seconds_sum 0.3',
      'toolgate_call_duration_seconds_count 5',
    ]],
    odd: ['NaN', '-Infinity'],
    snap: [5, 2, [['0.01', 0], ['0.1', 4], ['Infinity', 5]]],
    // 4 more calls in 2 s, 1 more error; cumulative bucket deltas [2, 4, 4]: p50 is rank 2
    // → 0.01, p99 is rank 3.96 → 0.01 + 0.09 × (3.96 − 2) / (4 − 2) = 0.0982.
    win: [false, 2, 4, 1, 2, 0.01, 0.0982],
    // Since start (no previous poll): rank 2.5 of [0, 4, 5] → 0.01 + 0.09 × 2.5 / 4.
    cumulative: 0.06625,
    // A rank in the +Inf bucket is the highest finite bound; no observations, no quantile.
    q: [0.1, null],
    bad: 'metrics line 1: bad value one: x{a="1"} one',
  });
}

async function signIn(page) {
  step('g d opens the dashboard; an anonymous visitor is told it is for operators');
  await page.goto(`${cfg.url}/`);
  await page.locator('#tools-table').waitFor();
  await keys(page, 'g', 'd');
  await page.locator('.notice strong', { hasText: 'Operator access needed' }).waitFor();
  assert.deepEqual(await page.evaluate(() => [location.hash, document.title]), ['#/dashboard', 'Dashboard · toolgate']);
  assert.equal(await page.locator('.nav-item[aria-current="page"]').getAttribute('data-page'), 'dashboard');
  await page.getByRole('button', { name: 'Use an operator token' }).click();
  await page.locator('#token-input').fill(cfg.operatorToken);
  await page.getByRole('button', { name: 'Use token' }).click();
  await page.locator('#whoami .who-name', { hasText: 'ops' }).waitFor();
}

/** Every call this test made: by tool {calls, errors}, and by error code. */
const made = { total: 0, tools: new Map(), codes: new Map() };

/** POST /v1/calls as the agent, counted in `made`; the call's envelope. */
async function counted(tool, args) {
  const env = await call(tool, args);
  made.total += 1;
  // The metrics name a tool the catalog lacks `_unknown`.
  const label = env.ok || env.error.code !== 'unknown_tool' ? tool : UNKNOWN;
  const t = made.tools.get(label) || { calls: 0, errors: 0 };
  t.calls += 1;
  if (!env.ok) {
    t.errors += 1;
    made.codes.set(env.error.code, (made.codes.get(env.error.code) || 0) + 1);
  }
  made.tools.set(label, t);
  return env;
}

/** The busiest-tools table as it must read: the top 5 by calls (ties by name). */
function expectedTools() {
  return [...made.tools.entries()].sort((a, b) => b[1].calls - a[1].calls || a[0].localeCompare(b[0])).slice(0, 5)
    .flatMap(([tool, t]) => [tool, String(t.calls), String(t.errors)]);
}

/** The errors table's code and calls columns as they must read, most first. */
function expectedCodes() {
  return [...made.codes.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .flatMap(([code, n]) => [code, String(n)]);
}

async function knownCalls(page) {
  step('a fresh server: no calls, no errors, no MCP servers, nothing waiting');
  await until(page, () => Number(document.querySelector('#dash-tiles')?.dataset.polls) >= 1);
  assert.deepEqual(await texts(page, '.tile-label, .tile-value'), [
    'Total calls', '0', 'Calls / s', '—', 'Error rate', '—', 'Latency p50', '—', 'Latency p99', '—',
    'Approvals', '0',
  ]);
  assert.equal(await page.locator('#dash-tools .empty-title').textContent(), 'No calls yet');
  assert.equal(await page.locator('#dash-errors').textContent(), 'No calls yet');
  assert.equal(await page.locator('#dash-mcp').textContent(), 'no MCP servers configured');
  await nextPoll(page);
  assert.equal(await tileValue(page, 'dash-rate'), '0.00');

  step('5 ok calls and 2 to a tool that does not exist show up live');
  await page.evaluate(() => { window.__sameDocument = 'still here'; });
  for (let i = 0; i < 5; i++) {
    const r = await counted(OK_TOOL, { path: '.' });
    assert.equal(r.ok, true, JSON.stringify(r));
  }
  for (let i = 0; i < 2; i++) {
    const r = await counted(MISSING, {});
    assert.equal(r.error?.code, 'unknown_tool', JSON.stringify(r));
  }
  await tileShows(page, 'dash-total', '7');
  await nextPoll(page);
  assert.equal(await page.evaluate(() => window.__sameDocument), 'still here');
  assert.equal(await page.getByTestId('dash-total').textContent(), '7');
  assert.equal(await page.getByTestId('dash-total').getAttribute('data-value'), '7');
  assert.deepEqual(await texts(page, '#dash-errors-table tbody td:not(.share)'), ['unknown_tool', '2', '29%']);
  assert.equal(await page.locator('#dash-errors-table tr[data-key="unknown_tool"] td.calls').textContent(), '2');
  assert.deepEqual(await texts(page, '#dash-tools-table tbody td:not(.share)'), [OK_TOOL, '5', '0', UNKNOWN, '2', '2']);
  assert.deepEqual(await texts(page, '#dash-error-rate .tile-value, #dash-error-rate .tile-sub'), ['29%', '2 errors in 7 calls']);
  assert.equal(await tileValue(page, 'dash-approvals'), '0');
  assert.equal(await page.locator('#dash-mcp').textContent(), 'no MCP servers configured');
  const metrics = (await http('GET', '/metrics', cfg.operatorToken)).body;
  assert.match(metrics, new RegExp(`\ntoolgate_calls_total\\{gen_ai_tool_name="${UNKNOWN}",toolgate_outcome="unknown_tool",toolgate_role="default"\\} 2\n`));
}

async function approvalsGauge(page) {
  step('a call waiting for approval: approvals waiting 1, then 0 once denied');
  const env = await counted('write_file', { path: 'dash.txt', content: 'x' });
  assert.equal(env.error?.code, 'approval_required', JSON.stringify(env));
  await tileShows(page, 'dash-approvals', '1');
  await tileShows(page, 'dash-total', '8');
  assert.equal(await page.locator('#dash-approvals').getAttribute('class'), 'tile tone-warn');
  assert.deepEqual(await texts(page, '#dash-errors-table td.code, #dash-errors-table td.calls'), expectedCodes());
  const id = env.error.details.approval_id;
  const denied = await http('POST', `/v1/approvals/${id}/decision`, cfg.operatorToken, { approve: false, reason: 'dashboard test' });
  assert.equal(denied.status, 200, JSON.stringify(denied.body));
  await tileShows(page, 'dash-approvals', '0');
}

async function traffic(page) {
  step('steady traffic: calls per second, p50/p99 over the window, sparklines');
  fs.writeFileSync(path.join(cfg.workspace, 'notes.txt'), 'read by the dashboard test\n');
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      if (i % 9 === 8) await counted('read_file', { path: 'no/such/file.txt' });
      else if (i % 3) await counted('read_file', { path: 'notes.txt' });
      else await counted(OK_TOOL, { path: '.' });
      // Bursts and lulls, so the sparklines have a shape.
      await new Promise((resolve) => setTimeout(resolve, 40 + 260 * (1 + Math.sin(i / 5)) / 2));
    }
  })();
  try {
    for (let i = 0; i < 8; i++) await nextPoll(page);
    await until(page, () => document.querySelector('#dash-p99 .tile-value')?.dataset.value !== '');
    const rate = Number(await page.getByTestId('dash-rate').getAttribute('data-value'));
    assert.ok(rate > 0 && rate < 100, `calls per second: ${rate}`);
    assert.match(await tileValue(page, 'dash-rate'), /^\d+\.\d\d$/);
    assert.match(await tileValue(page, 'dash-p50'), /^\d+(\.\d)? (µs|ms|s)$/);
    assert.match(await tileValue(page, 'dash-p99'), /^\d+(\.\d)? (µs|ms|s)$/);
    assert.match(await page.locator('#dash-p99 .tile-sub').textContent(), /^last \d+\.\d s · \d+ calls?$/);
    const p50 = Number(await page.getByTestId('dash-p50').getAttribute('data-value'));
    const p99 = Number(await page.getByTestId('dash-p99').getAttribute('data-value'));
    assert.ok(p50 > 0 && p50 <= p99 && p99 <= 300, `p50 ${p50}, p99 ${p99}`);
    assert.equal(await page.locator('#dash-rate-chart path.spark-line').count(), 1);
    assert.equal(await page.locator('#dash-p99-chart path.spark-line').count(), 1);
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'dashboard');
  } finally {
    running = false;
    await loop;
  }

  step('after the traffic every number is still exact');
  await tileShows(page, 'dash-total', String(made.total));
  await nextPoll(page);
  assert.deepEqual(await texts(page, '#dash-tools-table tbody td:not(.share)'), expectedTools());
  assert.deepEqual(await texts(page, '#dash-errors-table td.code, #dash-errors-table td.calls'), expectedCodes());
  const errors = [...made.codes.values()].reduce((a, b) => a + b, 0);
  assert.equal(await page.locator('#dash-error-rate .tile-sub').textContent(), `${errors} errors in ${made.total} calls`);
}

async function main() {
  const { context, close } = await launch();
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(15000);
    const errors = watchErrors(page);
    await signIn(page);
    await parserAndArithmetic(page);
    await knownCalls(page);
    await approvalsGauge(page);
    await traffic(page);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
  process.stdout.write('console dashboard test: all checks passed\n');
}

main().catch((e) => {
  process.stderr.write(`console dashboard test failed: ${e.stack || e}\n`);
  process.exit(1);
});
