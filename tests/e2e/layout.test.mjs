// The page's layout (issue 18): the answer first (header and verdict within the first screen), one tab per
// view with the tab in the URL hash (back/forward and reload restore it), no sideways scrolling, sortable
// analysis tables, the redact switch in every view, a loading shell, a skip link and visible focus, and
// both colour schemes. Screenshots go to test-output/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser, openPage, openTab, cliJson, screenshotPath, trace, ROOT } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__nccl_data.json.gz';
const VERDICT = '#verdict[data-state="ready"]';
const TABS = ['report', 'overview', 'operators', 'kernels', 'memory', 'modules', 'timeline', 'analyses', 'explore', 'compare', 'sql'];
const VIEWS = ['overview', 'operators', 'kernels', 'memory', 'modules'];
// The view tabs share one panel.
const panelOf = (tab) => (VIEWS.includes(tab) ? 'panel-views' : `panel-${tab}`);

async function load(page, name = NAME) {
  await page.setInputFiles('#file-input', trace(name));
  await page.waitForSelector(VERDICT, { timeout: 120_000 });
}

const hash = (page) => page.evaluate(() => location.hash);

async function shownTab(page) {
  return page.evaluate(() => ({
    selected: [...document.querySelectorAll('[role="tab"][aria-selected="true"]')].map((t) => t.id),
    panels: [...document.querySelectorAll('[role="tabpanel"]:not([hidden])')].map((p) => p.id),
  }));
}

