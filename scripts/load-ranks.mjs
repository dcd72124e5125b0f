// Benchmark (rerunnable, not a test): loads every trace file of DIR (one per rank) into the built page (dist/, or
// PROFILE_MODEL_DIST) in headless Chromium and prints, as one JSON line: the wall time to the summary, to the report
// and to the deeper analyses; the workers the set was split over and the files the progress showed; the workers'
// WebAssembly memory (sum and each); and the peak resident memory of every browser process together (sampled from
// /proc every 250 ms).
// Usage: node scripts/load-ranks.mjs DIR [QUERY]     QUERY: e.g. '?ranks-per-worker=1'
import fs from 'node:fs';
import path from 'node:path';
import { execSync } from 'node:child_process';
import { launchBrowser, openPage, startServer, DIST } from '../tests/e2e/harness.mjs';

const dir = process.argv[2];
const query = process.argv[3] || '';
const files = fs.readdirSync(dir).filter((f) => /\.json(\.gz)?$/.test(f)).sort().map((f) => path.join(dir, f));
const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);

/** Resident bytes of every chrome process (the browser, its renderer and its workers). */
function browserRss() {
  try {
    const out = execSync("ps -eo rss=,comm= | grep -i -E 'chrom|headless' || true", { encoding: 'utf8' });
    return out.split('\n').filter(Boolean).reduce((n, l) => n + Number(l.trim().split(/\s+/)[0]) * 1024, 0);
  } catch { return 0; }
}

const site = await startServer(DIST);
const browser = await launchBrowser();
const { page } = await openPage(browser.context, `${site.url}${query}`);
await page.evaluate(() => {
  window.seen = { files: {}, maxWorker: -1, phases: [] };
  let last = '';
  new MutationObserver(() => {
    const ph = document.querySelector('[data-phase]')?.getAttribute('data-phase') || '';
    if (ph !== last) { last = ph; window.seen.phases.push([ph, Date.now()]); }
    for (const b of document.querySelectorAll('.file-bar')) {
      window.seen.files[b.dataset.file] = Number(b.dataset.worker);
      window.seen.maxWorker = Math.max(window.seen.maxWorker, Number(b.dataset.worker));
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true });
});
let peak = 0;
const sampler = setInterval(() => { peak = Math.max(peak, browserRss()); }, 250);
const t0 = Date.now();
await page.setInputFiles('#file-input', files);
await page.waitForSelector('#summary[data-state="ready"], .error', { timeout: 1_800_000 });
const summaryMs = Date.now() - t0;
if (await page.locator('.error').count()) {
  console.log(JSON.stringify({ files: files.length, bytes, query, failed_after_ms: summaryMs,
    error: (await page.locator('.error').first().innerText()).slice(0, 600) }));
  process.exit(1);
}
await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 1_800_000 });
const reportMs = Date.now() - t0;
await page.click('#tab-report');
const main = await page.locator('#report [data-section="main-finding"]').first().innerText({ timeout: 1_800_000 }).catch(() => '');
await page.click('#tab-analyses');
await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 1_800_000 });
const analysesMs = Date.now() - t0;
clearInterval(sampler);
peak = Math.max(peak, browserRss());
const metric = (m) => page.locator(`#summary [data-metric="${m}"]`).first().getAttribute('data-value', { timeout: 1000 }).catch(() => null);
const seen = await page.evaluate(() => window.seen);
const ranks = await page.locator('#ranks tr[data-rank]').count();
console.log(JSON.stringify({
  files: files.length,
  bytes,
  query,
  ranks_shown: ranks,
  summary_ms: summaryMs,
  report_ms: reportMs,
  analyses_ms: analysesMs,
  load_ms: Number(await metric('load-ms')),
  workers: seen.maxWorker + 1,
  files_in_progress: Object.keys(seen.files).length,
  worker_memory_bytes: Number(await metric('worker-memory-bytes')),
  browser_peak_rss_bytes: peak,
  phases_ms: seen.phases.map(([p, t]) => `${p}@${t - t0}`).join(' '),
  main_finding: main.slice(0, 300),
}));
await browser.close();
await site.close();
