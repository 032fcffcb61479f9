// The console in headless Chromium against a real `toolgate serve` (started by
// crates/toolgate-cli/tests/console.rs): sign in with a token, approvals arriving live and
// decided by click, by typed confirmation and by keyboard, the retried calls completing, the
// audit page's chain verification before and after tampering, the health page, and a
// screenshot of every page. Exits non-zero on the first failed check.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { assert, cfg, http, call, callNeedingApproval, startMcpClient, launch, watchErrors, shot, texts, until, keys, step } = require('./lib.cjs');

async function signIn(page) {
  step('an anonymous visitor sees the tools of its role');
  await page.goto(`${cfg.url}/`);
  await page.locator('#tools-table').waitFor();
  assert.match(await page.locator('.page-head .sub').textContent(), /^\d+ tools visible to role default$/);
  const shellRow = page.locator('tr.row[data-key="shell"]');
  assert.deepEqual(await texts(page, 'tr.row[data-key="shell"] .tool-id, tr.row[data-key="shell"] td:nth-child(n+2):nth-child(-n+5)'),
    ['shell', 'dangerous', 'builtin', 'available', '—']);
  await shellRow.waitFor();

  step('approvals need an operator: the page asks for a token');
  await keys(page, 'g', 'a');
  await page.locator('#use-operator-token').click();
  await page.locator('#token-input').fill('not-a-real-token');
  await page.locator('#token-input').press('Enter');
  await until(page, () => document.querySelector('#token-reason')?.textContent.includes('refused'));
  assert.equal(await page.locator('#token-reason').textContent(), 'The token was refused: unknown bearer token');
  await shot(page, 'token');
  await page.locator('#token-input').fill(cfg.operatorToken);
  await page.getByRole('button', { name: 'Use token' }).click();
  await page.locator('#whoami .who-name', { hasText: 'ops' }).waitFor();
  assert.deepEqual(await texts(page, '#whoami > div'), ['ops', 'role default · operator']);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('toolgate.token')), cfg.operatorToken);
  await page.locator('#live[data-state="live"]').waitFor();
}

async function approvals(page) {
  step('an approval requested by an MCP client appears without a reload');
  await page.locator('.empty-title', { hasText: 'Nothing waiting' }).waitFor();
  await page.evaluate(() => { window.__sameDocument = 'still here'; });
  const mcp = startMcpClient();
  const mcpCard = page.locator('.card[data-tool="write_file"]');
  await Promise.race([
    mcpCard.waitFor({ timeout: 90000 }),
    mcp.done.then((r) => { throw new Error(`the MCP client finished without waiting for approval: ${JSON.stringify(r)}`); }),
  ]);
  assert.equal(await page.evaluate(() => window.__sameDocument), 'still here');
  assert.equal(await page.locator('#pending-count').textContent(), '1');
  const meta = await texts(page, '.card[data-tool="write_file"] .meta-item');
  assert.match(meta[3], /^requested \d\d:\d\d:\d\d$/);
  const mcpId = await mcpCard.getAttribute('data-key');
  assert.deepEqual([meta[0], meta[2], meta[4]], ['principal visitor', 'role default', `id ${mcpId}`]);
  assert.match(meta[1], /^session \S+$/);
  assert.deepEqual(JSON.parse(await mcpCard.locator('pre.args').textContent()), { path: 'out.txt', content: 'written over MCP' });
  assert.match(await mcpCard.locator('.countdown').textContent(), /^\d+:\d\d$/);

  step('Approve once by click; the waiting MCP call completes');
  await mcpCard.getByRole('button', { name: 'Approve once' }).click();
  await mcpCard.waitFor({ state: 'detached' });
  const report = await mcp.done;
  assert.equal(report.write.is_error, false, JSON.stringify(report));
  assert.ok(report.progress.some((p) => p.message.includes(mcpId)), JSON.stringify(report.progress));
  assert.equal(fs.readFileSync(path.join(cfg.workspace, 'out.txt'), 'utf8'), 'written over MCP');
  const byClick = (await http('GET', `/v1/approvals/${mcpId}`, cfg.operatorToken)).body;
  assert.deepEqual([byClick.status, byClick.decided_by, byClick.scope, byClick.consumed], ['approved', 'ops', 'once', true]);
  await page.locator(`#recent-decisions tr[data-id="${mcpId}"]`).waitFor();

  step('approvals requested over the HTTP API appear too');
  const writeArgs = { path: 'notes/hello.txt', content: 'hello from the console test' };
  const writeId = await callNeedingApproval('write_file', writeArgs);
  const writeCard = page.locator(`.card[data-key="${writeId}"]`);
  await writeCard.waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), 'still here');
  assert.deepEqual((await texts(page, `.card[data-key="${writeId}"] .meta-item`)).filter((_, i) => i !== 3),
    ['principal agent', 'session console-test', 'role default', `id ${writeId}`]);
  assert.deepEqual(JSON.parse(await writeCard.locator('pre.args').textContent()), writeArgs);

  const shellArgs = { command: 'echo approved-by-console' };
  const shellId = await callNeedingApproval('shell', shellArgs);
  const shellCard = page.locator(`.card[data-key="${shellId}"]`);
  await shellCard.waitFor();
  assert.equal(await page.locator('#pending-count').textContent(), '2');
  await shot(page, 'approvals');

  step('Approve once by click; the retried API call completes');
  await writeCard.getByRole('button', { name: 'Approve once' }).click();
  await writeCard.waitFor({ state: 'detached' });
  const written = await call('write_file', writeArgs);
  assert.equal(written.ok, true, JSON.stringify(written));
  assert.equal(fs.readFileSync(path.join(cfg.workspace, 'notes/hello.txt'), 'utf8'), writeArgs.content);
  const decided = (await http('GET', `/v1/approvals/${writeId}`, cfg.operatorToken)).body;
  assert.deepEqual([decided.status, decided.decided_by, decided.scope, decided.consumed], ['approved', 'ops', 'once', true]);
  await page.locator(`#recent-decisions tr[data-id="${writeId}"]`).waitFor();

  step('a dangerous tool is approved only after its name is typed');
  const approveShell = shellCard.getByRole('button', { name: 'Approve once' });
  assert.equal(await approveShell.isDisabled(), true);
  const confirm = shellCard.getByLabel('Type shell to confirm');
  await confirm.fill('shel');
  assert.equal(await approveShell.isDisabled(), true);
  await confirm.fill('shell');
  assert.equal(await approveShell.isDisabled(), false);
  await approveShell.click();
  await shellCard.waitFor({ state: 'detached' });
  const ran = await call('shell', shellArgs);
  assert.equal(ran.ok, true, JSON.stringify(ran));
  assert.match(JSON.stringify(ran.data), /approved-by-console/);
  assert.equal(await page.locator('#pending-count').isHidden(), true);
}

