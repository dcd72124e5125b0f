// The cache of traces in IndexedDB: nothing is written before Keep; after Keep the tables are stored
// too, the empty page lists them after a reload, and "Open" explores the trace without its file (the
// summary equals the CLI's, the explorer and the timeline answer). A damaged entry, a full quota and
// "Forget saved traces" each say what happened and leave nothing half-stored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useBrowser, openPage, openTab, metric, cliSummary, near, screenshotPath, trace } from './harness.mjs';

const env = useBrowser();

const READY = '#summary[data-state="ready"]';
const EXPLORE_ROWS = '#explore-table tr[data-row], #explore-table tr[data-key]';
const DRAWN = '#timeline:not([data-drawn-items="0"])[data-drawn-items]';
const NAME = 'hta__nccl_data.json.gz';

/** Entries in each object store of the page's database; null when the database does not exist. */
function idbCounts(page) {
  return page.evaluate(async () => {
    const dbs = await indexedDB.databases();
    if (!dbs.some((d) => d.name === 'profile-model')) return null;
    const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
    const db = await req(indexedDB.open('profile-model'));
    const out = {};
    for (const name of db.objectStoreNames) out[name] = await req(db.transaction(name).objectStore(name).count());
    db.close();
    return out;
  });
}

const nothingStored = (counts) => counts === null || Object.values(counts).every((n) => n === 0);

/** A page with an empty cache (the browser profile is shared by the tests). */
async function freshPage(opts) {
  const { page, errors } = await openPage(env.browser.context, env.server.url, opts);
  await page.evaluate(() => new Promise((res) => {
    const r = indexedDB.deleteDatabase('profile-model');
    r.onsuccess = r.onerror = r.onblocked = () => res();
  }));
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  return { page, errors };
}

async function savedBytes(page) {
  return Number(await metric(page, 'saved-bytes', 'footer'));
}

/** Loads NAME, says Keep and waits until its tables are stored; returns the load's time, ms. */
async function loadAndKeep(page) {
  const t0 = Date.now();
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector(READY, { timeout: 120_000 });
  const loadMs = Date.now() - t0;
  await page.waitForSelector('#report', { timeout: 60_000 });
  assert.ok(nothingStored(await idbCounts(page)), 'nothing is written before Keep');
  await page.click('#keep');
  await page.waitForSelector('#kept');
  await page.waitForFunction(
    () => Number(document.querySelector('footer [data-metric="saved-bytes"]')?.dataset.value) > 0,
    null, { timeout: 60_000 },
  );
  return loadMs;
}

