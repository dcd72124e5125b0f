// End-to-end tests of the built page (dist/) in headless Chromium, against the page contract
// (notes/page-contract.md); figures are compared with the native CLI on the same files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  useBrowser, openPage, openTab, metric, cliJson, cliSummary, near, screenshotPath, trace, ROOT,
} from './harness.mjs';

const env = useBrowser();

const READY = '#summary[data-state="ready"]';
const EXPLORE_ANSWERED = '#explore-status[data-metric="explore-matched"]';

async function loadOne(name, timeout = 120_000) {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(name));
  await page.waitForSelector(READY, { timeout });
  return { page, errors };
}

async function compareSummary(page, cli, label) {
  near(await metric(page, 'events'), cli.events, `${label} events`);
  near(await metric(page, 'kernels'), cli.kernels, `${label} kernels`);
  near(await metric(page, 'kernel-time-us'), cli.kernel_time_us, `${label} kernel-time-us`);
  near(await metric(page, 'distinct-kernels'), cli.distinct_kernels, `${label} distinct-kernels`);
  const rows = page.locator('#summary tr[data-kernel]');
  const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-kernel')));
  const expected = cli.top_kernels.map((k) => k.name);
  assert.deepEqual(names, expected.slice(0, names.length), `${label}: top-kernel rows in CLI order`);
  assert.ok(names.length > 0 || expected.length === 0, `${label}: top-kernel rows shown`);
  for (let i = 0; i < names.length; i++) {
    const row = rows.nth(i);
    near(await row.locator('[data-metric="kernel-calls"]').getAttribute('data-value'),
      cli.top_kernels[i].calls, `${label} ${names[i]} calls`);
    near(await row.locator('[data-metric="kernel-total-us"]').getAttribute('data-value'),
      cli.top_kernels[i].total_us, `${label} ${names[i]} total-us`);
  }
}

for (const name of [
  'hta__call_stack_backward_thread.json', // plain .json
  'hta__nccl_data.json.gz', // NCCL collectives
  'hta__amd_mi250_minitoy_train.json.gz', // AMD GPU
]) {
  test(`summary of ${name} equals the CLI's`, async () => {
    const cli = cliSummary(trace(name));
    assert.ok(cli.events > 0, 'CLI read events');
    const { page, errors } = await loadOne(name);
    await compareSummary(page, cli, name);
    // Read (and inflated) by the second worker while the first parsed, not in the worker itself.
    assert.equal(await page.locator('#summary').getAttribute('data-read-mode'), 'reader-worker');
    await page.screenshot({ path: screenshotPath(`summary-${name}`), fullPage: true });
    assert.deepEqual(errors, [], 'no console errors');
    await page.close();
  });
}

// Every other trace of the shared folder (the judged property: correct figures for each of them); the
// non-Kineto files must be refused in plain words.
test('every shared trace: summary equals the CLI\'s, non-Kineto files are refused', async () => {
  const done = new Set(['hta__call_stack_backward_thread.json', 'hta__nccl_data.json.gz',
    'hta__amd_mi250_minitoy_train.json.gz']);
  const dir = path.dirname(trace('x'));
  const names = fs.readdirSync(dir).filter((n) => /\.(json|gz)$/.test(n) && !done.has(n)).sort();
  assert.ok(names.length >= 5, `traces found in ${dir}`);
  for (const name of names) {
    if (/NOT_KINETO/.test(name)) {
      const { page, errors } = await openPage(env.browser.context, env.server.url, { allow: /trace|timeline|kineto/i });
      await page.setInputFiles('#file-input', trace(name));
      await page.waitForFunction(() => (document.querySelector('#error')?.textContent || '').length > 20,
        null, { timeout: 60_000 });
      const text = await page.locator('#error').textContent();
      assert.match(text, /not a|execution trace|memory|Kineto/i, `${name}: refusal says why (${text})`);
      assert.deepEqual(errors, [], `${name}: no console errors`);
      await page.close();
      continue;
    }
    const cli = cliSummary(trace(name));
    const { page, errors } = await loadOne(name);
    await compareSummary(page, cli, name);
    assert.deepEqual(errors, [], `${name}: no console errors`);
    await page.close();
  }
});

