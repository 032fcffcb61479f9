// Pins and federated MCP servers in the console (run by crates/toolgate-cli/tests/console.rs
// against a `toolgate serve` federating three MCP servers: `py`, the Python SDK peer, whose
// `add` was pinned with another definition (so it is quarantined) while its other tools are
// pinned on first sight; `gone`, whose command does not exist; `off`, disabled). The Tools
// page's Pin column, the Health page's MCP servers panel and the Dashboard's MCP servers
// (from /metrics) must show what the API says.
'use strict';

const { assert, cfg, http, launch, watchErrors, shot, texts, step } = require('./lib.cjs');

const ADD = 'mcp__py__add';

/** Polls `/v1/ready` as the operator until `py` is ready and `gone` has failed. */
async function settledServers() {
  const deadline = Date.now() + 90000;
  for (;;) {
    const r = await http('GET', '/v1/ready', cfg.operatorToken);
    const servers = r.body.mcp_servers || r.body.error?.details?.mcp_servers || [];
    const state = Object.fromEntries(servers.map((s) => [s.name, s.state]));
    if (state.py === 'ready' && state.gone === 'failed') return servers;
    if (Date.now() > deadline) throw new Error(`the MCP servers did not settle: ${JSON.stringify(r.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main() {
  const servers = await settledServers();
  assert.deepEqual(servers.map((s) => [s.name, s.transport, s.state]),
    [['py', 'stdio', 'ready'], ['gone', 'stdio', 'failed'], ['off', 'stdio', 'disabled']]);
  const tools = (await http('GET', '/v1/tools', cfg.operatorToken)).body;
  const pyTools = tools.filter((t) => t.source === 'mcp:py');
  assert.equal(servers[0].tools, pyTools.length);
  const add = pyTools.find((t) => t.name === ADD);
  assert.equal(add?.pin?.state, 'quarantined', JSON.stringify(add));
  assert.match(add.pin.hash, /^[0-9a-f]{12}$/);
  const others = pyTools.filter((t) => t.name !== ADD);
  assert.ok(others.length > 0 && others.every((t) => t.pin.state === 'pinned' && /^[0-9a-f]{12}$/.test(t.pin.hash)),
    JSON.stringify(others));

  const { context, close } = await launch();
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(15000);
    const errors = watchErrors(page);

    step('health, anonymous visitor: the servers are for operators');
    await page.goto(`${cfg.url}/#/health`);
    await page.locator('#mcp-servers p', { hasText: 'MCP server status is shown to operators' }).waitFor();

    step('health, operator: name, transport, state (down with its error), tool count');
    await page.evaluate((token) => sessionStorage.setItem('toolgate.token', token), cfg.operatorToken);
    await page.reload();
    // `gone` is retried with backoff: between attempts it is down, with the last error.
    await page.locator('#mcp-table tr[data-key="gone"] td', { hasText: 'down' }).waitFor();
    const gone = servers[1];
    assert.ok(gone.error, JSON.stringify(gone));
    assert.deepEqual(await texts(page, '#mcp-table tbody tr td'), [
      'py', 'stdio', 'ready', String(pyTools.length),
      'gone', 'stdio', `down — ${gone.error}`.replace(/\s+/g, ' ').trim(), '0',
      'off', 'stdio', 'disabled', '0',
    ]);
    assert.equal(await page.locator('#mcp-table tr[data-key="gone"] .avail').getAttribute('class'), 'avail avail-bad');
    await shot(page, 'health-mcp');

    step('tools: the Pin column shows quarantined, pinned and built-in tools');
    await page.goto(`${cfg.url}/#/tools`);
    await page.locator('#tools-table').waitFor();
    const pinOf = (name) => texts(page, `tr.row[data-key="${name}"] td.pin`);
    assert.deepEqual(await pinOf(ADD), [`quarantined ${add.pin.hash}`]);
    assert.equal(await page.locator(`tr.row[data-key="${ADD}"] td.pin .pill`).getAttribute('class'), 'pill outcome-bad');
    assert.match(await page.locator(`tr.row[data-key="${ADD}"] td.pin`).getAttribute('title'),
      new RegExp(`^quarantined: definition changed since pinned .*toolgate tools approve-change ${ADD}`));
    assert.deepEqual(await pinOf(others[0].name), [`pinned ${others[0].pin.hash}`]);
    assert.deepEqual(await pinOf('shell'), ['—']);

    step('tools: the filter finds quarantined tools; the definition says what was pinned');
    await page.locator('#tools-filter').fill('quarantined');
    assert.deepEqual(await texts(page, 'tr.row .tool-id'), [ADD]);
    await page.locator(`tr.row[data-key="${ADD}"]`).click();
    const detail = page.locator('tr.detail .pin-detail');
    await detail.waitFor();
    const shown = (await http('GET', `/v1/tools/${ADD}`, cfg.operatorToken)).body.pin;
    assert.equal(shown.pinned_by, 'first sight');
    assert.notEqual(shown.pinned_hash, shown.hash);
    assert.equal((await detail.textContent()).replace(/\s+/g, ' ').trim(),
      `Quarantined: the definition now served (sha256 ${shown.hash}…) differs from the one sha256 ${shown.pinned_hash}… pinned ${shown.since} by first sight. Review and approve it with toolgate tools approve-change ${ADD}.`);
    await shot(page, 'tools-pins');

    step('dashboard: each MCP server up or down, from toolgate_mcp_server_up in /metrics');
    await page.goto(`${cfg.url}/#/dashboard`);
    await page.locator('#dash-mcp-table tr[data-key="gone"]').waitFor();
    assert.deepEqual(await texts(page, '#dash-mcp-table tbody tr[data-key="py"] td, #dash-mcp-table tbody tr[data-key="off"] td'),
      ['off', 'down', 'disabled', 'py', 'up', 'ready']);
    assert.deepEqual(await texts(page, '#dash-mcp-table tbody tr td:first-child'), ['gone', 'off', 'py']);
    assert.deepEqual((await texts(page, '#dash-mcp-table tr[data-key="gone"] td')).slice(0, 2), ['gone', 'down']);
    assert.equal(await page.locator('#dash-mcp-table tr[data-key="gone"]').getAttribute('data-up'), '0');
    assert.equal(await page.locator('#dash-mcp-table tr[data-key="py"] .avail').getAttribute('class'), 'avail avail-ok');
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
  process.stdout.write('console pins test: all checks passed\n');
}

main().catch((e) => {
  process.stderr.write(`console pins test failed: ${e.stack || e}\n`);
  process.exit(1);
});