test('no write before Keep; Keep, reload, the list shows the trace and Open explores it without the file', async () => {
  const cli = cliSummary(trace(NAME));
  const { page, errors } = await freshPage();
  assert.equal(await idbCounts(page), null, 'listing the saved traces creates no database');
  const loadMs = await loadAndKeep(page);
  const counts = await idbCounts(page);
  assert.equal(counts['saved-index'], 1);
  assert.equal(counts['saved-results'], 1);
  assert.ok(counts['saved-tables'] >= 1, 'one table entry per rank');
  const stored = await savedBytes(page);
  const index = await page.evaluate(async () => {
    const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
    const db = await req(indexedDB.open('profile-model'));
    const all = await req(db.transaction('saved-index').objectStore('saved-index').getAll());
    db.close();
    return JSON.parse(all[0]);
  });
  assert.equal(index.table_bytes.length, counts['saved-tables'], 'the index counts the tables stored');
  assert.equal(index.table_bytes.reduce((a, b) => a + b, 0) + index.results_bytes, stored);

  await page.reload();
  await page.waitForSelector('#saved-traces .saved-entry', { timeout: 30_000 });
  assert.equal(await metric(page, 'saved-count', '#saved-traces'), '1');
  const row = page.locator('#saved-traces .saved-entry').first();
  assert.match(await row.textContent(), new RegExp(NAME.replace(/\./g, '\\.')));
  assert.equal(Number(await metric(page, 'saved-entry-bytes', '#saved-traces')), stored);
  assert.equal(Number(await metric(page, 'saved-file-bytes', '#saved-traces')), fs.statSync(trace(NAME)).size);
  await page.screenshot({ path: screenshotPath('cache-list'), fullPage: true });

  const t0 = Date.now();
  await row.locator('.open-saved').click();
  await page.waitForSelector(READY, { timeout: 120_000 });
  const openMs = Date.now() - t0;
  near(await metric(page, 'events'), cli.events, 'events of the opened trace');
  near(await metric(page, 'kernels'), cli.kernels, 'kernels of the opened trace');
  assert.equal(await page.locator('#summary').getAttribute('data-read-mode'), 'saved');
  assert.equal(await page.locator('#needs-file').count(), 0, 'a worker holds the opened trace');
  await page.waitForSelector('#report', { timeout: 60_000 });
  await openTab(page, 'explore');
  await page.waitForSelector(EXPLORE_ROWS, { timeout: 60_000 });
  assert.ok(await page.locator(EXPLORE_ROWS).count() > 0, 'the explorer returns rows');
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 60_000 });
  assert.ok(Number(await page.locator('#timeline').getAttribute('data-drawn-items')) > 0, 'the timeline draws');
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  console.log(`[cache] ${NAME}: file ${fs.statSync(trace(NAME)).size} B gzip, stored ${stored} B `
    + `(tables ${index.table_bytes.join('+')} B, results ${index.results_bytes} B); load ${loadMs} ms, `
    + `open saved ${openMs} ms`);
  await page.screenshot({ path: screenshotPath('cache-opened'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('dropping the same file offers its saved trace, which opens with a worker', async () => {
  const cli = cliSummary(trace(NAME));
  const { page, errors } = await freshPage();
  await loadAndKeep(page);
  await page.reload();
  await page.waitForSelector('#saved-traces .saved-entry', { timeout: 30_000 });
  await page.setInputFiles('#file-input', trace(NAME));
  await page.click('#show-saved', { timeout: 60_000 });
  await page.waitForSelector(`${READY}[data-read-mode="saved"]`, { timeout: 120_000 });
  near(await metric(page, 'events'), cli.events, 'events');
  await openTab(page, 'explore');
  await page.waitForSelector(EXPLORE_ROWS, { timeout: 60_000 });
  await page.screenshot({ path: screenshotPath('cache-offer'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('a damaged entry says so, is removed, and the page stays as it was', async () => {
  const { page, errors } = await freshPage();
  await loadAndKeep(page);
  // Every table entry overwritten with bytes that are not a table.
  await page.evaluate(async () => {
    const req = (r) => new Promise((res, rej) => { r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
    const db = await req(indexedDB.open('profile-model'));
    const keys = await req(db.transaction('saved-tables').objectStore('saved-tables').getAllKeys());
    const tx = db.transaction('saved-tables', 'readwrite');
    for (const k of keys) tx.objectStore('saved-tables').put(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer, k);
    await new Promise((res) => { tx.oncomplete = res; });
    db.close();
  });
  await page.reload();
  await page.waitForSelector('#saved-traces .saved-entry', { timeout: 30_000 });
  await page.click('#saved-traces .open-saved');
  await page.waitForSelector('p.notice:has-text("could not be read back")', { timeout: 60_000 });
  await page.waitForSelector('#saved-traces', { state: 'detached', timeout: 10_000 });
  assert.equal(await page.locator('.saved-entry').count(), 0, 'the list no longer holds it');
  assert.equal(await savedBytes(page), 0);
  await page.waitForFunction(async () => {
    const req = (r) => new Promise((res) => { r.onsuccess = () => res(r.result); });
    const db = await req(indexedDB.open('profile-model'));
    const n = await req(db.transaction('saved-tables').objectStore('saved-tables').count());
    db.close();
    return n === 0;
  }, null, { timeout: 10_000 });
  await page.screenshot({ path: screenshotPath('cache-corrupt'), fullPage: true });
  assert.deepEqual(errors.filter((e) => !/saved trace unreadable/.test(e)), [], 'no console errors');
  await page.close();
});

test('a full quota: Keep says the storage is full, nothing stays stored and the results stay', async () => {
  const page = await env.browser.context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  await page.goto(env.server.url);
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  await page.evaluate(() => new Promise((res) => {
    const r = indexedDB.deleteDatabase('profile-model');
    r.onsuccess = r.onerror = r.onblocked = () => res();
  }));
  // From the next load on, every write to IndexedDB fails as a full quota does.
  await page.addInitScript(() => {
    IDBObjectStore.prototype.put = function put() {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
  });
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector(READY, { timeout: 120_000 });
  await page.waitForSelector('#report', { timeout: 60_000 });
  const events = await metric(page, 'events');
  await page.click('#keep');
  await page.waitForSelector('p.notice:has-text("storage for this page is full")', { timeout: 30_000 });
  assert.equal(await page.locator('#kept').count(), 0, 'not said to be kept');
  assert.equal(await metric(page, 'events'), events, 'the summary stays');
  assert.ok(await page.locator('#report').isVisible(), 'the report stays');
  await page.waitForTimeout(1000);
  assert.ok(nothingStored(await idbCounts(page)), 'nothing half-stored');
  assert.equal(await savedBytes(page), 0);
  await page.screenshot({ path: screenshotPath('cache-quota'), fullPage: true });
  assert.deepEqual(errors, [], 'no page errors');
  await page.close();
});

test('Forget saved traces shows the bytes used, then clears results, tables and index', async () => {
  const { page, errors } = await freshPage();
  await loadAndKeep(page);
  const before = await savedBytes(page);
  assert.ok(before > 0, 'saved-bytes > 0 before Forget');
  // Forget asks first: dismissed, nothing goes; accepted, everything does.
  page.once('dialog', (d) => d.dismiss());
  await page.click('#forget-saved');
  await page.waitForTimeout(300);
  assert.equal(await savedBytes(page), before, 'a dismissed question forgets nothing');
  page.once('dialog', (d) => d.accept());
  await page.click('#forget-saved');
  await page.waitForSelector('p.notice:has-text("Saved traces forgotten")');
  assert.equal(await savedBytes(page), 0);
  assert.ok(nothingStored(await idbCounts(page)), 'results, tables and index cleared');
  await page.reload();
  await page.waitForSelector('#file-input', { state: 'attached' });
  await page.waitForTimeout(500);
  assert.equal(await page.locator('#saved-traces').count(), 0, 'the list is empty');
  await page.screenshot({ path: screenshotPath('cache-forget'), fullPage: true });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('Forget on one saved trace removes it alone', async () => {
  const { page, errors } = await freshPage();
  await loadAndKeep(page);
  await page.reload();
  await page.waitForSelector('#saved-traces .saved-entry', { timeout: 30_000 });
  assert.equal(await page.locator('#saved-traces .saved-entry').count(), 1);
  await page.click('#saved-traces .forget-entry');
  await page.waitForSelector('p.notice:has-text("Forgot")');
  assert.equal(await page.locator('#saved-traces').count(), 0, 'the list is empty');
  assert.equal(await savedBytes(page), 0);
  for (let i = 0; i < 50 && !nothingStored(await idbCounts(page)); i++) await page.waitForTimeout(100);
  assert.ok(nothingStored(await idbCounts(page)), 'its results and tables left the store');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
