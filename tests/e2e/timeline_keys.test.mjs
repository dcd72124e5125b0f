// The timeline's keyboard and search in the built page: Enter selects the first event of the top
// lane, the arrow keys walk the events (left/right in time on the lane, up/down between lanes), each
// step showing the event's details; the search box finds the events whose name contains the text
// (the CLI's count of the same), steps through them ("2 of N") and highlights them; left/right
// reach the lane's next event past the range drawn, and the view pans to it.
// Screenshots: test-output/timeline-keys.png, test-output/timeline-search.png,
// test-output/timeline-walk-out-of-range.png.
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
  for (const e of [first, right, down]) {
    const rows = cliJson(['events', '--exact-name', e.name, '--limit', '10000', '--json', trace(NAME)]).rows;
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

test('left and right reach the next event on the lane wherever it is, and the view follows', async () => {
  // A range inside the longest kernel: little is drawn; the walk goes on past the range's end.
  const k = cliJson(['events', '--kind', 'kernel', '--sort', 'duration', '--desc', '--limit', '1', '--json', trace(NAME)]).rows[0];
  const startNs = Math.round((k.ts_us + 0.4 * k.dur_us) * 1000);
  const endNs = Math.round((k.ts_us + 0.6 * k.dur_us) * 1000);
  const { page, errors } = await openPage(env.browser.context, `${env.server.url}#timeline=0:${startNs}-${endNs}`);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  await openTab(page, 'timeline');
  const canvas = page.locator('#timeline');
  await canvas.scrollIntoViewIfNeeded();
  await canvas.focus();
  let at = await press(page, 'Enter', null);
  const seen = [at];
  for (let i = 0; i < 40 && at.start * 1000 <= endNs; i += 1) {
    const next = await press(page, 'ArrowRight', at);
    assert.ok(next.start >= at.start + at.dur - 0.001, `right goes on in time: ${JSON.stringify(at)} -> ${JSON.stringify(next)}`);
    at = next;
    seen.push(at);
  }
  assert.ok(at.start * 1000 > endNs, `the walk left the range it started in: ${JSON.stringify(seen)}`);
  // The view came along: the selected event is in the visible range.
  await page.waitForFunction((s) => {
    const c = document.querySelector('#timeline');
    return Number(c.dataset.visibleStartUs) <= s && s <= Number(c.dataset.visibleEndUs);
  }, at.start, { timeout: 10_000 });
  // And back: left returns to the event before it.
  const back = await press(page, 'ArrowLeft', at);
  assert.equal(back.row, seen[seen.length - 2].row, 'left comes back');
  await page.screenshot({ path: screenshotPath('timeline-walk-out-of-range'), fullPage: false });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('the search box finds events by name, counts them and steps through them', async () => {
  const TEXT = 'conv';
  // The CLI's events whose name contains the text (any case), by start: what the search must find.
  const cli = cliJson(['events', '--name', TEXT, '--sort', 'start', '--limit', '10000', '--json', trace(NAME)]);
  const timed = cli.rows.filter((r) => r.dur_us !== null && r.ts_us !== null && r.phase === 'X');
  assert.ok(timed.length >= 3, `the trace has ${TEXT} events: ${timed.length}`);
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#verdict', { timeout: 120_000 });
  await openTab(page, 'timeline');
  await page.waitForSelector(DRAWN, { timeout: 120_000 });
  await page.fill('#timeline-search', TEXT);
  await page.press('#timeline-search', 'Enter');
  const count = page.locator('#timeline-search-count');
  await page.waitForSelector('#timeline-search-count[data-current="1"]', { timeout: 30_000 });
  const n = timed.length;
  assert.equal(Number(await count.getAttribute('data-value')), n, 'as many as the CLI finds');
  assert.equal(await count.innerText(), `1 of ${n.toLocaleString('en-US')}`);
  // The first hit is shown: the earliest match (one of those starting first), with its details.
  const firstTs = Math.min(...timed.map((r) => r.ts_us));
  const firstRows = timed.filter((r) => r.ts_us === firstTs).map((r) => String(r.row));
  await page.waitForFunction((rows) => rows.includes(document.querySelector('#event-details')?.dataset.row),
    firstRows, { timeout: 10_000 });
  const shown = page.locator('#timeline');
  const start = Number(await shown.getAttribute('data-visible-start-us'));
  const end = Number(await shown.getAttribute('data-visible-end-us'));
  assert.ok(start <= firstTs && firstTs <= end, `the timeline shows it: ${firstTs} in ${start}-${end}`);
  // The hits are highlighted on the canvas: a mark on the axis band (22 px high, the mark its last 6
  // px) over each hit, the current one orange (#ff8c00), over the event's own x.
  const marks = await page.evaluate(([from, to, ts, dur]) => {
    const c = document.querySelector('#timeline');
    const ratio = c.width / c.clientWidth;
    const y = Math.round((22 - 3) * ratio);
    const px = c.getContext('2d').getImageData(0, y, c.width, 1).data;
    const at = (r, g, b) => {
      const xs = [];
      for (let x = 0; x < c.width; x += 1) {
        const i = x * 4;
        if (Math.abs(px[i] - r) <= 8 && Math.abs(px[i + 1] - g) <= 8 && Math.abs(px[i + 2] - b) <= 8) xs.push(x / ratio);
      }
      return xs;
    };
    const gutter = 170;
    const w = c.clientWidth - gutter;
    const x0 = gutter + ((ts - from) / (to - from)) * w;
    const x1 = gutter + ((ts + dur - from) / (to - from)) * w;
    return { current: at(255, 140, 0), others: at(230, 184, 0), x0, x1 };
  }, [start, end, Number(await page.locator('#event-details [data-metric="event-start-us"]').getAttribute('data-value')),
    Number(await page.locator('#event-details [data-metric="event-dur-us"]').getAttribute('data-value'))]);
  assert.ok(marks.current.length > 0, 'the current hit is marked');
  assert.ok(marks.current.some((x) => x >= marks.x0 - 2 && x <= Math.max(marks.x1, marks.x0 + 2) + 2),
    `the mark is over the event (${marks.x0}-${marks.x1}): ${marks.current.slice(0, 5)}`);
  const visibleHits = timed.filter((r) => r.ts_us + r.dur_us >= start && r.ts_us <= end).length;
  if (visibleHits > 1) assert.ok(marks.others.length > 0, `the other ${visibleHits - 1} hits in view are marked`);
  const firstRow = await page.locator('#event-details').getAttribute('data-row');
  await page.press('#timeline-search', 'Enter');
  await page.waitForSelector('#timeline-search-count[data-current="2"]', { timeout: 10_000 });
  await page.waitForFunction((row) => {
    const d = document.querySelector('#event-details');
    return d && d.dataset.row !== row && d.querySelector('[data-metric="event-start-us"]');
  }, firstRow, { timeout: 10_000 });
  const second = Number(await page.locator('#event-details [data-metric="event-start-us"]').getAttribute('data-value'));
  assert.ok(second >= firstTs, 'the next hit starts no earlier');
  const name = await page.locator('#event-details [data-metric="event-name"]').getAttribute('data-value');
  assert.match(name, /conv/i, 'it is a match');
  assert.equal(await count.innerText(), `2 of ${n.toLocaleString('en-US')}`);
  await page.screenshot({ path: screenshotPath('timeline-search'), fullPage: false });
  await page.click('#timeline-search-prev');
  await page.waitForSelector('#timeline-search-count[data-current="1"]', { timeout: 10_000 });
  await page.click('#timeline-search-prev');
  await page.waitForSelector(`#timeline-search-count[data-current="${n}"]`, { timeout: 10_000 });
  // A text nothing matches.
  await page.fill('#timeline-search', 'no such event name');
  await page.press('#timeline-search', 'Enter');
  await page.waitForFunction(() => document.querySelector('#timeline-search-count')?.innerText === 'No match', null, { timeout: 10_000 });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
