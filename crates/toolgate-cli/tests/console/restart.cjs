// The restart case of the console (started twice by crates/toolgate-cli/tests/console.rs,
// once per phase, with TG_PHASE):
//   request  — against the first server: a call needing approval; prints {"approval_id": …}.
//              The harness then SIGKILLs that server and starts a new one on the same data.
//   decide   — against the restarted server: the approval from before the kill is listed in
//              the console, approved by a click; the agent's retried call runs exactly once
//              (a third identical call needs a new approval). Prints {"ok": true}.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { assert, cfg, http, call, callNeedingApproval, launch, watchErrors, shot, step } = require('./lib.cjs');

const ARGS = { path: 'restart/once.txt', content: 'approved after a restart' };

async function request() {
  step('a call needing approval, before the server is killed');
  const id = await callNeedingApproval('write_file', ARGS);
  const pending = (await http('GET', `/v1/approvals/${id}`, cfg.operatorToken)).body;
  assert.equal(pending.status, 'pending', JSON.stringify(pending));
  process.stdout.write(`${JSON.stringify({ approval_id: id })}\n`);
}

async function decide(id) {
  const { context, close } = await launch();
  try {
    const page = context.pages()[0] ?? await context.newPage();
    const errors = watchErrors(page);
    await page.addInitScript((token) => sessionStorage.setItem('toolgate.token', token), cfg.operatorToken);

    step('after the restart the console lists the approval requested before the kill');
    await page.goto(`${cfg.url}/#/approvals`);
    const card = page.locator(`.card[data-key="${id}"]`);
    await card.waitFor();
    assert.equal(await page.locator('#pending-count').textContent(), '1');
    assert.deepEqual(JSON.parse(await card.locator('pre.args').textContent()), ARGS);
    await shot(page, 'approvals-after-restart');

    step('approved by a click');
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    const decided = (await http('GET', `/v1/approvals/${id}`, cfg.operatorToken)).body;
    assert.deepEqual([decided.status, decided.decided_by, decided.scope, decided.consumed],
      ['approved', 'ops', 'once', false]);

    step('the retried call runs, exactly once');
    const retried = await call('write_file', ARGS);
    assert.equal(retried.ok, true, JSON.stringify(retried));
    assert.equal(fs.readFileSync(path.join(cfg.workspace, ARGS.path), 'utf8'), ARGS.content);
    const consumed = (await http('GET', `/v1/approvals/${id}`, cfg.operatorToken)).body;
    assert.equal(consumed.consumed, true, JSON.stringify(consumed));
    const again = await call('write_file', ARGS);
    assert.equal(again.ok, false, `a once-approval ran twice: ${JSON.stringify(again)}`);
    assert.equal(again.error.code, 'approval_required', JSON.stringify(again));
    assert.notEqual(again.error.details.approval_id, id);
    assert.deepEqual(errors, []);
    process.stdout.write(`${JSON.stringify({ ok: true, retried_call_id: retried.call_id })}\n`);
  } finally {
    await close();
  }
}

const phase = process.env.TG_PHASE;
const run = phase === 'request' ? request() : phase === 'decide' ? decide(process.env.TG_APPROVAL_ID) : Promise.reject(new Error(`TG_PHASE must be request or decide, not ${phase}`));
run.catch((e) => { process.stderr.write(`${e.stack || e}\n`); process.exit(1); });
