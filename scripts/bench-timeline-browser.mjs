// Benchmark (rerunnable, not a test) of the timeline in the built page: loads FILE in headless Chromium,
// measures the time from the summary being shown to the first timeline frame, then zooms and pans with
// 120 wheel and drag steps and reports frames per second (requestAnimationFrame while interacting), the
// worker's answers per second and the longest main-thread task (PerformanceObserver 'longtask').
// Usage: node scripts/bench-timeline-browser.mjs FILE
import { launchBrowser, openPage, openTab, startServer, DIST } from '../tests/e2e/harness.mjs';

const file = process.argv[2];
const site = await startServer(DIST);
const browser = await launchBrowser();
try {
  const { page } = await openPage(browser.context, site.url);
  await page.evaluate(() => {
    window.__long = [];
    new PerformanceObserver((l) => l.getEntries().forEach((e) => window.__long.push(e.duration)))
      .observe({ type: 'longtask', buffered: false });
  });
  await page.setInputFiles('#file-input', file);
  // The timeline draws in its tab even while another tab is shown, so its first frame is timed
  // from the summary whatever the tab.
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 1_800_000, state: 'attached' });
  const summaryAt = Date.now();
  await page.waitForSelector('#timeline:not([data-drawn-items="0"])[data-drawn-items]', { timeout: 600_000, state: 'attached' });
  const firstFrameMs = Date.now() - summaryAt;
  // The interaction is measured once the worker has answered the report, the analyses and the views
  // (one worker thread serves them all: during them, timeline answers wait their turn).
  const busyFrom = Date.now();
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 1_800_000, state: 'attached' });
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 1_800_000, state: 'attached' });
  const workerBusyMs = Date.now() - busyFrom;
  await openTab(page, 'timeline');
  const events = await page.locator('#summary [data-metric="events"]').first().getAttribute('data-value');
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  await page.evaluate(() => { window.__long = []; });
  const answersBefore = await page.evaluate(() => Number(document.querySelector('#timeline').dataset.drawnItems));
  // Count frames and answers while interacting.
  await page.evaluate(() => {
    window.__frames = 0;
    window.__answers = 0;
    window.__run = true;
    const tick = () => { window.__frames += 1; if (window.__run) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    new MutationObserver(() => { window.__answers += 1; })
      .observe(document.querySelector('#timeline'), { attributes: true, attributeFilter: ['data-drawn-items'] });
  });
  const started = Date.now();
  const y = box.y + 40;
  for (let i = 0; i < 60; i++) {
    const x = box.x + 170 + (box.width - 170) * (0.3 + 0.4 * ((i * 7) % 10) / 10);
    await page.mouse.move(x, y);
    await page.mouse.wheel(0, i < 40 ? -120 : 120);
  }
  for (let i = 0; i < 60; i++) {
    const x = box.x + 400;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + (i % 2 ? 80 : -80), y, { steps: 4 });
    await page.mouse.up();
  }
  const seconds = (Date.now() - started) / 1000;
  const stats = await page.evaluate(() => { window.__run = false; return { frames: window.__frames, answers: window.__answers, long: window.__long }; });
  const items = await canvas.getAttribute('data-drawn-items');
  console.log(`trace: ${file}, ${events} events`);
  console.log(`first timeline frame: ${firstFrameMs} ms after the summary; the report, analyses and views then took the worker ${workerBusyMs} ms`);
  console.log(`interaction: ${seconds.toFixed(1)} s, ${(stats.frames / seconds).toFixed(1)} frames/s, ${(stats.answers / seconds).toFixed(1)} worker answers/s, last answer ${items} items (first ${answersBefore})`);
  console.log(`main-thread tasks over 50 ms during interaction: ${stats.long.length}, longest ${stats.long.length ? Math.max(...stats.long).toFixed(0) : 0} ms`);
  await page.close();
} finally {
  await browser.close();
  await site.close();
}
