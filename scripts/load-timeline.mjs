// Loads FILE into the built page (dist/, or PROFILE_MODEL_DIST) in headless Chromium and prints the wall time, the
// worker's load-ms and a timeline (ms after the file input's change event) of the progress phases and the summary.
// Usage: node scripts/load-timeline.mjs FILE   (IDLE_MS=N: wait N ms on the open page first, as a user picking a file does)
import { launchBrowser, openPage, startServer, DIST } from '../tests/e2e/harness.mjs';
const site = await startServer(DIST);
const browser = await launchBrowser();
const { page } = await openPage(browser.context, site.url);
await page.evaluate(() => {
  window.__tl = [];
  const inp = document.querySelector('#file-input');
  inp.addEventListener('change', () => window.__tl.push(['change', Date.now()]), true);
  let last = '';
  new MutationObserver(() => {
    const p = document.querySelector('[data-phase]'); const ph = p ? p.getAttribute('data-phase') : '';
    const s = document.querySelector('#summary'); const st = s ? s.getAttribute('data-state') : '';
    const key = ph + '/' + st;
    if (key !== last) { last = key; window.__tl.push([key, Date.now()]); }
  }).observe(document.body, { subtree: true, childList: true, attributes: true });
});
await page.waitForTimeout(Number(process.env.IDLE_MS || 0));
const t0 = Date.now();
await page.setInputFiles('#file-input', process.argv[2]);
await page.waitForSelector('#summary[data-state="ready"]', { timeout: 600000 });
const wall = Date.now() - t0;
const tl = await page.evaluate(() => window.__tl);
const c = tl[0][1];
const metric = (m) => page.locator(`#summary [data-metric="${m}"]`).first().getAttribute('data-value', { timeout: 1000 }).catch(() => null);
console.log('wall', wall, 'load-ms', await metric('load-ms'), 'worker-memory-bytes', await metric('worker-memory-bytes'));
console.log(tl.map(([k, t]) => `${k}@${(t - c).toFixed(0)}`).join('  '));
await browser.close(); await site.close();