async function keyboard(page) {
  step('keyboard: j/k select, d denies, a approves');
  const first = await callNeedingApproval('write_file', { path: 'k/first.txt', content: '1' });
  const second = await callNeedingApproval('write_file', { path: 'k/second.txt', content: '2' });
  await page.locator(`.card[data-key="${second}"]`).waitFor();
  const selected = () => page.locator('.card.selected').getAttribute('data-key');
  await keys(page, 'j');
  await keys(page, 'j');
  assert.equal(await selected(), second);
  await keys(page, 'k');
  assert.equal(await selected(), first);
  await keys(page, 'd');
  await page.locator(`.card[data-key="${first}"]`).waitFor({ state: 'detached' });
  assert.equal(await selected(), second);
  await keys(page, 'a');
  await page.locator(`.card[data-key="${second}"]`).waitFor({ state: 'detached' });
  const statuses = await Promise.all([first, second].map(async (id) => {
    const a = (await http('GET', `/v1/approvals/${id}`, cfg.operatorToken)).body;
    return [a.status, a.decided_by];
  }));
  assert.deepEqual(statuses, [['denied', 'ops'], ['approved', 'ops']]);
  assert.equal((await call('write_file', { path: 'k/second.txt', content: '2' })).ok, true);

  step('keyboard: g t, / filters, j and Enter open a definition');
  await keys(page, 'g', 't');
  await page.locator('#tools-table').waitFor();
  assert.equal(await page.evaluate(() => location.hash), '#/tools');
  await keys(page, '/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tools-filter');
  await page.keyboard.type('write_file');
  const tools = (await http('GET', '/v1/tools', cfg.operatorToken)).body;
  const mentioning = tools.filter((t) => `${t.name} ${t.title || ''} ${t.description}`.toLowerCase().includes('write_file'))
    .map((t) => t.name).sort();
  assert.ok(mentioning.includes('write_file') && mentioning.length < tools.length, JSON.stringify(mentioning));
  assert.deepEqual(await texts(page, 'tr.row .tool-id'), mentioning);
  await keys(page, 'Escape', ...mentioning.slice(0, mentioning.indexOf('write_file') + 1).map(() => 'j'), 'Enter');
  assert.equal(await page.locator('tr.row.selected').getAttribute('data-key'), 'write_file');
  await page.locator('tr.detail h3', { hasText: 'Input schema' }).waitFor();
  assert.match(await page.locator('tr.detail pre.json').last().textContent(), /"path"/);
  // The definition check: exactly the API's findings, each with its fix.
  const findings = (await http('GET', '/v1/tools/write_file', cfg.operatorToken)).body.lint;
  assert.ok(Array.isArray(findings), 'GET /v1/tools/{name} carries `lint`');
  assert.equal(await page.locator('tr.detail li.lint-finding').count(), findings.length);
  assert.deepEqual(await page.locator('tr.detail li.lint-finding').evaluateAll((li) => li.map((e) => e.dataset.rule)),
    findings.map((f) => f.rule));
  if (!findings.length) await page.locator('tr.detail .lint-none').waitFor();
  await page.locator('#tools-filter').fill('');
  await keys(page, 'Escape');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'tools');
}

