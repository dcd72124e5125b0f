// A rank set split over several workers (`?ranks-per-worker=1`: one worker per rank) shows what the
// same set loaded in one worker shows: the ranks, the report, the deeper analyses, the explorer, the
// timeline of a rank in another worker and the rank lanes; the progress names every file and its worker.
// The set: 4 ranks made by make-big-trace from a real trace, rank 2 slowed (a straggler).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { useBrowser, openPage, openTab, screenshotPath, trace, TRACES } from './harness.mjs';

const RANKS = 4;
const SLOW_RANK = 2;
const TOOL = path.join(TRACES, '..', 'tools', 'make-big-trace');
const READY = '#summary[data-state="ready"]';
const DRAWN = '#timeline:not([data-drawn-items="0"])[data-drawn-items]';

let dir;
let files = [];
const env = useBrowser({
  prepare: () => {
    if (!fs.existsSync(TOOL)) return false;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-shards-'));
    const python = process.env.PYTHON || 'python3';
    execFileSync(python, [TOOL, trace('hta__negative_queue_length__rank0.json.gz'), '--mb', '3', '--ranks', String(RANKS),
      '--slow-rank', String(SLOW_RANK), '--slow', '1.3', '-o', `${dir}/`]);
    files = [...Array(RANKS).keys()].map((r) => path.join(dir, `rank${r}.json.gz`));
  },
  cleanUp: () => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  },
});

/** Every `[data-metric]` figure in `scope`, with its context attributes, as sorted text lines. */
function figures(page, scope) {
  // Times and the workers' memory differ from run to run and with the split.
  return page.locator(`${scope} [data-metric][data-value]`).evaluateAll((els) => els.filter(
    (e) => !/-ms$|memory-bytes$/.test(e.dataset.metric),
  ).map((e) => {
    const ctx = Object.entries(e.dataset).filter(([k]) => k !== 'value').map(([k, v]) => `${k}=${v}`).join(' ');
    return `${ctx} => ${e.dataset.value}`;
  }).sort());
}

/** Loads the set in a page (split when `query` asks) and reads what it shows. */
async function loadAndRead(query) {
  const { page, errors } = await openPage(env.browser.context, `${env.server.url}${query}`);
  // Record every file bar the progress shows (the load of 4 small files is quick).
  await page.evaluate(() => {
    window.seenBars = {};
    new MutationObserver(() => {
      for (const b of document.querySelectorAll('.file-bar')) window.seenBars[b.dataset.file] = b.dataset.worker;
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await page.setInputFiles('#file-input', files);
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 120_000 });
  const shown = {
    bars: await page.evaluate(() => window.seenBars),
    ranks: await page.locator('#ranks tr[data-rank]').evaluateAll((trs) => trs.map((tr) => tr.dataset.rank)),
    summary: await figures(page, '#summary'),
    verdict: (await page.locator('#verdict').innerText()).trim(),
  };
  await openTab(page, 'report');
  await page.waitForSelector('#report [data-section="main-finding"]', { timeout: 60_000 });
  shown.mainFinding = (await page.locator('#report [data-section="main-finding"]').innerText()).trim();
  shown.report = await figures(page, '#report');
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 120_000 });
  shown.analyses = await figures(page, '#deeper');
  await openTab(page, 'explore');
  await page.selectOption('#explore-kind', 'kernel');
  await page.selectOption('#explore-sort', 'total');
  await page.selectOption('#explore-group', 'name');
  await page.waitForSelector('#explore-table[data-grouped="true"] tr[data-key]', { timeout: 60_000 });
  shown.groups = await page.locator('#explore-table tr[data-key]').evaluateAll((trs) => trs.map((tr) => tr.innerText));
  shown.matched = await page.locator('#explore-status').getAttribute('data-value');
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  await page.click('#timeline-rank-lanes');
  await page.waitForSelector(`[data-metric="rank-lane-busy-pct"][data-rank="${RANKS - 1}"]`, { state: 'attached', timeout: 60_000 });
  shown.lanes = await page.locator('[data-metric="rank-lane-busy-pct"]').evaluateAll(
    (els) => els.map((e) => [e.dataset.rank, Number(e.dataset.value)]));
  // The last rank's row: its timeline comes from its own worker.
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  await canvas.click({ position: { x: 170 + 60, y: 22 + 24 * (RANKS - 1) + 12 } });
  await page.waitForSelector(`#timeline[data-mode="lanes"][data-rank="${RANKS - 1}"]`, { timeout: 60_000 });
  await page.waitForSelector(DRAWN, { timeout: 60_000 });
  shown.lastRankItems = Number(await canvas.getAttribute('data-drawn-items'));
  await page.screenshot({ path: screenshotPath(`shards${query ? '-split' : ''}`), fullPage: false });
  await page.close();
  return { shown, errors };
}