test('the first screen after a load shows the header and the verdict, above the tab bar', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await load(page);
  const top = await page.locator('#verdict').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  assert.ok(top < 900, `the verdict starts ${top} px down (< 900)`);
  const header = await page.locator('#trace-header').evaluate((e) => e.getBoundingClientRect().top);
  assert.ok(header < top, 'the header comes first');
  assert.match(await page.locator('#trace-header').textContent(), /hta__nccl_data/);
  // The verdict: the main finding (the report's), the bottleneck, the top findings with their impact.
  const report = cliJson(['report', '--json', trace(NAME)]);
  assert.equal(await page.locator('#verdict').getAttribute('data-main-finding'), report.main_finding_id ?? 'none');
  assert.equal((await page.locator('#verdict-title').textContent()).trim(), report.main_finding.replaceAll('`', ''),
    'the headline is the report\'s main finding as plain text');
  const findings = await page.locator('#verdict [data-verdict-finding]').evaluateAll((li) => li.map((l) => l.dataset.verdictFinding));
  assert.deepEqual(findings, report.findings.slice(0, 3).map((f) => f.id), 'the first findings, in the report order');
  assert.ok(await page.locator('#verdict .impact-bar').count() >= 1, 'impact bars');
  // The drop zone is one line of buttons now; the bookkeeping is a details line.
  const drop = await page.locator('#drop-zone').boundingBox();
  assert.ok(drop.height < 80, `the loader shrank (${drop.height} px)`);
  assert.match(await page.locator('#load-details').textContent(), /of JSON/);
  // The tab bar follows: role=tablist, one tab per view, the report first.
  assert.equal(await page.locator('[role="tablist"] [role="tab"]').count(), TABS.length);
  assert.deepEqual(await shownTab(page), { selected: ['tab-report'], panels: ['panel-report'] });
  await page.screenshot({ path: screenshotPath('layout-first-screen') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('the tab bar switches panels and the hash; back, forward and reload restore the tab', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await load(page);
  await page.waitForFunction(() => /timeline=/.test(location.hash), null, { timeout: 60_000 });
  for (const tab of TABS) {
    await openTab(page, tab);
    assert.deepEqual(await shownTab(page), { selected: [`tab-${tab}`], panels: [panelOf(tab)] }, tab);
    const h = await hash(page);
    assert.match(h, new RegExp(`tab=${tab}(&|$)`), `the hash names ${tab}: ${h}`);
    assert.match(h, /timeline=\d+:\d+-\d+/, `the timeline's range stays in the hash: ${h}`);
  }
  // The panels keep their ids and state: the deeper analyses' panel is the one of the Analyses tab.
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  await page.goBack();
  await page.waitForSelector('#tab-sql[aria-selected="true"]');
  await page.goBack();
  await page.waitForSelector('#tab-compare[aria-selected="true"]');
  assert.deepEqual((await shownTab(page)).panels, ['panel-compare']);
  await page.goForward();
  await page.waitForSelector('#tab-sql[aria-selected="true"]');
  await page.goForward();
  await page.waitForSelector('#tab-analyses[aria-selected="true"]');
  // Arrow keys move along the tab bar.
  await page.focus('#tab-analyses');
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('#tab-explore[aria-selected="true"]');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-explore');
  await page.keyboard.press('ArrowLeft');
  await page.waitForSelector('#tab-analyses[aria-selected="true"]');
  // A reload keeps the tab: the next load shows it.
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached' });
  assert.match(await hash(page), /tab=analyses/);
  await load(page);
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  assert.deepEqual(await shownTab(page), { selected: ['tab-analyses'], panels: ['panel-analyses'] });
  assert.ok(await page.locator('#deeper').isVisible(), 'the analyses are shown after the reload');
  // Outside the report the verdict is one line whose link goes back to the report; there, its "Want
  // deeper analysis?" links go to the views.
  await page.click('#verdict [data-goto-tab="report"]');
  await page.waitForSelector('#tab-report[aria-selected="true"]');
  await page.click('#verdict [data-goto-tab="explore"]');
  await page.waitForSelector('#tab-explore[aria-selected="true"]');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('no sideways page scroll at 800 px and 1400 px; the tables fit their panel at 1400 px', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await load(page);
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  for (const s of await page.locator('#deeper details > summary').all()) await s.click();
  for (const s of await page.locator('#deeper details.inner > summary').all()) await s.click();
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-status[data-metric="explore-matched"]', { timeout: 60_000 });
  for (const width of [1400, 800]) {
    await page.setViewportSize({ width, height: 1000 });
    for (const tab of TABS) {
      await openTab(page, tab);
      await page.waitForTimeout(150);
      const m = await page.evaluate(() => {
        const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
        return {
          page: document.documentElement.scrollWidth,
          view: document.documentElement.clientWidth,
          tables: [...document.querySelectorAll('.table-wrap')].filter(visible)
            .filter((e) => e.scrollWidth > e.clientWidth + 1)
            .map((e) => `${e.closest('[id]')?.id}: ${e.scrollWidth} > ${e.clientWidth}`),
        };
      });
      assert.ok(m.page <= m.view, `${tab} at ${width} px: the page is ${m.page} px wide in ${m.view}`);
      if (width >= 1400) assert.deepEqual(m.tables, [], `${tab} at ${width} px: tables scroll sideways`);
      if (tab === 'report' || tab === 'analyses') {
        await page.screenshot({ path: screenshotPath(`layout-${tab}-${width}`), fullPage: false });
      }
    }
  }
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a click on an analysis table\'s header sorts its rows (aria-sort says how)', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await load(page);
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  await page.locator('#analysis-kernel_breakdown > summary').click();
  const metricName = 'breakdown-kernel-sum-us';
  const table = page.locator(`#analysis-kernel_breakdown table.sortable:has(td[data-metric="${metricName}"])`).first();
  const col = await table.evaluate((t, m) => [...t.querySelector('tbody tr').children]
    .findIndex((td) => td.dataset.metric === m), metricName);
  assert.ok(col >= 0, 'the column of the figure');
  const values = () => table.locator(`td[data-metric="${metricName}"]`).evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const header = table.locator(`th[data-col="${col}"]`);
  assert.equal(await header.getAttribute('aria-sort'), 'none');
  const original = await values();
  assert.ok(original.length >= 3, `rows to sort: ${original.length}`);
  await header.locator('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'descending');
  const down = await values();
  assert.deepEqual(down, [...original].sort((a, b) => b - a), 'largest first');
  await header.locator('button').click();
  assert.equal(await header.getAttribute('aria-sort'), 'ascending');
  assert.deepEqual(await values(), [...original].sort((a, b) => a - b), 'smallest first');
  // A text column sorts A to Z (the kernels' names).
  const nameHeader = table.locator('th[data-col="0"]');
  await nameHeader.locator('button').click();
  assert.equal(await nameHeader.getAttribute('aria-sort'), 'ascending');
  assert.equal(await header.getAttribute('aria-sort'), 'none');
  const names = await table.locator('tbody tr td:first-child').evaluateAll((tds) => tds.map((td) => td.textContent.toLowerCase()));
  assert.deepEqual(names, [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), 'names A to Z');
  await table.scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('layout-sorted-table') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('redact hashes the names in the explorer, its CSV and the analyses too', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await load(page);
  const plain = cliJson(['report', '--json', trace(NAME)]);
  const redacted = cliJson(['report', '--json', '--redact', trace(NAME)]);
  const top = plain.top_kernels[0].name;
  const hashed = redacted.top_kernels[0].name;
  assert.match(hashed, /^kernel_[0-9a-f]{6}$/);
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-status[data-metric="explore-matched"]', { timeout: 60_000 });
  await page.selectOption('#explore-kind', 'kernel');
  await page.selectOption('#explore-sort', 'total');
  await page.selectOption('#explore-group', 'name');
  await page.waitForSelector('#explore-table[data-grouped="true"] tr[data-key]');
  const firstKey = () => page.locator('#explore-table tr[data-key]').first().getAttribute('data-key');
  assert.equal(await firstKey(), top, 'the top kernel heads the groups');
  await page.check('#redact-names');
  await page.waitForFunction((h) => document.querySelector('#explore-table tr[data-key]')?.dataset.key === h, hashed);
  const text = await page.locator('#explore').textContent();
  assert.ok(!text.includes(top), 'the explorer no longer names the top kernel');
  assert.ok(text.includes(hashed), `the explorer names it ${hashed}, as the report does`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  assert.ok(!csv.includes(top), 'the CSV does not name the top kernel');
  assert.ok(csv.includes(hashed), 'the CSV names its hash');
  await page.screenshot({ path: screenshotPath('layout-redacted-explorer') });
  // The deeper analyses hash the kernels' names too (the table cells and their data attributes).
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  await page.locator('#analysis-kernel_breakdown > summary').click();
  const deeper = await page.locator('#deeper').evaluate((d) => d.outerHTML);
  assert.ok(!deeper.includes(top.slice(0, 40)), 'the analyses no longer name the top kernel');
  assert.ok(deeper.includes(hashed), `the analyses name ${hashed}`);
  // Off again: the names come back.
  await page.uncheck('#redact-names');
  await openTab(page, 'explore');
  await page.waitForFunction((t) => document.querySelector('#explore-table tr[data-key]')?.dataset.key === t, top);
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a loading shell shows before the app runs; a skip link and visible focus; both colour schemes', async () => {
  const html = fs.readFileSync(path.join(ROOT, 'dist', 'index.html'), 'utf8');
  assert.match(html, /<noscript>[\s\S]*JavaScript[\s\S]*<\/noscript>/, 'a <noscript> message');
  const page = await env.browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // Hold the app's wasm back for a moment: the shell is what shows meanwhile.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route(/profile-model-[^/]*_bg\.wasm/, async (route) => { await held; await route.continue(); });
  await page.goto(env.server.url, { waitUntil: 'commit' });
  await page.waitForSelector('#boot-shell .drop-zone');
  assert.match(await page.locator('#boot-shell').textContent(), /Profile Model[\s\S]*Drop trace files/);
  await page.screenshot({ path: screenshotPath('layout-loading-shell') });
  release();
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  await page.waitForSelector('#boot-shell', { state: 'detached' });
  // The first Tab reaches the skip link; the file pickers show their focus.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'skip-link');
  assert.ok(await page.locator('.skip-link').isVisible(), 'the focused skip link is shown');
  for (let i = 0; i < 6 && await page.evaluate(() => document.activeElement.id) !== 'file-input'; i++) {
    await page.keyboard.press('Tab');
  }
  assert.equal(await page.evaluate(() => document.activeElement.id), 'file-input', 'the file picker takes the focus');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement.closest('label')).outlineStyle);
  assert.equal(outline, 'solid', 'its button shows the focus');
  await page.screenshot({ path: screenshotPath('layout-focus') });
  // Dark: the page follows prefers-color-scheme.
  await load(page);
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const light = await bg();
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await bg();
  const lum = (c) => c.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
  assert.ok(lum(dark) < lum(light) / 3, `dark background ${dark} vs light ${light}`);
  await page.screenshot({ path: screenshotPath('layout-dark-report') });
  await openTab(page, 'timeline');
  await page.waitForSelector('#timeline:not([data-drawn-items="0"])[data-visible-start-us]', { timeout: 60_000 });
  await page.screenshot({ path: screenshotPath('layout-dark-timeline') });
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(errors, [], 'no page errors');
  await page.close();
});

test('outside the report the verdict folds into one line and the view gets the screen', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: 1440, height: 900 });
  await load(page);
  const full = (await page.locator('#verdict').boundingBox()).height;
  const title = (await page.locator('#verdict-title').textContent()).trim();
  await openTab(page, 'timeline');
  await page.waitForSelector('#verdict[data-folded="true"]');
  const folded = (await page.locator('#verdict').boundingBox()).height;
  assert.ok(folded < 80 && folded < full, `the folded verdict is one line (${folded} px, was ${full} px)`);
  assert.equal((await page.locator('#verdict-title').textContent()).trim(), title, 'the same main finding');
  const top = await page.locator('#panel-timeline').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  assert.ok(top < 450, `the timeline starts ${top} px down (< 450 of 900)`);
  await page.screenshot({ path: screenshotPath('layout-verdict-folded') });
  await page.click('#verdict [data-goto-tab="report"]');
  await page.waitForSelector('#verdict:not([data-folded]) .verdict-findings', { timeout: 10_000 });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
