// The SQL tab: DuckDB-WASM is fetched only when the tab first opens, from the page's own origin; an
// example query and a custom one answer with figures the CLI computes on its own; an error says where
// it is; a row with rank, ts and dur opens the timeline; a set split over shard workers is one table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, openTab, screenshotPath, trace, cliJson, near } from './harness.mjs';

const env = useBrowser();

const READY = '#summary[data-state="ready"]';
const SQL_READY = '#sql-status[data-state="ready"]';
const ENGINE = /duckdb|sql-engine\.js/;

/** Runs a query in the SQL tab and waits for its answer (or its error). */
async function runSql(page, text) {
  const before = await page.locator('#sql-summary').textContent().catch(() => null);
  await page.fill('#sql-query', text);
  await page.click('#sql-run');
  await page.waitForFunction((b) => {
    const err = document.querySelector('#sql-error');
    const sum = document.querySelector('#sql-summary');
    const run = document.querySelector('#sql-run');
    return run && !run.disabled && (err || (sum && sum.textContent !== b));
  }, before, { timeout: 60_000 });
}

/** The answer's first row, as the cells' texts. */
async function firstRow(page) {
  return page.locator('#sql-table tbody tr').first().locator('td').allTextContents();
}

test('the SQL tab answers from every event, fetched from this origin only once the tab opens', async () => {
  const origin = new URL(env.server.url).origin;
  const requests = [];
  const record = (r) => requests.push(r.url());
  env.browser.context.on('request', record);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  const file = trace('hta__sampled_rank-0.json.gz');
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForTimeout(500);
  assert.deepEqual(requests.filter((u) => ENGINE.test(u)), [], 'no SQL engine file before the tab opens');

  const t0 = Date.now();
  await openTab(page, 'sql');
  await page.waitForSelector(SQL_READY, { timeout: 180_000 });
  const openMs = Date.now() - t0;
  const engineFiles = requests.filter((u) => ENGINE.test(u));
  assert.ok(engineFiles.some((u) => u.endsWith('duckdb-eh.wasm')), engineFiles.join(' '));

  // The example one click away: the top kernels inside a ProfilerStep.
  await page.click('[data-example="0"]');
  await page.waitForSelector('#sql-table tbody tr', { timeout: 60_000 });
  assert.ok(Number(await page.getAttribute('[data-metric="sql-rows"]', 'data-value')) > 0, 'the example has rows');

  // A custom query against the CLI's own count and total of the kernels.
  await runSql(page, "select count(*) as n, sum(dur) as total_us from events where kind = 'kernel'");
  const [n, total] = await firstRow(page);
  const cli = cliJson(['events', '--kind', 'kernel', '--limit', '1', '--json', file]);
  assert.equal(Number(n), cli.matched, 'kernels counted');
  near(total, cli.matched_dur_us, 'kernel time, µs');
  const queryMs = Number(await page.getAttribute('[data-metric="sql-ms"]', 'data-value'));
  assert.ok(queryMs >= 0, 'the query time is shown');

  // The same from the view, and the events in all.
  await runSql(page, 'select (select count(*) from kernels) as k, (select count(*) from events) as e');
  const [k, e] = await firstRow(page);
  assert.equal(Number(k), cli.matched, 'the kernels view');
  const all = cliJson(['events', '--limit', '1', '--json', file]);
  assert.equal(Number(e), all.matched, 'every event is a row');

  // Sorting by a column header: descending first.
  await runSql(page, 'select name, dur from kernels order by ts limit 50');
  await page.click('[data-sort-col="1"]');
  const durs = (await page.locator('#sql-table tbody tr td:nth-child(2)').allTextContents()).map(Number);
  assert.deepEqual(durs, [...durs].sort((a, b) => b - a), 'sorted by dur, descending');

  // An error in plain words, with where it is.
  await runSql(page, 'select name,\n  count(*) fro events');
  const err = page.locator('#sql-error');
  assert.match(await err.textContent(), /Line 2, column 16: .*syntax error/i);
  assert.equal(await err.getAttribute('data-line'), '2');
  assert.equal(await err.getAttribute('data-column'), '16');

  // A row with rank, ts and dur: shown on the timeline.
  await runSql(page, 'select rank, ts, dur, name from kernels order by dur desc limit 5');
  await page.screenshot({ path: screenshotPath('sql-tab'), fullPage: true });
  await page.locator('[data-sql-timeline]').first().click();
  await page.waitForSelector('#tab-timeline[aria-selected="true"]', { timeout: 30_000 });

  env.browser.context.off('request', record);
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, [], 'every request stays on the page\'s origin');
  assert.deepEqual(errors, [], 'no console errors');
  console.log(`[sql] engine + tables ready ${openMs} ms after the tab opened; kernel query ${queryMs.toFixed(1)} ms`);
  await page.close();
});

test('ranks split over shard workers are one events table', async () => {
  const files = [trace('hta__sampled_rank-0.json.gz'), trace('hta__sampled_rank-1.json.gz')];
  const { page, errors } = await openPage(env.browser.context, `${env.server.url}?ranks-per-worker=1`);
  await page.setInputFiles('#file-input', files);
  await page.waitForSelector(READY, { timeout: 180_000 });
  await openTab(page, 'sql');
  await page.waitForSelector(SQL_READY, { timeout: 180_000 });
  await runSql(page, "select rank, count(*) as n, sum(dur) as total_us from events where kind = 'kernel' group by rank order by rank");
  const rows = await page.locator('#sql-table tbody tr').all();
  assert.equal(rows.length, 2, 'both ranks');
  for (const [i, row] of rows.entries()) {
    const [rank, n, total] = await row.locator('td').allTextContents();
    const cli = cliJson(['events', '--kind', 'kernel', '--limit', '1', '--json', files[i]]);
    assert.equal(Number(rank), i);
    assert.equal(Number(n), cli.matched, `rank ${i} kernels`);
    near(total, cli.matched_dur_us, `rank ${i} kernel time`);
  }
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
