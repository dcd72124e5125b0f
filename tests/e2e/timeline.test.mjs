// The timeline in the built page: it draws the picked rank, wheel/drag/keys change the visible range
// as a Perfetto user expects, a clicked kernel shows its launch (the CLI's row of the same
// correlation) and "Go to it" jumps there; the view lives in the URL hash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, openPage, openTab, cliJson, screenshotPath, trace } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__critical_path_alexnet.json.gz';
const DRAWN = '#timeline:not([data-drawn-items="0"])[data-visible-start-us]:not([data-visible-start-us=""])';

async function range(page) {
  const t = page.locator('#timeline');
  return {
    start: Number(await t.getAttribute('data-visible-start-us')),
    end: Number(await t.getAttribute('data-visible-end-us')),
  };
}

async function settled(page, before) {
  await page.waitForFunction((b) => {
    const t = document.querySelector('#timeline');
    return t && (t.dataset.visibleStartUs !== String(b.start) || t.dataset.visibleEndUs !== String(b.end));
  }, before, { timeout: 10_000 }).catch(() => {});
  return range(page);
}

test('wheel, drag and W/A/S/D change the visible range; the range is in the URL', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const whole = await range(page);
  assert.ok(whole.end > whole.start, 'a range is shown');
  assert.equal(await canvas.getAttribute('data-rank'), '0');

  // Wheel up at the middle of the lanes zooms in around the pointer.
  const midX = box.x + 170 + (box.width - 170) / 2;
  await page.mouse.move(midX, box.y + 30);
  await page.mouse.wheel(0, -300);
  const zoomed = await settled(page, whole);
  assert.ok(zoomed.end - zoomed.start < 0.6 * (whole.end - whole.start), `zoomed in: ${JSON.stringify(zoomed)}`);
  const mid = (whole.start + whole.end) / 2;
  assert.ok(zoomed.start < mid && mid < zoomed.end, 'the time under the pointer stays in view');

  // Dragging left moves later in time by the dragged share of the width.
  await page.mouse.move(midX, box.y + 30);
  await page.mouse.down();
  await page.mouse.move(midX - 100, box.y + 30, { steps: 5 });
  await page.mouse.up();
  const panned = await settled(page, zoomed);
  assert.ok(panned.start > zoomed.start, `panned later: ${zoomed.start} -> ${panned.start}`);
  near(panned.end - panned.start, zoomed.end - zoomed.start, 'the drag keeps the zoom');

  // Keys: W zooms in, S out, D pans right, A left.
  await canvas.focus();
  await page.keyboard.press('w');
  const w = await settled(page, panned);
  assert.ok(w.end - w.start < panned.end - panned.start, 'W zooms in');
  await page.keyboard.press('d');
  const d = await settled(page, w);
  assert.ok(d.start > w.start, 'D pans later');
  await page.keyboard.press('a');
  const a = await settled(page, d);
  assert.ok(a.start < d.start, 'A pans earlier');
  await page.keyboard.press('s');
  const s = await settled(page, a);
  assert.ok(s.end - s.start > a.end - a.start, 'S zooms out');

  // Why the GPU waits: the idle row's causes have a legend; the critical path is one switch away.
  assert.ok(await page.locator('.timeline-legend [data-idle-cause]').count() > 0, 'idle causes in the legend');
  const h0 = (await canvas.boundingBox()).height;
  await page.click('#timeline-critical-path');
  await page.waitForFunction((h) => document.querySelector('#timeline').getBoundingClientRect().height > h, h0);
  near((await canvas.boundingBox()).height - h0, 16, 'the critical path adds one row');

  const hash = await page.evaluate(() => window.location.hash);
  // The range is the hash's `timeline=` part, beside the tab's (`#tab=timeline&timeline=…`).
  assert.match(hash, /^#(.+&)?timeline=0:-?\d+-\d+(&|$)/, hash);
  assert.match(hash, /(^#|&)tab=timeline(&|$)/, hash);
  await page.screenshot({ path: screenshotPath('timeline-navigation'), fullPage: false });
  assert.deepEqual(errors, []);
  await page.close();
});

function near(a, e, what) {
  assert.ok(Math.abs(a - e) <= 1e-6 * Math.max(1, Math.abs(e)) + 0.01, `${what}: ${a} vs ${e}`);
}

test('a clicked kernel shows its launch, and "Go to it" shows the launch', async () => {
  const cli = cliJson(['events', '--kind', 'kernel', '--sort', 'duration', '--desc', '--limit', '1', '--json', trace(NAME)]);
  const k = cli.rows[0];
  const launches = cliJson(['events', '--kind', 'runtime', '--limit', '100000', '--json', trace(NAME)]);
  const launch = launches.rows.find((r) => r.correlation === k.correlation);
  assert.ok(launch, 'the CLI finds the launch of the kernel');
  // Open the page on a range around the kernel (the URL hash names the view).
  const startNs = Math.round(k.ts_us * 1000 - k.dur_us * 1000);
  const endNs = Math.round(k.ts_us * 1000 + 2 * k.dur_us * 1000);
  const { page, errors } = await openPage(env.browser.context, `${env.server.url}#timeline=0:${startNs}-${endNs}`);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  const shown = await range(page);
  near(shown.start, startNs / 1000, 'the hash sets the start');
  const box = await canvas.boundingBox();
  const lanes = box.width - 170;
  const x = 170 + ((k.ts_us + k.dur_us / 2) - shown.start) / (shown.end - shown.start) * lanes;
  let found = false;
  for (let lane = 0; lane < 12 && !found; lane++) {
    await canvas.click({ position: { x, y: 22 + lane * 16 + 8 } });
    found = await page.waitForFunction((name) => document.querySelector('#event-details [data-metric="event-name"]')?.dataset.value === name,
      k.name, { timeout: 1500 }).then(() => true).catch(() => false);
  }
  assert.ok(found, `clicking the kernel ${k.name} shows it`);
  const details = page.locator('#event-details');
  near(Number(await details.locator('[data-metric="event-start-us"]').getAttribute('data-value')), k.ts_us, 'kernel start');
  near(Number(await details.locator('[data-metric="event-dur-us"]').getAttribute('data-value')), k.dur_us, 'kernel duration');
  const partner = details.locator(`li[data-partner-row="${launch.row}"]`);
  assert.equal(await partner.count(), 1, 'its launch is listed');
  await page.screenshot({ path: screenshotPath('timeline-kernel-details'), fullPage: false });
  await partner.locator('button.partner-jump').click();
  await page.waitForFunction((name) => document.querySelector('#event-details [data-metric="event-name"]')?.dataset.value === name,
    launch.name, { timeout: 10_000 });
  near(Number(await details.locator('[data-metric="event-start-us"]').getAttribute('data-value')), launch.ts_us, 'launch start');
  // Escape clears the selection.
  await canvas.focus();
  await page.keyboard.press('Escape');
  await page.waitForSelector('#event-details', { state: 'detached', timeout: 5000 });
  assert.deepEqual(errors, []);
  await page.close();
});

test('"Download for Perfetto" writes the trace with the idle causes and the critical path added', async () => {
  const cli = cliJson(['summary', '--json', trace(NAME)]);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: 60_000 }),
    page.click('#timeline-perfetto'),
  ]);
  assert.match(download.suggestedFilename(), /\.perfetto\.json$/);
  const file = await download.path();
  const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  const events = doc.traceEvents;
  const kernels = events.filter((e) => e.cat === 'kernel');
  assert.equal(kernels.length, cli.kernels, 'every kernel written back');
  assert.ok(events.some((e) => e.cat === 'gpu_idle'), 'idle causes added');
  assert.ok(events.some((e) => e.cat === 'critical_path'), 'critical path added');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a finding\'s "Show on timeline" zooms to its evidence and shows it', async () => {
  const name = 'hta__negative_queue_length__rank0.json.gz';
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(name));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const whole = await range(page);
  // The finding's button is in the report; the timeline's tab comes back once its evidence is found.
  await openTab(page, 'report');
  const button = page.locator('#finding-links button.show-on-timeline').first();
  await button.waitFor({ timeout: 60_000 });
  await button.click();
  await page.waitForSelector('#tab-timeline[aria-selected="true"]', { timeout: 30_000 });
  await page.waitForSelector('#event-details [data-metric="event-start-us"]', { timeout: 30_000 });
  const details = page.locator('#event-details');
  const start = Number(await details.locator('[data-metric="event-start-us"]').getAttribute('data-value'));
  const dur = Number(await details.locator('[data-metric="event-dur-us"]').getAttribute('data-value'));
  const shown = await settled(page, whole);
  assert.ok(shown.end - shown.start < whole.end - whole.start, 'zoomed in');
  assert.ok(shown.start <= start && start + dur <= shown.end + 1e-3,
    `the evidence [${start}, ${start + dur}] is in view [${shown.start}, ${shown.end}]`);
  await page.screenshot({ path: screenshotPath('timeline-finding-evidence'), fullPage: false });
  assert.deepEqual(errors, []);
  await page.close();
});

