// Benchmark (rerunnable, not a test) of the SQL tab's limits in the built page: loads FILE (or a rank
// folder's files) in headless Chromium, opens the SQL tab and reports the events, the time until DuckDB
// holds the tables, one query's time over every event, and the browser's memory (the sum of its
// processes' resident set, read from /proc, before and after), or what the tab says when it refuses.
// Usage: node scripts/bench-sql-browser.mjs FILE...   (PROFILE_MODEL_DIST: the built page, default dist/)
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { launchBrowser, openPage, openTab, startServer, DIST } from '../tests/e2e/harness.mjs';

/** Resident memory (MB) of every chromium process. */
function chromiumRssMb() {
  const out = execFileSync('ps', ['-C', 'chromium', '-o', 'rss='], { encoding: 'utf8' }).trim();
  return out ? Math.round(out.split('\n').reduce((s, l) => s + Number(l), 0) / 1024) : 0;
}

const files = process.argv.slice(2);
if (!files.length) { console.error('usage: node scripts/bench-sql-browser.mjs FILE...'); process.exit(2); }
const bytes = files.reduce((s, f) => s + fs.statSync(f).size, 0);
const site = await startServer(DIST);
const browser = await launchBrowser();
try {
  const { page } = await openPage(browser.context, site.url);
  const t0 = Date.now();
  await page.setInputFiles('#file-input', files);
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 3_600_000, state: 'attached' });
  const loadMs = Date.now() - t0;
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 3_600_000, state: 'attached' });
  const events = await page.evaluate(() => [...document.querySelectorAll('#summary [data-metric="events"]')]
    .reduce((s, e) => s + Number(e.dataset.value), 0));
  const rssBefore = chromiumRssMb();
  const t1 = Date.now();
  await openTab(page, 'sql');
  await page.waitForSelector('#sql-status[data-state="ready"], #sql-status[data-state="failed"]',
    { timeout: 3_600_000, state: 'attached' });
  const openMs = Date.now() - t1;
  const state = await page.getAttribute('#sql-status', 'data-state');
  const result = { files: files.length, file_mb: Math.round(bytes / 1e6), events, load_ms: loadMs,
    sql_state: state, sql_open_ms: openMs, chromium_rss_mb_before: rssBefore };
  if (state === 'ready') {
    await page.fill('#sql-query', 'select kind, count(*) as n, sum(dur) as total_us from events group by kind order by n desc');
    const t2 = Date.now();
    await page.click('#sql-run');
    await page.waitForSelector('#sql-table tbody tr, #sql-error', { timeout: 3_600_000 });
    result.query_ms = Date.now() - t2;
  } else {
    result.message = (await page.locator('#sql-status').textContent()).trim();
  }
  result.chromium_rss_mb_after = chromiumRssMb();
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
  await site.close();
}