async function audit(page) {
  step('audit: records, filters, verify intact');
  await keys(page, 'g', 'u');
  await page.locator('#audit-table').waitFor();
  await shot(page, 'audit');
  await page.locator('#audit-tool').fill('shell');
  await until(page, () => {
    const tools = [...document.querySelectorAll('#audit-table tr.row td:nth-child(3)')].map((td) => td.textContent);
    return tools.length > 0 && tools.every((t) => t === 'shell');
  });
  const outcomes = await texts(page, '#audit-table tr.row td:nth-child(5) .pill');
  assert.deepEqual([...new Set(outcomes)].sort(), ['approval_required', 'ok', 'started']);
  await page.locator('#audit-table tr.row').first().click();
  assert.equal(JSON.parse(await page.locator('#audit-table tr.detail pre').textContent()).tool, 'shell');
  await page.locator('#verify-chain').click();
  await page.locator('.verdict-ok').waitFor();
  assert.equal(await page.locator('.verdict-title').textContent(), 'Chain intact');

  step('audit: a tampered line shows as broken, with the line and the reason');
  const lines = fs.readFileSync(cfg.auditFile, 'utf8').split('\n');
  assert.match(lines[1], /"ts":"[^"]*\d(Z|\+00:00)"/);
  lines[1] = lines[1].replace(/("ts":"[^"]*)(\d)(Z|\+00:00)"/, (_, head, digit, tz) => `${head}${(Number(digit) + 1) % 10}${tz}"`);
  fs.writeFileSync(cfg.auditFile, lines.join('\n'));
  await page.locator('#verify-chain').click();
  await page.locator('.verdict-bad').waitFor();
  const server = (await http('POST', '/v1/audit/verify', cfg.operatorToken)).body;
  assert.equal(server.first_bad.line, 2);
  assert.deepEqual(await texts(page, '.verdict-bad .verdict-title, .verdict-bad .verdict-body'), [
    'Chain broken at line 2',
    `${server.first_bad.reason} (seq ${server.first_bad.seq})`,
  ]);
  await shot(page, 'audit-broken');
}

async function health(page) {
  step('health: status, readiness, listen address, caller, servers');
  await keys(page, 'g', 'h');
  await page.locator('#health-status .tile-value', { hasText: 'ok' }).waitFor();
  await page.locator('#health-ready .tile-value', { hasText: 'ready' }).waitFor();
  assert.deepEqual(await texts(page, '#health-me .tile-value, #health-me .tile-sub'), ['ops', 'role default · operator']);
  assert.equal(await page.locator('#mcp-servers').textContent(), 'no MCP servers configured');
  assert.equal(await page.locator('#health-listen .tile-value').textContent(), new URL(cfg.url).host);
  await shot(page, 'health');
}

async function tokens(page) {
  step('tokens: issue one in the form, use it, revoke it with a click');
  await keys(page, 'g', 'k');
  await page.locator('#tokens-list .empty-title', { hasText: 'No tokens issued' }).waitFor();
  await page.fill('#new-token-principal', 'console-made');
  await page.fill('#new-token-role', 'readonly');
  await page.fill('#new-token-note', 'made in the browser');
  await page.click('#token-create button[type=submit]');
  const made = (await page.locator('#issued-token').textContent()).trim();
  assert.match(made, /^tg_[0-9a-f]{64}$/);
  const me = await http('GET', '/v1/me', made);
  assert.deepEqual([me.status, me.body.principal, me.body.role], [200, 'console-made', 'readonly']);
  const row = page.locator('#tokens-table tbody tr', { hasText: 'console-made' });
  await row.waitFor();
  assert.equal(await row.getAttribute('data-state'), 'active');
  assert.ok(!(await page.locator('#tokens-table').textContent()).includes(made), 'the list never shows a token');
  await shot(page, 'tokens');
  await row.locator('button.revoke').click();
  await page.locator('#tokens-table tbody tr[data-state=revoked]', { hasText: 'console-made' }).waitFor();
  const after = await http('GET', '/v1/me', made);
  assert.equal(after.status, 401, JSON.stringify(after.body));
}

async function main() {
  const { context, close } = await launch();
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(15000);
    const errors = watchErrors(page);
    await signIn(page);
    await approvals(page);
    await keyboard(page);
    await audit(page);
    await health(page);
    await tokens(page);
    step('light theme');
    await page.emulateMedia({ colorScheme: 'light' });
    await keys(page, 'g', 'a');
    await page.locator('#recent-decisions table').waitFor();
    await shot(page, 'approvals-light');
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
  process.stdout.write('console test: all checks passed\n');
}

main().catch((e) => {
  process.stderr.write(`console test failed: ${e.stack || e}\n`);
  process.exit(1);
});
