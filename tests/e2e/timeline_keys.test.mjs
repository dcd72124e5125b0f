// The timeline's keyboard in the built page: Enter selects the first event of the top lane, the
// arrow keys walk the events (left/right in time on the lane, up/down between lanes), each step
// showing the event's details. Screenshot: test-output/timeline-keys.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, openTab, cliJson, screenshotPath, trace } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__critical_path_alexnet.json.gz';
const DRAWN = '#timeline:not([data-drawn-items="0"])[data-visible-start-us]:not([data-visible-start-us=""])';

async function selected(page) {
  const d = page.locator('#event-details');
  return {
    row: Number(await d.getAttribute('data-row')),
    start: Number(await d.locator('[data-metric="event-start-us"]').getAttribute('data-value')),
    dur: Number(await d.locator('[data-metric="event-dur-us"]').getAttribute('data-value')),
    name: await d.locator('[data-metric="event-name"]').getAttribute('data-value'),
  };
}

async function press(page, key, before) {
  await page.keyboard.press(key);
  await page.waitForFunction((row) => {
    const d = document.querySelector('#event-details');
    return d && d.dataset.row !== String(row) && d.querySelector('[data-metric="event-start-us"]');
  }, before?.row ?? -1, { timeout: 10_000 });
  return selected(page);
}

test('Enter selects, the arrow keys walk the timeline\'s events', async () => {
  // A range around the longest kernel: a few kernels and their launches are drawn there.
  const k = cliJson(['events', '--kind', 'kernel', '--sort', 'duration', '--desc', '--limit', '1', '--json', trace(NAME)]).rows[0];
  const startNs = Math.round((k.ts_us - 4 * k.dur_us) * 1000);
  const endNs = Math.round((k.ts_us + 5 * k.dur_us) * 1000);
  const { page, errors } = await openPage(env.browser.context, `${env.server.url}#timeline=0:${startNs}-${endNs}`);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  await openTab(page, 'timeline');
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  await canvas.focus();

  const first = await press(page, 'Enter', null);
  const right = await press(page, 'ArrowRight', first);
  assert.ok(right.start >= first.start + first.dur - 0.001,
    `right goes to the next event of the lane: ${JSON.stringify(first)} -> ${JSON.stringify(right)}`);
  const back = await press(page, 'ArrowLeft', right);
  assert.equal(back.row, first.row, 'left comes back');
  const down = await press(page, 'ArrowDown', back);
  assert.notEqual(down.row, back.row, 'down goes to another lane\'s event');
  // Every event the walk reached is the CLI's row of the same start and duration.
  const rows = cliJson(['events', '--limit', '1000000', '--json', trace(NAME)]).rows;
  for (const e of [first, right, down]) {
    const cli = rows.find((r) => r.row === e.row);
    assert.ok(cli, `row ${e.row} is an event of the trace`);
    assert.ok(Math.abs(cli.ts_us - e.start) < 0.01 && cli.name === e.name, `row ${e.row}: ${cli.name} at ${cli.ts_us}`);
  }
  await page.screenshot({ path: screenshotPath('timeline-keys'), fullPage: false });
  await page.keyboard.press('Escape');
  await page.waitForSelector('#event-details', { state: 'detached', timeout: 5000 });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
