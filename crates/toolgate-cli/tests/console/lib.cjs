// Helpers for the console browser test: the environment the Rust harness passes, the API as
// the agent and the operator see it, Chromium through playwright-core, and checks that
// compare whole values.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (this script is run by crates/toolgate-cli/tests/console.rs)`);
  return v;
}

const cfg = {
  url: env('TG_URL').replace(/\/$/, ''),
  operatorToken: env('TG_OPERATOR_TOKEN'),
  agentToken: env('TG_AGENT_TOKEN'),
  workspace: env('TG_WORKSPACE'),
  auditFile: env('TG_AUDIT_FILE'),
  shots: env('TG_SCREENSHOTS'),
  chromium: env('TG_CHROMIUM'),
  playwright: env('TG_PLAYWRIGHT_CORE'),
  python: env('TG_PYTHON'),
  mcpClient: env('TG_MCP_CLIENT'),
};

/** `fetch` against the server as `token`'s holder; resolves to {status, body}. */
async function http(method, route, token, body) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(cfg.url + route, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* keep the text */ }
  return { status: res.status, body: parsed };
}

/** POST /v1/calls as the agent: the call's envelope. */
async function call(tool, args, session = 'console-test') {
  const r = await http('POST', '/v1/calls', cfg.agentToken, { tool, arguments: args, session });
  assert.equal(r.status, 200, `POST /v1/calls ${tool}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** A call that must wait for a human: its approval id. */
async function callNeedingApproval(tool, args) {
  const env = await call(tool, args);
  assert.equal(env.ok, false, `${tool} ran without approval: ${JSON.stringify(env)}`);
  assert.equal(env.error.code, 'approval_required', JSON.stringify(env));
  return env.error.details.approval_id;
}

/**
 * Starts the real MCP client peer (fastmcp over Streamable HTTP, anonymous): it lists the
 * tools, makes a few calls and then calls write_file, which waits for an operator. Resolves
 * `done` with the client's JSON report when it exits.
 */
function startMcpClient() {
  const { spawn } = require('node:child_process');
  const child = spawn(cfg.python, [cfg.mcpClient, '--client', 'fastmcp', '--mode', 'legacy', '--phase', 'first',
    '--url', `${cfg.url}/mcp`], { cwd: cfg.workspace, stdio: ['ignore', 'pipe', 'inherit'] });
  process.on('exit', () => child.kill());
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`the MCP client exited with ${code}: ${out}`));
      try { resolve(JSON.parse(out)); } catch (e) { reject(new Error(`the MCP client printed no JSON: ${out}`)); }
    });
  });
  return { child, done };
}

async function launch() {
  const { chromium } = require(cfg.playwright);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-console-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 820 },
    colorScheme: 'dark',
  });
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

/**
 * Collects what the page logs as errors. The expected refusals (401/403 answers the test
 * provokes on purpose) are the only resource errors allowed.
 */
function watchErrors(page) {
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const t = m.text();
    if (/Failed to load resource: the server responded with a status of 40[13]/.test(t)) return;
    errors.push(`console error: ${t}`);
  });
  return errors;
}

async function shot(page, name) {
  fs.mkdirSync(cfg.shots, { recursive: true });
  await page.screenshot({ path: path.join(cfg.shots, `${name}.png`), fullPage: false });
}

/** The trimmed text of every element matching `selector`, in order. */
async function texts(page, selector) {
  return page.locator(selector).evaluateAll((els) => els.map((e) => e.textContent.replace(/\s+/g, ' ').trim()));
}

/** Waits until `fn()` (in the page) returns a truthy value, and returns it. */
async function until(page, fn, arg) {
  const handle = await page.waitForFunction(fn, arg);
  return handle.jsonValue();
}

/** Presses keys one after another, like a person typing a chord. */
async function keys(page, ...seq) {
  for (const k of seq) await page.keyboard.press(k);
}

function step(name) {
  process.stdout.write(`- ${name}\n`);
}

module.exports = { assert, cfg, http, call, callNeedingApproval, startMcpClient, launch, watchErrors, shot, texts, until, keys, step };