test('two ranks: ranks table with per-rank figures equal to the CLI\'s', async () => {
  const files = ['hta__sampled_rank-0.json.gz', 'hta__sampled_rank-1.json.gz'];
  const cli = files.map((f) => cliSummary(trace(f)));
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', files.map(trace));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForSelector('#ranks tr[data-rank="1"]', { timeout: 30_000 });
  const ranks = await page.locator('#ranks tr[data-rank]').evaluateAll(
    (trs) => trs.map((tr) => tr.getAttribute('data-rank')));
  assert.deepEqual(ranks, ['0', '1']);
  for (const [i, c] of cli.entries()) {
    const row = `#ranks tr[data-rank="${i}"]`;
    near(await metric(page, 'rank-events', row), c.events, `rank ${i} events`);
    near(await metric(page, 'rank-kernels', row), c.kernels, `rank ${i} kernels`);
    near(await metric(page, 'rank-kernel-time-us', row), c.kernel_time_us, `rank ${i} kernel-time-us`);
  }
  assert.equal(await page.locator('#summary').getAttribute('data-rank'), '0', 'lowest rank selected');
  await compareSummary(page, cli[0], 'rank 0');
  // Deeper analyses: each figure carries data-metric and its context; they equal `analyze --json` of the folder.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-ranks-'));
  files.forEach((f) => fs.symlinkSync(trace(f), path.join(dir, f)));
  const an = cliJson(['analyze', '--json', dir]);
  fs.rmSync(dir, { recursive: true, force: true });
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  const deep = (name, ctx) => page.locator(`#deeper [data-metric="${name}"]${
    Object.entries(ctx).map(([k, v]) => `[data-${k}="${v}"]`).join('')}`).getAttribute('data-value');
  for (const t of an.temporal_breakdown) {
    near(await deep('temporal-idle-pct', { rank: t.rank }), t.idle_pct, `rank ${t.rank} temporal idle %`);
    near(await deep('temporal-compute-us', { rank: t.rank }), t.compute_us, `rank ${t.rank} compute us`);
  }
  for (const o of an.comm_comp_overlap) {
    near(await deep('overlap-pct', { rank: o.rank }), o.overlap_pct, `rank ${o.rank} overlap %`);
  }
  for (const k of an.kernel_breakdown.by_type_all_ranks) {
    near(await deep('kernel-type-us', { rank: 'all', 'kernel-type': k.kernel_type }), k.time_us, `${k.kernel_type} time`);
  }
  // Per-rank detail follows the rank picked in the summary.
  const path1 = an.critical_path.find((c) => c.rank === 1).result;
  await page.selectOption('#rank-picker', { index: 1 });
  await page.waitForSelector('#deeper [data-metric="critical-path-total-us"][data-rank="1"]', { state: 'attached' });
  near(await deep('critical-path-total-us', { rank: 1 }), path1.total_us, 'rank 1 critical path');
  await page.locator('#analysis-critical_path > summary').click();
  await page.selectOption('#rank-picker', { index: 0 });
  await page.waitForSelector('#deeper [data-metric="critical-path-total-us"][data-rank="0"]', { state: 'attached' });
  assert.ok(await page.locator('#analysis-critical_path').evaluate((d) => d.open), 'an opened block stays open');
  assert.ok(!(await page.locator('#analysis-temporal_breakdown').evaluate((d) => d.open)), 'the others stay closed');
  await page.screenshot({ path: screenshotPath('two-ranks'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('explore events: filter, group, page and export match the CLI; findings open their events; redact', async () => {
  const name = 'hta__nccl_data.json.gz';
  const file = trace(name);
  const cli = cliSummary(file);
  const { page, errors } = await loadOne(name);
  const status = '#explore-status[data-metric="explore-matched"]';
  await openTab(page, 'explore');
  await page.waitForSelector(status, { timeout: 60_000 });
  near(await page.locator(status).getAttribute('data-value'), cli.events, 'all events match at first');
  // Kernels grouped by name, by total time: the CLI's `events` gives the same groups.
  await page.selectOption('#explore-kind', 'kernel');
  await page.waitForFunction((n) => document.querySelector('#explore-status')?.dataset.value === String(n), cli.kernels);
  await page.selectOption('#explore-sort', 'total');
  await page.selectOption('#explore-group', 'name');
  await page.waitForSelector('#explore-table[data-grouped="true"] tr[data-key]');
  const want = cliJson(['events', '--json', '--kind', 'kernel', '--group-by', 'name', '--sort', 'total', '--desc', '--limit', '50', file]);
  const groups = await page.locator('#explore-table tr[data-key]').evaluateAll(
    (trs) => trs.map((tr) => [tr.dataset.key, Number(tr.dataset.count), Number(tr.dataset.totalUs)]));
  assert.deepEqual(groups.map((g) => g[0]), want.groups.map((g) => g.key), 'groups in the CLI order');
  for (const [i, g] of groups.entries()) {
    near(g[1], want.groups[i].count, `${g[0]} count`);
    near(g[2], want.groups[i].total_us, `${g[0]} total`);
  }
  near(await page.locator(status).getAttribute('data-groups'), want.group_count, 'group count');
  // Pages: the next page starts where the first ended.
  await page.click('#explore-next');
  await page.waitForFunction(() => /showing 51–/.test(document.querySelector('#explore-status')?.textContent || ''));
  // Export: every group, as CSV.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
  const csv = fs.readFileSync(await download.path(), 'utf8').trim().split('\n');
  assert.equal(csv.length, want.group_count + 1, 'CSV: header and one line per group');
  assert.match(csv[0], /^name,count,timed,total_us/);
  // A finding's evidence (in the report) opens its events (in the explorer's tab).
  await openTab(page, 'report');
  const links = page.locator('#finding-links button[data-finding]');
  if (await links.count() > 0) {
    await links.first().click();
    await page.waitForSelector('#explore-narrowed');
    assert.equal(await page.locator('#tab-explore').getAttribute('aria-selected'), 'true', 'the explorer is shown');
    const matched = Number(await page.locator(status).getAttribute('data-value'));
    assert.ok(matched > 0 && matched <= cli.events, `a finding's events: ${matched}`);
  }
  // HTA-compatible mode: the deeper figures switch to HTA 0.5.0's definitions and equal HTA's own output.
  const refDir = process.env.PROFILE_MODEL_REF || path.resolve(ROOT, '../shared/ref');
  await openTab(page, 'analyses');
  await page.check('#hta-compat');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="hta-compat"]', { timeout: 60_000 });
  const compat = cliJson(['analyze', '--json', '--compat', 'hta', file]);
  const pageIdle = await page.locator('#deeper [data-metric="temporal-idle-us"][data-rank="0"]').getAttribute('data-value');
  near(pageIdle, compat.temporal_breakdown[0].idle_us, 'HTA-compat idle us (CLI)');
  const hta = JSON.parse(fs.readFileSync(path.join(refDir, 'hta__nccl_data', 'temporal_breakdown.json'), 'utf8'))[0];
  near(pageIdle, hta['idle_time(us)'], 'HTA-compat idle us (HTA 0.5.0)');
  const htaOverlap = JSON.parse(fs.readFileSync(path.join(refDir, 'hta__nccl_data', 'comm_comp_overlap.json'), 'utf8'))[0];
  const pageOverlap = Number(await page.locator('#deeper [data-metric="overlap-pct"][data-rank="0"]').getAttribute('data-value'));
  assert.ok(Math.abs(pageOverlap - htaOverlap.comp_comm_overlap_pctg) < 0.01, `overlap ${pageOverlap} vs HTA ${htaOverlap.comp_comm_overlap_pctg}`);
  await page.uncheck('#hta-compat');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="exact"]', { timeout: 60_000 });
  // Redact: the report names kernels by the CLI's stable hashes, and no longer by their names.
  const top = cli.top_kernels[0].name;
  const redacted = cliJson(['report', '--json', '--redact', file]);
  await page.check('#redact-names');
  await openTab(page, 'report');
  await page.waitForSelector('#report[data-redacted="true"]');
  const text = await page.locator('#report').textContent();
  assert.ok(!text.includes(top), 'the redacted report does not name the top kernel');
  assert.ok(text.includes(redacted.top_kernels[0].name), `the redacted report names ${redacted.top_kernels[0].name}`);
  await page.screenshot({ path: screenshotPath('explore'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a non-Kineto file shows an error and keeps the loaded summary', async () => {
  const good = 'hta__simple_add_kineto.json.gz';
  const cli = cliSummary(trace(good));
  const { page, errors } = await openPage(env.browser.context, env.server.url, { allow: /execution trace/i });
  await page.setInputFiles('#file-input', trace(good));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.setInputFiles('#file-input', trace('hta__simple_add_execution_trace_NOT_KINETO.json.gz'));
  await page.waitForFunction(
    () => /execution trace/i.test(document.querySelector('#error')?.textContent || ''), null, { timeout: 60_000 });
  await page.waitForSelector(READY, { timeout: 10_000 });
  near(await metric(page, 'events'), cli.events, 'good file events after the bad file');
  near(await metric(page, 'kernels'), cli.kernels, 'good file kernels after the bad file');
  // The worker that holds the good file was kept: the explorer and the deeper view still answer.
  await openTab(page, 'explore');
  await page.waitForSelector(EXPLORE_ANSWERED, { timeout: 30_000 });
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="exact"]', { timeout: 60_000 });
  assert.equal(await page.locator('#cancel').count() === 0 || await page.locator('#cancel').isDisabled(), true,
    'no Cancel once the load has ended');
  // The HTA switch keeps the exact analyses: switching back shows them at once.
  await page.check('#hta-compat');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="hta-compat"]', { timeout: 60_000 });
  await page.uncheck('#hta-compat');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="exact"]', { timeout: 2_000 });
  await page.screenshot({ path: screenshotPath('bad-file'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a worker that dies mid-load is reported in plain words; the loaded summary stays; the next load works', async () => {
  const good = 'hta__simple_add_kineto.json.gz';
  const cli = cliSummary(trace(good));
  const { page, errors } = await openPage(env.browser.context, env.server.url, { allow: /simulated worker crash/ });
  // Every worker of this page throws (an uncaught error, as a WebAssembly trap would) when asked to load
  // a file named crash-me.json; any other file loads as usual.
  await page.route('**/worker_loader.js', (route) => route.fulfill({
    contentType: 'text/javascript',
    body: `importScripts("./worker.js"); wasm_bindgen("./worker_bg.wasm");
      self.addEventListener('message', (e) => {
        const d = e.data;
        if (Array.isArray(d) && d[1] && d[1].name === 'crash-me.json') throw new Error('simulated worker crash');
      });`,
  }));
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.setInputFiles('#file-input', trace(good));
  await page.waitForSelector(READY, { timeout: 120_000 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-crash-'));
  try {
    const crash = path.join(dir, 'crash-me.json');
    fs.copyFileSync(trace('hta__call_stack_backward_thread.json'), crash);
    await page.setInputFiles('#file-input', crash);
    await page.waitForFunction(
      () => /worker failed \(.*simulated worker crash.*\)/i.test(document.querySelector('#error')?.textContent || ''),
      null, { timeout: 60_000 });
    assert.match(await page.locator('#error').textContent(), /memory/);
    await page.waitForSelector(READY, { timeout: 10_000 });
    near(await metric(page, 'events'), cli.events, 'the summary loaded before stays');
    // Its worker was kept: the explorer answers about it.
    await openTab(page, 'explore');
    await page.waitForSelector(EXPLORE_ANSWERED, { timeout: 30_000 });
    // A fresh worker takes the next load.
    const other = 'hta__triton_example.json.gz';
    await page.setInputFiles('#file-input', trace(other));
    await page.waitForFunction((n) => document.querySelector('#summary [data-metric="events"]')?.dataset.value === String(n),
      cliSummary(trace(other)).events, { timeout: 60_000 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(errors, [], 'no console errors but the simulated one');
  await page.close();
});

// 1.2 GB of JSON: at 500 MB the page had finished before the test could cancel.
test('a large load keeps the page responsive, shows progress and can be cancelled', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-big-'));
  try {
    const big = path.join(dir, 'big1200.json.gz');
    const maker = process.env.MAKE_BIG_TRACE || path.resolve(ROOT, '../shared/tools/make-big-trace');
    execFileSync('python3', [maker, trace('hta__negative_queue_length__rank0.json.gz'), '--mb', '1200', '-o', big],
      { stdio: 'inherit' });
    const { page, errors } = await openPage(env.browser.context, env.server.url);
    await page.evaluate(() => {
      window.__ticks = [];
      setInterval(() => window.__ticks.push(performance.now()), 20);
      const raf = () => { window.__ticks.push(performance.now()); requestAnimationFrame(raf); };
      requestAnimationFrame(raf);
      // Every change of the progress bar's bytes-done, timed.
      window.__progress = [];
      new MutationObserver((records) => {
        for (const r of records) {
          const v = r.target.getAttribute?.('data-bytes-done');
          const last = window.__progress[window.__progress.length - 1];
          if (v && (!last || last[1] !== v)) window.__progress.push([performance.now(), v]);
        }
      }).observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-bytes-done'] });
    });
    await page.setInputFiles('#file-input', big);
    const t0 = await page.evaluate(() => performance.now());
    const seen = [];
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const [done, phase] = await page.evaluate(() => {
        const p = document.querySelector('#progress');
        return [p?.getAttribute('data-bytes-done'), p?.getAttribute('data-phase')];
      });
      assert.notEqual(phase, 'done', 'load finished before it could be cancelled');
      const n = Number(done);
      if (Number.isFinite(n) && n > 0 && !seen.includes(n)) seen.push(n);
      if (seen.length >= 3) break;
      await page.waitForTimeout(50);
    }
    assert.ok(seen.length >= 3 && seen[2] > seen[0], `data-bytes-done increases: ${seen}`);
    // The progress bar moves at least 4 times a second (measured from the first change, over >= 1 s).
    await page.waitForTimeout(1_000);
    const rate = await page.evaluate(() => {
      const p = window.__progress.map((x) => x[0]);
      const span = (p[p.length - 1] - p[0]) / 1000;
      return { n: p.length, span, perSecond: span > 0 ? (p.length - 1) / span : 0 };
    });
    console.log(`progress: ${rate.perSecond.toFixed(1)} updates/s over ${rate.span.toFixed(2)} s`);
    assert.ok(rate.span >= 0.9 && rate.perSecond >= 4,
      `progress updates ${rate.perSecond.toFixed(1)}/s over ${rate.span.toFixed(1)} s (${rate.n} changes), want >= 4/s`);
    await page.screenshot({ path: screenshotPath('big-load-progress'), fullPage: true });
    await page.click('#cancel');
    await page.waitForFunction(() => /Cancelled/.test(document.body.innerText), null, { timeout: 5_000 });
    const gaps = await page.evaluate((from) => {
      const t = window.__ticks.filter((x) => x >= from).sort((a, b) => a - b);
      let max = 0;
      for (let i = 1; i < t.length; i++) max = Math.max(max, t[i] - t[i - 1]);
      return { max, n: t.length };
    }, t0);
    assert.ok(gaps.n > 5, `ticks ran during the load (${gaps.n})`);
    assert.ok(gaps.max < 200, `longest main-thread gap ${gaps.max.toFixed(0)} ms < 200 ms`);
    await page.waitForTimeout(500);
    assert.notEqual(await page.locator('#summary').getAttribute('data-state'), 'ready', 'cancelled load shows no summary');
    await page.screenshot({ path: screenshotPath('big-load-cancelled'), fullPage: true });
    assert.deepEqual(errors, [], 'no console errors');
    await page.close();

    // The whole file, in a fresh page: the CLI's figures, and the worker's memory well under the JSON's size
    // (the target is half; doubling columns took 0.7x).
    const { page: full, errors: fullErrors } = await openPage(env.browser.context, env.server.url);
    await full.setInputFiles('#file-input', big);
    await full.waitForSelector(READY, { timeout: 300_000 });
    await compareSummary(full, cliSummary(big), 'big1200');
    const text = Number(await metric(full, 'text-bytes'));
    const memory = Number(await metric(full, 'worker-memory-bytes'));
    console.log(`big1200: ${(text / 1e6).toFixed(0)} MB JSON, worker memory ${(memory / 1e6).toFixed(0)} MB (${(memory / text).toFixed(2)}x)`);
    assert.ok(text > 1000e6, `text-bytes ${text}`);
    assert.ok(memory > 0 && memory < 0.6 * text, `worker memory ${memory} for ${text} bytes of JSON`);
    assert.deepEqual(fullErrors, [], 'no console errors');
    await full.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('saved results say what needs the file again; the explorer does not wait for a worker that has no trace', async () => {
  const good = 'hta__simple_add_kineto.json.gz';
  const cli = cliSummary(trace(good));
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(good));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.click('#keep');
  await page.waitForSelector('#kept');
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  // Results kept without their tables (as an older version of the page kept them): the tables and
  // the index entry go (tests/e2e/cache.test.mjs opens a trace whose tables are kept).
  await page.waitForFunction(
    () => Number(document.querySelector('footer [data-metric="saved-bytes"]')?.dataset.value) > 0,
    null, { timeout: 60_000 },
  );
  await page.evaluate(async () => {
    const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
    const db = await req(indexedDB.open('profile-model'));
    const tx = db.transaction(['saved-tables', 'saved-index'], 'readwrite');
    tx.objectStore('saved-tables').clear();
    tx.objectStore('saved-index').clear();
    await new Promise((res) => { tx.oncomplete = res; });
    db.close();
  });
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  await page.setInputFiles('#file-input', trace(good));
  await page.click('#show-saved', { timeout: 60_000 });
  await page.waitForSelector('#needs-file', { timeout: 10_000 });
  await openTab(page, 'report');
  await page.waitForSelector(READY);
  near(await metric(page, 'events'), cli.events, 'saved summary');
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-status[data-state="unavailable"]');
  assert.match(await page.locator('#needs-file').textContent(), /load the trace file again/);
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"][data-mode="exact"]');
  page.once('dialog', (d) => d.accept());
  await page.click('#forget-saved');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a full IndexedDB loses nothing: Keep says the storage is full and the results stay', async () => {
  const page = await env.browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  // Every write to IndexedDB fails as a full quota does.
  await page.addInitScript(() => {
    IDBObjectStore.prototype.put = function put() {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
  });
  await page.goto(env.server.url);
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  const good = 'hta__critical_path_simple_add.json.gz';
  await page.setInputFiles('#file-input', trace(good));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForSelector('#report', { timeout: 60_000 });
  const events = await metric(page, 'events');
  await page.click('#keep');
  await page.waitForSelector('p.notice:has-text("storage for this page is full")', { timeout: 30_000 });
  assert.equal(await page.locator('#kept').count(), 0, 'not said to be kept');
  assert.equal(await metric(page, 'events'), events, 'the summary stays');
  assert.ok(await page.locator('#report').isVisible(), 'the report stays');
  assert.deepEqual(errors, [], 'no page errors');
  await page.close();
});

test('a cut file says so first, and is never called a CPU-only run', async () => {
  const zlib = await import('node:zlib');
  const whole = zlib.gunzipSync(fs.readFileSync(trace('hta__nccl_data.json.gz')));
  const cut = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pm-cut-')), 'cut.json');
  fs.writeFileSync(cut, whole.subarray(0, 300_000));
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', cut);
  await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 120_000 });
  const first = await page.locator('#verdict > *').first().getAttribute('id');
  assert.equal(first, 'verdict-loss', 'the data-loss line is the verdict card\'s first line');
  const loss = await page.locator('#verdict-loss').innerText();
  assert.match(loss, /cut off/i, loss);
  assert.doesNotMatch(loss, /`/, 'plain text, no Markdown backticks');
  const headline = await page.locator('#verdict-title').innerText();
  assert.doesNotMatch(headline, /CPU-only|ran on the CPU/i, headline);
  await page.screenshot({ path: screenshotPath('cut-file'), fullPage: false });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('"Try a sample" loads the 4-rank sample in one click; "How to record a trace" shows the recipe', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.click('#how-to-record > summary');
  assert.match(await page.locator('#how-to-record pre').innerText(), /schedule\(wait=1, warmup=2, active=3\)/);
  await page.click('#try-sample');
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForSelector('#verdict[data-state="ready"]', { timeout: 120_000 });
  const dir = path.join(ROOT, 'samples');
  const report = cliJson(['report', '--json', dir]);
  assert.equal(await page.locator('#verdict').getAttribute('data-main-finding'), report.main_finding_id);
  assert.equal(report.main_finding_id, 'data_loading');
  const cli = cliSummary(dir);
  assert.equal(cli.ranks.length, 4);
  await page.waitForSelector('#ranks tr[data-rank="3"]', { timeout: 30_000 });
  assert.equal(await page.locator('#ranks tr[data-rank]').count(), 4, 'four ranks shown');
  near(await metric(page, 'rank-kernels', '#ranks tr[data-rank="2"]'), cli.ranks[2].kernels, 'rank 2 kernels');
  assert.equal(await page.locator('#try-sample').count(), 0, 'the offer goes once a trace is shown');
  await page.screenshot({ path: screenshotPath('sample'), fullPage: false });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