/** The analyses' figures without the kernel medians across ranks (estimated when ranks are apart). */
const exactFigures = (lines) => lines.filter((l) => !/median/.test(l));

/** The same figures with the same values; numbers within 1e-9 relative (a standard deviation pooled over
 *  ranks in separate workers differs in its last bits). */
function sameFigures(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: as many figures`);
  for (const [i, a] of actual.entries()) {
    const [ka, va] = a.split(' => ');
    const [ke, ve] = expected[i].split(' => ');
    assert.equal(ka, ke, `${what}: figure ${i}`);
    const [na, ne] = [Number(va), Number(ve)];
    if (Number.isFinite(na) && Number.isFinite(ne)) {
      assert.ok(Math.abs(na - ne) <= 1e-9 * Math.max(1, Math.abs(ne)), `${what}: ${ka} is ${va}, not ${ve}`);
    } else {
      assert.equal(va, ve, `${what}: ${ka}`);
    }
  }
}

test('a set split over one worker per rank shows what one worker shows', { skip: !fs.existsSync(TOOL) && 'make-big-trace missing' }, async () => {
  const one = await loadAndRead('');
  const split = await loadAndRead('?ranks-per-worker=1');
  assert.deepEqual(split.errors, [], 'no console errors (split)');
  assert.deepEqual(one.errors, [], 'no console errors (one worker)');
  const workers = new Set(Object.values(split.shown.bars));
  assert.equal(workers.size, RANKS, `each file in its own worker: ${JSON.stringify(split.shown.bars)}`);
  assert.deepEqual(split.shown.ranks, ['0', '1', '2', '3']);
  assert.deepEqual(split.shown.ranks, one.shown.ranks);
  assert.deepEqual(split.shown.summary, one.shown.summary, 'summary');
  assert.equal(split.shown.verdict, one.shown.verdict, 'verdict');
  assert.equal(split.shown.mainFinding, one.shown.mainFinding, 'main finding');
  assert.ok(one.shown.report.length > 10, `the report shows figures: ${one.shown.report.length}`);
  assert.deepEqual(split.shown.report, one.shown.report, 'report figures');
  assert.ok(one.shown.analyses.length > 50, `analyses show figures: ${one.shown.analyses.length}`);
  sameFigures(exactFigures(split.shown.analyses), exactFigures(one.shown.analyses), 'analyses');
  // The slowed rank is the busiest against the median.
  const vsMedian = split.shown.analyses.filter((l) => l.includes('metric=rank-busy-vs-median-pct'))
    .map((l) => [Number(/rank=(\d+)/.exec(l)[1]), Number(l.split('=> ')[1])]);
  assert.equal(vsMedian.length, RANKS, vsMedian.join(' '));
  assert.equal(vsMedian.reduce((a, b) => (b[1] > a[1] ? b : a))[0], SLOW_RANK, 'the slowed rank stands out');
  assert.deepEqual(split.shown.groups, one.shown.groups, 'explorer groups');
  assert.equal(split.shown.matched, one.shown.matched, 'explorer matched');
  assert.deepEqual(split.shown.lanes, one.shown.lanes, 'rank lanes');
  assert.equal(split.shown.lastRankItems, one.shown.lastRankItems, 'the last rank\'s timeline');
});
