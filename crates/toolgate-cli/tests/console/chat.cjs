// The Chat page in headless Chromium against `toolgate serve` with a scripted model (started by
// crates/toolgate-cli/tests/console.rs): g c opens the page; a message starts a conversation;
// the model's write waits for its card in the conversation, which shows the complete
// arguments; Approve there lets the tool run once; the answer arrives; a reload shows the whole
// history again. The anonymous visitor (role default) is the user. Exits non-zero on the first
// failed check.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { assert, cfg, http, keys, launch, watchErrors, shot, texts, step } = require('./lib.cjs');

async function main() {
  const { context, close } = await launch();
  try {
    const page = context.pages()[0] || (await context.newPage());
    page.setDefaultTimeout(20000);
    const errors = watchErrors(page);
    step('g c opens the Chat page');
    await page.goto(`${cfg.url}/`);
    await page.locator('#tools-table').waitFor();
    await keys(page, 'g', 'c');
    await page.locator('#chat-input').waitFor();
    assert.equal(await page.evaluate(() => document.title), 'Chat · toolgate');

    step('a message starts a conversation; the write waits for its card');
    await page.locator('#chat-input').fill('please write chat.md');
    await page.locator('#chat-input').press('Enter');
    await page.locator('.chat-msg.user', { hasText: 'please write chat.md' }).waitFor();
    const card = page.locator('.chat-msg.card');
    await card.locator('button.approve').waitFor();
    const cardText = await card.textContent();
    assert.match(cardText, /write_file needs your approval/);
    assert.match(cardText, /from the browser/);
    assert.doesNotMatch(cardText, /null|undefined/);
    assert.equal(fs.existsSync(path.join(cfg.workspace, 'chat.md')), false, 'nothing written before the decision');
    const id = decodeURIComponent((await page.evaluate(() => location.hash)).split('/')[2]);
    assert.match(id, /^conv_[0-9a-f]{32}$/);
    await shot(page, 'chat-card');

    step('Approve in the conversation: the tool runs once and the answer arrives');
    await card.locator('button.approve').click();
    await page.locator('.chat-msg.answer', { hasText: 'Wrote chat.md.' }).waitFor();
    assert.equal(fs.readFileSync(path.join(cfg.workspace, 'chat.md'), 'utf8'), 'from the browser');
    await page.locator('.chat-msg.tool .tool-state', { hasText: 'ok' }).waitFor();
    assert.match(await card.locator('.card-result').textContent(), /approved by visitor/);
    await shot(page, 'chat');

    step('the journal over the API says the same');
    const journal = await http('GET', `/v1/conversations/${id}`);
    assert.equal(journal.status, 200, JSON.stringify(journal.body));
    assert.deepEqual(journal.body.events.map((e) => e.kind),
      ['user', 'assistant', 'approval', 'results', 'assistant', 'answer']);

    step('a reload shows the whole conversation again');
    await page.reload();
    await page.locator('.chat-msg.answer', { hasText: 'Wrote chat.md.' }).waitFor();
    assert.deepEqual(await texts(page, '.chat-msg.user'), ['please write chat.md']);
    assert.match(await page.locator('.chat-msg.card .card-result').textContent(), /approved by visitor/);
    assert.deepEqual(await texts(page, '#chat-list .chat-title'), ['please write chat.md']);

    assert.deepEqual(errors, []);
    process.stdout.write('{"ok": true}\n');
  } finally {
    await close();
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
