// Browser part of scripts/bench-analyses.sh: loads FILE into the built page (dist/) in headless Chromium,
// waits for the deeper analyses and prints the time of each as the worker measured it (performance.now()
// around each analysis, the same code as the native `analyze --timings`). Usage: node bench-analyses-browser.mjs FILE
import { launchBrowser, openPage, startServer, DIST } from '../tests/e2e/harness.mjs';

const file = process.argv[2];
const site = await startServer(DIST);
const browser = await launchBrowser();
try {
  const { page } = await openPage(browser.context, site.url);
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 1_800_000 });
  const shownFrom = Date.now();
  await page.waitForSelector('[data-metric="analysis-ms"]', { timeout: 1_800_000 });
  const shownMs = Date.now() - shownFrom;
  const each = await page.locator('[data-metric="analysis-time-ms"]').evaluateAll(
    (els) => els.map((e) => [e.dataset.analysis, Number(e.dataset.value)]));
  const total = Number(await page.locator('[data-metric="analysis-ms"]').getAttribute('data-value'));
  console.log('Browser (Chromium, worker) analysis times');
  for (const [name, ms] of each) console.log(`  ${name.padEnd(28)} ${ms.toFixed(1).padStart(10)} ms`);
  console.log(`  ${'total'.padEnd(28)} ${total.toFixed(1).padStart(10)} ms`);
  console.log(`  ${'summary shown -> deeper view shown'.padEnd(28)} ${shownMs.toFixed(0).padStart(6)} ms (analyses, transfer, rendering)`);
  await page.close();
} finally {
  await browser.close();
  await site.close();
}