test('rank lanes: one row per rank with its GPU busy share; a clicked row picks that rank', async () => {
  const files = ['hta__sampled_rank-0.json.gz', 'hta__sampled_rank-1.json.gz'];
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', files.map(trace));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const canvas = page.locator('#timeline');
  assert.equal(await canvas.getAttribute('data-rank'), '0');
  await page.click('#timeline-rank-lanes');
  await page.waitForSelector('#timeline[data-mode="ranks"]', { timeout: 10_000 });
  await page.waitForSelector('[data-metric="rank-lane-busy-pct"][data-rank="1"]', { state: 'attached', timeout: 60_000 });
  const busy = await page.locator('[data-metric="rank-lane-busy-pct"]').evaluateAll(
    (els) => els.map((e) => [e.dataset.rank, Number(e.dataset.value)]));
  assert.deepEqual(busy.map((b) => b[0]), ['0', '1'], 'one row per rank');
  for (const [rank, pct] of busy) {
    assert.ok(pct > 0 && pct <= 100, `rank ${rank}: busy ${pct}%`);
  }
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  assert.ok(Math.abs(box.height - (22 + 2 * 24)) <= 4, `two rank rows under the axis: ${box.height} px`);
  await page.screenshot({ path: screenshotPath('timeline-rank-lanes'), fullPage: false });
  // Rank 1's row: that rank is picked and the lanes come back.
  await canvas.click({ position: { x: 170 + 60, y: 22 + 24 + 12 } });
  await page.waitForSelector('#timeline[data-mode="lanes"][data-rank="1"]', { timeout: 60_000 });
  await page.waitForSelector(DRAWN, { timeout: 60_000 });
  const hash = await page.evaluate(() => window.location.hash);
  assert.match(hash, /(^#|&)timeline=1:/, hash);
  assert.equal(await page.locator('[data-metric="rank-lane-busy-pct"]').count(), 0, 'the mode is left');
  assert.deepEqual(errors, []);
  await page.close();
});

test('shift-drag selects a range: its duration is shown and kept in the URL, a reload restores it, Escape clears it', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const shown = await range(page);
  const y = box.y + 22 + 8;
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + 170 + 100, y);
  await page.mouse.down();
  await page.mouse.move(box.x + 170 + 400, y, { steps: 6 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  const readout = page.locator('[data-metric="selection-dur-us"]');
  await readout.waitFor({ timeout: 10_000 });
  const dur = Number(await readout.getAttribute('data-value'));
  const expected = 300 / (box.width - 170) * (shown.end - shown.start);
  assert.ok(dur > 0, `selection ${dur} µs`);
  assert.ok(Math.abs(dur - expected) <= 0.02 * expected, `selection ${dur} µs, dragged about ${expected} µs`);
  const after = await range(page);
  assert.deepEqual(after, shown, 'a selection does not pan');
  const hash = await page.evaluate(() => window.location.hash);
  assert.match(hash, /(^#|&)sel=-?\d+-\d+(&|$)/, hash);
  await page.screenshot({ path: screenshotPath('timeline-selection'), fullPage: false });

  // A copied link restores the selection.
  const { page: again, errors: errors2 } = await openPage(env.browser.context, `${env.server.url}${hash}`);
  await again.setInputFiles('#file-input', trace(NAME));
  await again.waitForSelector(DRAWN, { timeout: 120_000 });
  const restored = again.locator('[data-metric="selection-dur-us"]');
  await restored.waitFor({ timeout: 10_000 });
  near(Number(await restored.getAttribute('data-value')), dur, 'the restored selection');
  // Escape clears it, in the page and in the URL.
  await again.locator('#timeline').focus();
  await again.keyboard.press('Escape');
  await again.waitForSelector('[data-metric="selection-dur-us"]', { state: 'detached', timeout: 5000 });
  const cleared = await again.evaluate(() => window.location.hash);
  assert.doesNotMatch(cleared, /sel=/, cleared);
  assert.deepEqual(errors, []);
  assert.deepEqual(errors2, []);
  await page.close();
  await again.close();
});

test('rows of Explore and GPU kernels open their event on the timeline; Explore sorts by its headers', async () => {
  const name = 'hta__negative_queue_length__rank0.json.gz';
  const kernels = cliJson(['kernels', '--json', trace(name)])[0].result;
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(name));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  // GPU kernels: the top kernel's button opens its longest call (the row's Max).
  await openTab(page, 'kernels');
  await page.waitForSelector('#views[data-view="kernels"][data-state="ready"]', { timeout: 120_000 });
  const top = kernels.rows[0];
  await page.locator(`#views button.locate[data-locate="${top.name}"]`).first().click();
  await page.waitForSelector('#tab-timeline[aria-selected="true"]', { timeout: 30_000 });
  await page.waitForSelector('#event-details [data-metric="event-dur-us"]', { timeout: 30_000 });
  const dur = Number(await page.locator('#event-details [data-metric="event-dur-us"]').getAttribute('data-value'));
  assert.ok(Math.abs(dur - top.max_us) <= 1e-3 * Math.max(1, top.max_us), `longest call ${dur} = max ${top.max_us}`);
  // Explore: a click on "Dur (µs)" sorts by duration, longest first; the first row opens on the timeline.
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-table', { timeout: 60_000 });
  await page.locator('#explore-table th[data-sort="duration"] button').click();
  await page.waitForSelector('#explore-table th[data-sort="duration"][aria-sort="descending"]', { timeout: 30_000 });
  const durs = await page.locator('#explore-table tbody tr').evaluateAll(
    (trs) => trs.map((tr) => Number(tr.dataset.durUs || 0)));
  assert.deepEqual(durs, [...durs].sort((a, b) => b - a), 'sorted by duration, longest first');
  const first = page.locator('#explore-table tbody tr').first();
  const want = Number(await first.getAttribute('data-dur-us'));
  await first.locator('button.locate').click();
  await page.waitForSelector('#tab-timeline[aria-selected="true"]', { timeout: 30_000 });
  await page.waitForFunction((w) => {
    const el = document.querySelector('#event-details [data-metric="event-dur-us"]');
    return el && Math.abs(Number(el.dataset.value) - w) <= 1e-3 * Math.max(1, w);
  }, want, { timeout: 30_000 });
  assert.deepEqual(errors, []);
  await page.close();
});
