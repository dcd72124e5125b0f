// "Redact names" complete (issue 33): with the switch on, no kernel name, CPU operator name or file name of
// the trace is left anywhere the page shows or hands out: every text node and attribute of every tab
// (titles, aria-labels, data-*), the event details, document.title, and every download (the report's
// Markdown, the explorer's CSV, the Perfetto JSON, the whole table as CSV and Arrow IPC) and its file name.
// The forbidden names are read here from the trace's JSON, not from the page or the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser, openPage, openTab, screenshotPath, trace } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__ns_resolution__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz';
const TABS = ['report', 'overview', 'operators', 'kernels', 'memory', 'modules', 'timeline', 'analyses', 'explore', 'compare', 'sql'];

/** Kernel and cpu_op names of the trace (the profiler's own `ProfilerStep#N` kept: it names no program),
 *  the long identifiers inside kernel names (a shortened name shows them), and the file's name and stem. */
function forbiddenNames(file) {
  const json = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8'));
  const events = Array.isArray(json) ? json : json.traceEvents;
  const names = new Set();
  for (const e of events) {
    if ((e.cat === 'kernel' || e.cat === 'cpu_op') && typeof e.name === 'string' && !e.name.startsWith('ProfilerStep#')) {
      names.add(e.name);
      if (e.cat === 'kernel') {
        for (const id of e.name.match(/[A-Za-z_][A-Za-z0-9_]{15,}/g) || []) names.add(id);
      }
    }
  }
  const base = path.basename(file);
  names.add(base);
  names.add(base.replace(/\.json(\.gz)?$/, ''));
  return [...names].filter((n) => n.length >= 3);
}

/** Every text node, attribute (title, aria-label, data-*, value...), form value and the title of the document. */
async function everythingShown(page) {
  return page.evaluate(() => {
    for (const d of document.querySelectorAll('details')) d.open = true;
    const parts = [document.title];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) parts.push(n.nodeValue);
    for (const el of document.querySelectorAll('*')) {
      for (const a of el.attributes) parts.push(`${a.name}=${a.value}`);
      if ('value' in el && typeof el.value === 'string') parts.push(el.value);
    }
    return parts.join('\n');
  });
}

function leaks(text, names) {
  return names.filter((n) => text.includes(n));
}

async function download(page, click) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), click()]);
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
}

test('with "Redact names" on, no tab, attribute or download names a kernel, an op or the file', async () => {
  const file = trace(NAME);
  const names = forbiddenNames(file);
  assert.ok(names.length > 20, `${names.length} names to look for`);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 120_000 });
  // Unredacted, the page does name them (the test can see a leak).
  const before = await everythingShown(page);
  assert.ok(leaks(before, names).length > 3, 'the unredacted page names kernels, ops and the file');

  await page.check('#redact-names');
  await page.waitForSelector('#report[data-redacted="true"]', { state: 'attached' });
  const found = {};
  for (const tab of TABS) {
    await openTab(page, tab);
    if (['overview', 'operators', 'kernels', 'memory', 'modules'].includes(tab)) {
      await page.waitForSelector(`#views[data-view="${tab}"][data-state="ready"]`, { timeout: 120_000 });
    } else if (tab === 'analyses') {
      await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
    } else if (tab === 'explore') {
      await page.waitForSelector('#explore-status[data-metric="explore-matched"]', { timeout: 60_000 });
    } else if (tab === 'timeline') {
      await page.waitForSelector('#timeline:not([data-drawn-items="0"])[data-drawn-items]', { timeout: 60_000 });
    }
    await page.waitForTimeout(500);
    const l = leaks(await everythingShown(page), names);
    if (l.length) found[tab] = l.slice(0, 5);
  }
  // An event's details (a finding's "Show on timeline" opens them).
  await openTab(page, 'report');
  const show = page.locator('button.show-on-timeline').first();
  if (await show.count()) {
    await show.click();
    await page.waitForSelector('[data-metric="event-name"]', { timeout: 30_000 });
    const l = leaks(await everythingShown(page), names);
    if (l.length) found['event details'] = l.slice(0, 5);
  }
  await page.screenshot({ path: screenshotPath('redact-timeline') });
  assert.deepEqual(found, {}, 'no name of the trace on any tab');

  // Every download, and its file name.
  await openTab(page, 'report');
  const files = { markdown: await download(page, () => page.click('#download-md')) };
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-status[data-metric="explore-matched"]', { timeout: 60_000 });
  files.explorerCsv = await download(page, () => page.click('#export-csv'));
  for (const format of ['csv', 'arrow']) {
    await page.selectOption('#table-format', format);
    files[`table-${format}`] = await download(page, () => page.click('#download-table'));
  }
  await openTab(page, 'timeline');
  files.perfetto = await download(page, () => page.click('#timeline-perfetto'));
  for (const [what, { name, bytes }] of Object.entries(files)) {
    assert.ok(bytes.length > 100, `${what}: ${bytes.length} bytes`);
    assert.deepEqual(leaks(name, names), [], `${what}: its file name ${name}`);
    assert.deepEqual(leaks(bytes.toString('latin1'), names).slice(0, 5), [], `${what}: its content`);
  }
  assert.match(files.markdown.bytes.toString('utf8'), /kernel_[0-9a-f]{6}/, 'the Markdown names kernels by their hash');
  assert.match(files.perfetto.name, /^trace_[0-9a-f]{6}(\.pt\.trace)?\.perfetto\.json$/);
  assert.match(files.perfetto.bytes.toString('utf8'), /"name":"kernel_[0-9a-f]{6}"/, 'the Perfetto file names kernels by their hash');

  // Switched off, the names come back.
  await page.uncheck('#redact-names');
  await openTab(page, 'report');
  assert.ok(leaks(await everythingShown(page), names).length > 3, 'names shown again');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
