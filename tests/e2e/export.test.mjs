// "Download table" in the explorer: the worker builds the whole event table as Parquet, Arrow IPC or CSV;
// the file downloaded has the format's magic bytes, the summary's row count (CSV) and is byte for byte
// the CLI's `profile-model export` of the same trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { useBrowser, openPage, openTab, cliSummary, trace, ROOT } from './harness.mjs';

const env = useBrowser();

function cliPath() {
  return process.env.PROFILE_MODEL_CLI
    || path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release', 'profile-model');
}

/** The CLI's export of `file` in `format`, as bytes. */
function cliExport(file, format) {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pm-export-')), `t.${format}`);
  execFileSync(cliPath(), ['export', '--format', format, file, '-o', out], { stdio: 'pipe' });
  const bytes = fs.readFileSync(out);
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return bytes;
}

/** Records of an RFC 4180 CSV text (quoted fields may hold commas, quotes and line breaks). */
function csvRecords(text) {
  let records = 0;
  let quoted = false;
  let inRecord = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    if (c === '\n' && !quoted) {
      records += 1;
      inRecord = false;
    } else {
      inRecord = true;
    }
  }
  return records + (inRecord ? 1 : 0);
}

const ascii = (bytes, from, to) => Buffer.from(bytes.subarray(from, to)).toString('latin1');

test('download table: Parquet, Arrow IPC and CSV of every event, equal to the CLI export', async () => {
  const name = 'hta__nccl_data.json.gz';
  const file = trace(name);
  const cli = cliSummary(file);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', file);
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 120_000, state: 'attached' });
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-status[data-metric="explore-matched"]', { timeout: 60_000 });
  for (const [format, ending] of [['parquet', '.parquet'], ['arrow', '.arrow'], ['csv', '.csv']]) {
    await page.selectOption('#table-format', format);
    const [download] = await Promise.all([
      page.waitForEvent('download', { timeout: 60_000 }),
      page.click('#download-table'),
    ]);
    assert.ok(download.suggestedFilename().endsWith(ending), `${format}: ${download.suggestedFilename()}`);
    const bytes = fs.readFileSync(await download.path());
    assert.ok(bytes.length > 1000, `${format}: ${bytes.length} bytes`);
    if (format === 'parquet') {
      assert.equal(ascii(bytes, 0, 4), 'PAR1', 'Parquet starts with PAR1');
      assert.equal(ascii(bytes, bytes.length - 4, bytes.length), 'PAR1', 'Parquet ends with PAR1');
    } else if (format === 'arrow') {
      assert.equal(ascii(bytes, 0, 6), 'ARROW1', 'Arrow IPC file starts with ARROW1');
      assert.equal(ascii(bytes, bytes.length - 6, bytes.length), 'ARROW1', 'Arrow IPC file ends with ARROW1');
    } else {
      const text = bytes.toString('utf8');
      assert.match(text, /^name,cat,ph,ts,dur,pid,tid,id,args_/);
      assert.equal(csvRecords(text), cli.events + 1, 'CSV: a header and one record per event of the summary');
    }
    assert.ok(bytes.equals(cliExport(file, format)), `${format}: the page's file is the CLI's, byte for byte`);
  }
  // Redact: the names are hashed and the args left out, as the explorer shows them.
  await page.check('#redact-names');
  await page.selectOption('#table-format', 'csv');
  const [redacted] = await Promise.all([
    page.waitForEvent('download', { timeout: 60_000 }),
    page.click('#download-table'),
  ]);
  const text = fs.readFileSync(await redacted.path()).toString('utf8');
  assert.match(text, /^name,cat,ph,ts,dur,pid,tid,id\n/, 'no args_* column');
  assert.equal(csvRecords(text), cli.events + 1, 'every event is still there');
  assert.match(text, /\nkernel_[0-9a-f]{6},kernel,/, 'kernel names hashed');
  assert.ok(!text.includes('ncclKernel'), 'no kernel name is left');
  await page.uncheck('#redact-names');
  assert.deepEqual(errors, []);
  await page.close();
});
