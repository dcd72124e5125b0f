// Comparing two runs in the built page: pick a baseline and a candidate, read the headline and the
// figures, and check them against `profile-model diff --json`; two files of separate runs dropped
// together are offered a comparison instead of being called a straggler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser, openPage, cliJson, near, screenshotPath, trace, ROOT } from './harness.mjs';

const env = useBrowser();

const BASE = 'hta__trace_compare_base.json.gz';
const TEST = 'hta__trace_compare_test.json.gz';
const COMPARED = '#compare[data-state="ready"]';

async function figure(page, name, attrs = {}) {
  const sel = `#compare [data-metric="${name}"]${Object.entries(attrs).map(([k, v]) => `[data-${k}="${v}"]`).join('')}`;
  return page.locator(sel).first().getAttribute('data-value');
}

test('compare two runs: the headline and the figures equal the CLI\'s diff', async () => {
  const cli = cliJson(['diff', '--json', trace(BASE), trace(TEST)]);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.locator('#compare-picker > summary').click();
  await page.setInputFiles('#compare-baseline', trace(BASE));
  await page.setInputFiles('#compare-candidate', trace(TEST));
  await page.click('#compare-start');
  await page.waitForSelector(COMPARED, { timeout: 120_000 });
  assert.equal(await figure(page, 'compare-headline'), cli.headline);
  assert.equal(await page.locator('#compare').getAttribute('data-basis'), cli.basis);
  near(await figure(page, 'compare-total-baseline'), cli.total.baseline, 'baseline step');
  near(await figure(page, 'compare-total-candidate'), cli.total.candidate, 'candidate step');
  near(await figure(page, 'compare-total-change'), cli.total.change, 'step change');
  for (const part of cli.waterfall) {
    near(await figure(page, 'compare-part-change', { part: part.key }), part.change, `part ${part.key}`);
  }
  // The largest kernel change is the first row (the table starts sorted by the size of the change).
  const [name, top] = cli.kernels[0];
  const first = page.locator('#compare tr[data-metric="compare-kernel-change"]').first();
  assert.equal(await first.getAttribute('data-name'), name);
  near(await first.getAttribute('data-value'), top.time.change, 'top kernel change');
  // A click on the name header sorts by the name shown (A to Z, any case); aria-sort says so.
  const nameHeader = page.locator('#compare table[data-table="compare-kernel-change"] th[data-col="0"]');
  await nameHeader.locator('button').click();
  assert.equal(await nameHeader.getAttribute('aria-sort'), 'ascending');
  const names = await page.locator('#compare tr[data-metric="compare-kernel-change"] td.name .name-text').evaluateAll(
    (spans) => spans.map((s) => s.firstChild.textContent.toLowerCase()));
  assert.deepEqual(names, [...names].sort(), 'sorted by name');
  // Counts as counts, units on every figure column, findings named in words.
  const calls = await page.locator('#compare table[data-table="compare-kernel-change"] tbody tr').first()
    .locator('td').evaluateAll((tds) => tds.slice(-2).map((td) => td.textContent.trim()));
  for (const c of calls) assert.match(c, /^\d{1,3}(,\d{3})*$/, `calls shown as a count: ${c}`);
  const heads = await page.locator('#compare table[data-table="compare-kernel-change"] th').allInnerTexts();
  for (const h of heads.slice(1, 4)) assert.match(h, /\(ms per step|\(µs per ms/, `unit in "${h}"`);
  const findings = await page.locator('#compare tr[data-metric="compare-finding-impact-change"]').evaluateAll(
    (trs) => trs.map((tr) => [tr.dataset.finding, tr.querySelector('td').textContent.trim()]));
  for (const [id, shown] of findings) assert.notEqual(shown, id, `finding ${id} shown in words`);
  // The single-run frame shows the candidate alone: one rank, its file, its own diagnosis.
  const header = await page.locator('#trace-header').innerText();
  assert.match(header, /\b1 rank\b/, header);
  assert.ok(header.includes('compare_test') && !header.includes('compare_base'), header);
  const candidate = cliJson(['report', '--json', trace(TEST)]);
  await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 120_000 });
  assert.equal(await page.locator('#verdict').getAttribute('data-main-finding'), candidate.main_finding_id ?? 'none',
    'the verdict is the candidate run\'s own');
  await page.screenshot({ path: screenshotPath('compare'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('two files of separate runs are offered a comparison, not called a straggler', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  // The same file twice: two runs of rank 0 (distributedInfo), not two ranks.
  fs.mkdirSync(path.join(ROOT, 'test-output'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-output', 'runs-'));
  const a = path.join(dir, 'run-a.json.gz');
  const b = path.join(dir, 'run-b.json.gz');
  fs.copyFileSync(trace(BASE), a);
  fs.copyFileSync(trace(TEST), b);
  await page.setInputFiles('#file-input', [a, b]);
  await page.waitForSelector('#runs-offer', { timeout: 120_000 });
  await page.click('#compare-runs');
  await page.waitForSelector(COMPARED, { timeout: 60_000 });
  const cli = cliJson(['diff', '--json', a, b]);
  near(await figure(page, 'compare-total-change'), cli.total.change, 'step change');
  assert.equal(await page.locator('#runs-offer').count(), 0, 'the offer goes once compared');
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a loaded trace is compared with a run picked afterwards', async () => {
  const cli = cliJson(['diff', '--json', trace(BASE), trace(TEST)]);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(BASE));
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 120_000 });
  await page.setInputFiles('#compare-with', trace(TEST));
  await page.waitForSelector(COMPARED, { timeout: 120_000 });
  assert.equal(await figure(page, 'compare-headline'), cli.headline);
  near(await figure(page, 'compare-total-change'), cli.total.change, 'step change');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a comparison\'s tables are never empty without saying why: two runs without findings', async () => {
  // The candidate run alone has no finding: compared with itself, neither run has one.
  const cli = cliJson(['diff', '--json', trace(TEST), trace(TEST)]);
  assert.deepEqual(cli.findings, [], 'the CLI finds no finding in either run');
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.setInputFiles('#file-input', trace(TEST));
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 120_000, state: 'attached' });
  await page.setInputFiles('#compare-with', trace(TEST));
  await page.waitForSelector(COMPARED, { timeout: 120_000 });
  await page.click('#tab-compare');
  const why = page.locator('#compare .empty-table[data-table="compare-findings"]');
  await why.waitFor({ timeout: 10_000 });
  assert.match(await why.innerText(), /Neither run has a finding/);
  assert.equal(await page.locator('#compare table[data-table="compare-findings"]').count(), 0, 'no table of headers alone');
  // Every table shown has rows; every empty one is a sentence instead.
  const tables = await page.locator('#compare table').evaluateAll((ts) => ts
    .filter((t) => t.getClientRects().length > 0)
    .map((t) => ({ table: t.dataset.table ?? t.querySelector('th')?.textContent, rows: t.querySelectorAll('tbody tr').length })));
  assert.ok(tables.length > 0, 'tables shown');
  for (const t of tables) assert.ok(t.rows > 0, `${t.table}: rows, not headers alone`);
  await why.scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('compare-no-findings') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
