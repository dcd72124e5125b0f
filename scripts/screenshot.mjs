// Loads trace files into the built page (dist/, or PROFILE_MODEL_DIST) in headless Chromium, opens every
// deeper-analysis block and saves a full-page screenshot: a look at the page as a user sees it.
// Usage: node scripts/screenshot.mjs OUT.png TRACE [TRACE ...]   (several traces = several ranks)
import { startServer, launchBrowser, DIST } from '../tests/e2e/harness.mjs';

const [out, ...files] = process.argv.slice(2);
if (!out || files.length === 0) {
  console.error('usage: node scripts/screenshot.mjs OUT.png TRACE [TRACE ...]');
  process.exit(2);
}
const server = await startServer(DIST);
const browser = await launchBrowser();
const page = await browser.context.newPage();
page.on('console', (m) => { if (m.type() === 'error') console.log('console error:', m.text()); });
await page.goto(server.url);
await page.setInputFiles('#file-input', files);
await page.waitForSelector('#summary[data-state="ready"]', { timeout: 300_000 });
await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 300_000 });
await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
await page.screenshot({ path: out, fullPage: true });
console.log(`${out}: ${await page.evaluate(() => document.body.scrollHeight)} px tall`);
await browser.close();
await server.close();
