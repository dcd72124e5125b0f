// The expert's two instruments in the built page: the roofline chart (a point per kernel whose
// TFLOP/s equals `roofline --json`'s, the roof drawn, a point's events one click away) and the
// collectives view (per-rank wait and transfer bars equal to `collectives --json`'s, the rank the
// others wait for marked, the instances sortable by wait).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, launchBrowser, openPage, openTab, cliJson, near, screenshotPath, trace } from './harness.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function openBlock(page, key) {
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 120_000 });
  await page.locator(`#analysis-${key} > summary`).click();
}

test('roofline chart: a point per kernel at the CLI\'s TFLOP/s, under the roof, linked to its events', async () => {
  const NAME = 'hta__amd_mi250_minitoy_train.json.gz';
  const cli = cliJson(['roofline', '--json', trace(NAME)]).ranks[0];
  const drawn = cli.kernels
    .filter((k) => k.calls_with_figures > 0 && k.intensity > 0 && k.tflops > 0)
    .sort((a, b) => b.time_with_figures_us - a.time_with_figures_us);
  assert.ok(drawn.length > 0, 'the trace has kernels with FLOP/byte figures');
  const { page, errors } = await openPage(browser.context, server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await openBlock(page, 'roofline');
  const chart = page.locator('#analysis-roofline figure.roofline');
  await chart.locator('circle.point').first().waitFor({ timeout: 60_000 });
  const points = await chart.locator('circle.point[data-metric="roofline-point-tflops"]').evaluateAll((els) =>
    els.map((e) => ({ kernel: e.dataset.kernel, tflops: Number(e.dataset.value), intensity: Number(e.dataset.intensity), r: Number(e.getAttribute('r')) })));
  assert.equal(points.length, Math.min(drawn.length, 300), 'one point per kernel with figures');
  // The longest kernel: its point's figures are the CLI's, and it is the largest.
  const top = drawn[0];
  const p = points.find((x) => x.kernel === top.name);
  assert.ok(p, `${top.name} is drawn`);
  near(p.tflops, top.tflops, `${top.name} TFLOP/s`);
  near(p.intensity, top.intensity, `${top.name} FLOP/byte`);
  assert.equal(p.r, Math.max(...points.map((x) => x.r)), 'area by time: the longest kernel is the largest point');
  // The roof: one line per element type the kernels use, at the device's peak.
  const roofs = await chart.locator('polyline.roof').evaluateAll((els) =>
    els.map((e) => ({ dtype: e.dataset.dtype, peak: Number(e.dataset.value), n: e.getAttribute('points').trim().split(/\s+/).length })));
  assert.ok(roofs.length > 0, 'the roof is drawn');
  for (const r of roofs) {
    near(r.peak, cli.roof.peaks[r.dtype], `${r.dtype} peak`);
    assert.ok(r.n >= 2, `${r.dtype} roof has a slope or a ceiling`);
  }
  assert.ok(await chart.locator('text', { hasText: 'Arithmetic intensity (FLOP/byte)' }).count() === 1, 'x axis labelled');
  assert.ok(await chart.locator('text', { hasText: 'Achieved TFLOP/s' }).count() === 1, 'y axis labelled');
  assert.ok((await chart.locator('circle.point title').first().textContent()).includes('TFLOP/s'), 'hover title');
  await chart.screenshot({ path: screenshotPath('roofline-chart') });
  // A click on the point shows its figures and opens its events in the explorer.
  // (dispatched: smaller points drawn over the largest may cover its centre)
  await chart.locator('circle.point').first().dispatchEvent('click');
  const readout = chart.locator('.chart-readout');
  await readout.waitFor();
  near(Number(await readout.locator('[data-metric="roofline-picked-tflops"]').getAttribute('data-value')), top.tflops, 'picked point');
  await readout.locator('[data-roofline-events]').click();
  await page.waitForSelector('#tab-explore[aria-selected="true"]', { timeout: 30_000 });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('collectives view: per-rank wait and transfer equal the CLI\'s, the late rank marked, instances sort by wait', async () => {
  const files = ['hta__sampled_rank-0.json.gz', 'hta__sampled_rank-1.json.gz'];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-coll-'));
  files.forEach((f) => fs.symlinkSync(trace(f), path.join(dir, f)));
  const cli = cliJson(['collectives', '--json', dir]);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.ok(cli.split, 'two ranks: wait and transfer split');
  // The late ranks the diagnosis names (report::rules::collectives::named_late): at least 10% of all
  // the wait, and at least twice the wait the median rank causes (a rank never last causes none).
  const total = cli.late_ranks.reduce((s, l) => s + l.caused_wait_ns, 0);
  const ranks = [...new Set([...cli.ranks, ...cli.per_rank.map((r) => r.rank), ...cli.late_ranks.map((l) => l.rank)])];
  const caused = ranks.map((r) => (cli.late_ranks.find((l) => l.rank === r) || { caused_wait_ns: 0 }).caused_wait_ns).sort((a, b) => a - b);
  const median = caused[Math.floor((caused.length - 1) / 2)] || 0;
  const late = cli.late_ranks
    .filter((l) => l.caused_wait_ns > 0 && 100 * l.caused_wait_ns / total >= 10 && l.caused_wait_ns >= 2 * median)
    .slice(0, 4).map((l) => String(l.rank));
  assert.ok(late.length > 0, 'a rank the others wait for');
  const { page, errors } = await openPage(browser.context, server.url);
  await page.setInputFiles('#file-input', files.map(trace));
  await openBlock(page, 'collectives');
  const block = page.locator('#analysis-collectives');
  await block.locator('.rank-bars .bar-row').first().waitFor({ timeout: 60_000 });
  for (const r of cli.per_rank) {
    const row = block.locator(`.rank-bars .bar-row[data-rank="${r.rank}"]`);
    near(await row.locator('[data-metric="collective-bar-wait-us"]').getAttribute('data-value'), r.wait_ns / 1000, `rank ${r.rank} wait`);
    near(await row.locator('[data-metric="collective-bar-transfer-us"]').getAttribute('data-value'), r.transfer_ns / 1000, `rank ${r.rank} transfer`);
  }
  const marked = await block.locator('.rank-bars .bar-row[data-late="true"]').evaluateAll((els) => els.map((e) => e.dataset.rank));
  assert.deepEqual(marked.sort(), [...late].sort(), 'the late ranks are marked');
  await block.locator('.rank-bars').screenshot({ path: screenshotPath('collectives-bars') });
  // The instances, sorted by wait with a click on its header (most first after one click or two).
  await block.locator('details.inner > summary', { hasText: 'instances' }).click();
  const table = block.locator('table.sortable:has(td[data-metric="collective-instance-wait-us"])');
  const col = await table.evaluate((t) => [...t.querySelector('tbody tr').children]
    .findIndex((td) => td.dataset.metric === 'collective-instance-wait-us'));
  const waits = () => table.locator('td[data-metric="collective-instance-wait-us"]').evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const header = table.locator(`th[data-col="${col}"] button`);
  await header.click();
  let got = await waits();
  if (await table.locator(`th[data-col="${col}"]`).getAttribute('aria-sort') !== 'descending') {
    await header.click();
    got = await waits();
  }
  assert.equal(await table.locator(`th[data-col="${col}"]`).getAttribute('aria-sort'), 'descending');
  assert.deepEqual(got, [...got].sort((a, b) => b - a), 'most wait first');
  assert.equal(got.length, Math.min(cli.instances.length, 100), 'every listed instance (at most 100 rows)');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
