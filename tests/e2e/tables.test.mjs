// The tables in the built page (issue 33): name columns wide enough for a kernel name at 1440×900
// with no table clipped; every table sorts by its headers (each order checked against the values
// sorted here, independently); Explore's groups equal the CLI's events grouped here; "Show on
// timeline" from Explore, GPU kernels and Operators rows opens the timeline at that rank and time
// with the event selected. Screenshots go to test-output/tables-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { useBrowser, openPage, openTab, cliJson, screenshotPath, trace, ROOT } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__nccl_data.json.gz';
const SAMPLE = path.join(ROOT, 'samples');
const VERDICT = '#verdict[data-state="ready"]';
const WIDTH = 1440;

async function load(page, name = NAME) {
  await page.setInputFiles('#file-input', trace(name));
  await page.waitForSelector(VERDICT, { timeout: 120_000 });
}

async function openView(page, id) {
  await openTab(page, id);
  await page.waitForSelector(`#views[data-view="${id}"][data-state="ready"]`, { timeout: 120_000 });
}

async function openAnalyses(page) {
  await openTab(page, 'analyses');
  await page.waitForSelector('#deeper[data-state="ready"]', { timeout: 60_000 });
  await page.evaluate(() => document.querySelectorAll('#deeper details').forEach((d) => { d.open = true; }));
}

/** Loads the baseline run, then compares it with the candidate picked afterwards. */
async function compareRuns(page) {
  await page.setInputFiles('#file-input', trace('hta__trace_compare_base.json.gz'));
  await page.waitForSelector('#trace-header:has-text("compare_base")', { timeout: 120_000 });
  await page.waitForSelector('#summary[data-state="ready"]', { timeout: 120_000, state: 'attached' });
  await page.setInputFiles('#compare-with', trace('hta__trace_compare_test.json.gz'));
  await page.waitForSelector('#compare[data-state="ready"]', { timeout: 120_000 });
  await openTab(page, 'compare');
}

/** The visible tables under `scope`: each wrapper's overflow and its first name cell's width and title. */
function tableFit(page, scope) {
  return page.evaluate((sel) => {
    const shown = (e) => e.getClientRects().length > 0 && !e.closest('[hidden]');
    return [...document.querySelectorAll(`${sel} table`)].filter(shown).map((t) => {
      const wrap = t.closest('.table-wrap, .table-scroll') || t.parentElement;
      const name = t.querySelector('tbody td.name');
      return {
        where: t.closest('[id]')?.id,
        over: wrap.scrollWidth - wrap.clientWidth,
        nameWidth: name ? name.getBoundingClientRect().width : null,
        first: name ? name.parentElement.firstElementChild === name : false,
        title: name?.getAttribute('title') ?? null,
        text: name?.textContent.trim() ?? null,
      };
    });
  }, scope);
}

test('at 1440×900 the kernels, operators, explore, analyses and comparison tables fit and give names a fifth of the screen', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: WIDTH, height: 900 });
  await load(page);
  const min = 0.2 * WIDTH - 1;
  const check = async (scope, what, { firstNameAtLeast = min } = {}) => {
    const tables = await tableFit(page, scope);
    assert.ok(tables.length > 0, `${what}: tables shown`);
    for (const t of tables) {
      assert.ok(t.over <= 1, `${what} (${t.where}): the table is clipped by ${t.over} px`);
      if (t.nameWidth === null) continue;
      // The title holds the whole name: at least as long as the name shown (a comparison shows a
      // short form, its template arguments without namespaces, tagged "(new)" or "(gone)") and
      // holding its base name.
      const shownName = t.text.replace(/ \((new|gone)\)$/, '');
      const base = shownName.split('<')[0].split('::').pop().trim();
      assert.ok(t.title && t.title.length >= shownName.length && t.title.includes(base),
        `${what}: the name's title holds it whole (title "${t.title}", shown "${t.text}")`);
      if (t.first) assert.ok(t.nameWidth >= firstNameAtLeast, `${what} (${t.where}): the name column is ${t.nameWidth} px (≥ ${firstNameAtLeast})`);
    }
  };
  await openView(page, 'kernels');
  await check('#views', 'GPU kernels');
  // The longest kernel name is shown over two lines and whole in its title.
  const longest = await page.locator('#views td.name.located').evaluateAll((tds) => tds
    .map((td) => ({ title: td.title, lines: Math.round(td.querySelector('.name-text').getBoundingClientRect().height / 14) }))
    .sort((a, b) => b.title.length - a.title.length)[0]);
  assert.ok(longest.title.length > 40 && longest.lines >= 2, `a long name runs over two lines: ${JSON.stringify(longest)}`);
  await page.screenshot({ path: screenshotPath('tables-kernels-1440') });
  await openView(page, 'operators');
  await check('#views', 'Operators');
  await page.screenshot({ path: screenshotPath('tables-operators-1440') });
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-table', { timeout: 60_000 });
  const explore = await tableFit(page, '#explore');
  assert.ok(explore[0].over <= 1, `Explore is clipped by ${explore[0].over} px`);
  const nameCol = await page.locator('#explore-table tbody tr td.name').first().evaluate((td) => td.getBoundingClientRect().width);
  assert.ok(nameCol >= min, `Explore's name column is ${nameCol} px`);
  await page.screenshot({ path: screenshotPath('tables-explore-1440') });
  await openAnalyses(page);
  await check('#deeper', 'Analyses');
  await compareRuns(page);
  await check('#compare', 'Comparison');
  await page.locator('#compare table[data-table="compare-kernel-change"]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('tables-compare-1440') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

/** Per column of a FigureTable or a comparison table: a cell's sort key as the page shows it. */
function cellKeys(table, col, kind) {
  return table.locator('tbody tr').evaluateAll((trs, [c, k]) => trs.map((tr) => {
    const td = tr.children[c];
    if (!td) return null;
    const text = td.textContent.trim();
    const lead = (t) => {
      const m = t.replace(/,/g, '').match(/^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?/);
      return m ? Number(m[0]) : null;
    };
    if (k === 'compare') {
      if (c === 0) return td.querySelector('.name-text').firstChild.textContent.toLowerCase();
      const v = lead(text);
      if (v === null) return -Infinity;
      return c === 3 ? Math.abs(v) : v;
    }
    if (td.dataset.value !== undefined) {
      const v = Number(td.dataset.value);
      return Number.isFinite(v) ? v : null;
    }
    if (td.classList.contains('unknown') || text === '' || text === '(unnamed)') return null;
    if (td.classList.contains('pattern')) return td.querySelector('li')?.textContent.toLowerCase() ?? null;
    if (td.classList.contains('num')) return lead(text) ?? text.toLowerCase();
    return text.toLowerCase();
  }), [col, kind]);
}

/** Ascending order of two keys: numbers before text, missing (null) last either way. */
function inOrder(keys, dir) {
  const sign = dir === 'ascending' ? 1 : -1;
  const cmp = (a, b) => {
    if (a === null || b === null) return (a === null) - (b === null);
    if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
    return sign * (a < b ? -1 : a > b ? 1 : 0);
  };
  return [...keys].sort(cmp);
}

/** Clicks every header of `table` twice and checks the rows' order after each click. */
async function sortsByEveryHeader(table, what, kind = 'figures') {
  const heads = await table.locator('thead th[data-col]').count();
  const original = (await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent))).sort();
  assert.ok(heads > 0 && original.length > 0, `${what}: headers and rows`);
  let checked = 0;
  for (let c = 0; c < heads; c += 1) {
    const th = table.locator(`thead th[data-col="${c}"]`);
    for (let click = 0; click < 2; click += 1) {
      await th.locator('button').click();
      const dir = await th.getAttribute('aria-sort');
      assert.ok(dir === 'ascending' || dir === 'descending', `${what} column ${c}: aria-sort ${dir}`);
      const keys = await cellKeys(table, c, kind);
      let want = inOrder(keys, dir);
      if (kind === 'compare') {
        // The comparison puts missing figures (−∞) first going up and last going down: plain order.
        want = [...keys].sort((a, b) => (dir === 'ascending' ? 1 : -1) * (a < b ? -1 : a > b ? 1 : 0));
      }
      assert.deepEqual(keys, want, `${what} column ${c} ${dir}`);
      checked += 1;
    }
  }
  const after = (await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.textContent))).sort();
  assert.deepEqual(after, original, `${what}: the same rows, reordered`);
  return checked;
}

test('every table sorts by its headers: views, analyses and the comparison', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: WIDTH, height: 900 });
  await load(page);
  let tables = 0;
  for (const id of ['overview', 'operators', 'kernels', 'memory', 'modules']) {
    await openView(page, id);
    const all = page.locator('#views table.sortable');
    for (let i = 0; i < await all.count(); i += 1) {
      await sortsByEveryHeader(all.nth(i), `${id} table ${i}`);
      tables += 1;
    }
  }
  await openAnalyses(page);
  const deeper = page.locator('#deeper table.sortable');
  for (let i = 0; i < await deeper.count(); i += 1) {
    const t = deeper.nth(i);
    const where = await t.evaluate((e) => e.closest('[id]')?.id);
    await sortsByEveryHeader(t, `${where} table ${i}`);
    tables += 1;
  }
  await compareRuns(page);
  const compared = page.locator('#compare table.sortable');
  const names = await compared.evaluateAll((ts) => ts.map((t) => t.dataset.table));
  assert.ok(names.includes('compare-findings'), `the findings table sorts too: ${names}`);
  for (let i = 0; i < await compared.count(); i += 1) {
    const t = compared.nth(i);
    await sortsByEveryHeader(t, `comparison ${await t.getAttribute('data-table')}`, 'compare');
    tables += 1;
  }
  assert.ok(tables >= 10, `${tables} tables sorted`);
  await page.locator('#compare table.sortable').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('tables-compare-sorted') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

/** A minimal CSV reader (quoted fields, doubled quotes). */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { field += '"'; i += 1; } else if (ch === '"') quoted = false; else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(field); field = ''; } else if (ch === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else if (ch !== '\r') field += ch;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

function cliCsv(args) {
  const cli = process.env.PROFILE_MODEL_CLI || path.join(ROOT, 'target', 'release', 'profile-model');
  return parseCsv(execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 512 << 20 }));
}

/** The explorer's rows (or groups) as a list of objects of the header's cells. */
function exploreRows(page) {
  return page.locator('#explore-table').evaluate((t) => {
    const heads = [...t.querySelectorAll('thead th')].map((th) => th.dataset.sort || th.textContent.trim());
    return [...t.querySelectorAll('tbody tr')].map((tr) => {
      const o = { ...tr.dataset };
      [...tr.children].forEach((td, i) => { o[heads[i]] = td.textContent.trim(); });
      return o;
    });
  });
}

const num = (t) => Number(String(t).replace(/,/g, ''));

/** A shown cell as a sort key: a number (its grouping commas out), a text, or null when empty. */
const shownKey = (text, numeric) => {
  const t = (text ?? '').trim();
  if (t === '' || t === '–') return null;
  return numeric ? num(t) : t;
};

/** Clicks Explore's header `by` (twice: both ways), waits for the new order, returns [dir, keys, rows] each time. */
async function clickHeader(page, by, field, numeric) {
  const th = page.locator(`#explore-table th[data-sort="${by}"]`);
  const out = [];
  for (let click = 0; click < 2; click += 1) {
    const before = await th.getAttribute('aria-sort');
    await th.locator('button').click();
    await page.waitForFunction(([b, was]) => {
      const a = document.querySelector(`#explore-table th[data-sort="${b}"]`)?.getAttribute('aria-sort');
      return a && a !== 'none' && a !== was;
    }, [by, before], { timeout: 60_000 });
    const dir = await th.getAttribute('aria-sort');
    // The form shows the header's order too (its Apply keeps it).
    assert.equal(await page.inputValue('#explore-sort'), by, `the form's "Sort by" follows the ${by} header`);
    assert.equal(await page.isChecked('#explore-desc'), dir === 'descending', `the form's "descending" follows the ${by} header`);
    const rows = await exploreRows(page);
    out.push([dir, rows.map((r) => shownKey(r[field], numeric)), rows]);
  }
  return out;
}

/** The first key of `keys` sorted `dir` (missing last either way). */
const extreme = (keys, dir) => inOrder(keys, dir)[0];

function sameKey(got, want, what) {
  if (typeof want === 'number' && typeof got === 'number') {
    assert.ok(Math.abs(got - want) <= 1e-3 * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);
  } else {
    assert.equal(got, want, what);
  }
}

test('Explore: every header sorts the events and the groups (aria-sort); groups equal the CLI\'s events grouped here', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: WIDTH, height: 900 });
  await page.click('#try-sample');
  await page.waitForSelector(VERDICT, { timeout: 120_000 });
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-table', { timeout: 60_000 });
  // Every event (kinds with and without a stream, with and without args).
  const all = cliCsv(['events', '--csv', SAMPLE]);
  await page.waitForFunction((n) => document.querySelector('#explore-status')?.dataset.value === String(n), all.length, { timeout: 30_000 });
  // Rows: every header, both ways: the shown values in order, the first one the CLI's extreme
  // value of that column over every event (computed here, missing values last).
  const cliKey = {
    rank: (e) => Number(e.rank),
    duration: (e) => (e.dur_us === '' ? null : Number(e.dur_us)),
    kind: (e) => e.kind,
    stream: (e) => (e.stream === '' ? null : Number(e.stream)),
    name: (e) => e.name,
    args: (e) => (e.args === '' ? null : e.args),
  };
  const columns = [['rank', true], ['start', true], ['duration', true], ['kind', false], ['stream', true], ['name', false], ['args', false]];
  const heads = await page.locator('#explore-table thead th[data-sort]').evaluateAll((ths) => ths.map((th) => th.dataset.sort));
  assert.deepEqual(heads, columns.map((c) => c[0]), 'every column but the button has a sort key');
  for (const [by, numeric] of columns) {
    for (const [dir, keys, rows] of await clickHeader(page, by, by, numeric)) {
      assert.ok(keys.length > 0, `events by ${by}: rows shown`);
      if (by === 'start') {
        // The start shown is from its rank's first event (each rank on its own clock): in order per rank.
        const ranks = rows.map((r) => r.rank);
        for (const rank of new Set(ranks)) {
          const mine = keys.filter((_, i) => ranks[i] === rank);
          assert.deepEqual(mine, inOrder(mine, dir), `events by start, ${dir}, rank ${rank}`);
        }
        continue;
      }
      assert.deepEqual(keys, inOrder(keys, dir), `events by ${by}, ${dir}`);
      if (cliKey[by]) sameKey(keys[0], extreme(all.map(cliKey[by]), dir), `events by ${by}, ${dir}: the first of all`);
    }
    if (by === 'stream') await page.screenshot({ path: screenshotPath('tables-explore-by-stream') });
  }
  await page.screenshot({ path: screenshotPath('tables-explore-sorted') });
  // Kernels only, as the groups below.
  await page.selectOption('#explore-kind', 'kernel');
  const events = all.filter((e) => e.kind === 'kernel');
  await page.waitForFunction((n) => document.querySelector('#explore-status')?.dataset.value === String(n), events.length, { timeout: 30_000 });
  // Groups by name and by rank: count and total equal the CLI's rows grouped here; every header sorts.
  for (const [group, field] of [['name', 'name'], ['rank', 'rank']]) {
    await page.selectOption('#explore-group', group);
    await page.waitForSelector(`#explore-table[data-grouped="true"] th[data-sort="name"]:has-text("${group}")`, { timeout: 30_000 });
    const want = new Map();
    let matched = 0;
    for (const e of events) {
      const key = group === 'rank' ? `rank ${e.rank}` : e[field];
      const g = want.get(key) ?? { count: 0, total: 0, min: Infinity, max: -Infinity };
      const d = Number(e.dur_us);
      g.count += 1;
      g.total += d;
      g.min = Math.min(g.min, d);
      g.max = Math.max(g.max, d);
      matched += d;
      want.set(key, g);
    }
    const groups = await exploreRows(page);
    assert.equal(Number(await page.locator('#explore-status').getAttribute('data-groups')), want.size, `${group}: groups`);
    for (const g of groups) {
      const w = want.get(g.key);
      assert.ok(w, `${group} ${g.key} is a group of the CLI's rows`);
      assert.equal(num(g.count), w.count, `${group} ${g.key}: count`);
      assert.ok(Math.abs(Number(g.totalUs) - w.total) <= 1e-6 * Math.max(1, w.total) + 1e-3, `${group} ${g.key}: total ${g.totalUs} vs ${w.total}`);
      sameKey(num(g.min), w.min, `${group} ${g.key}: min`);
      const share = 100 * w.total / matched;
      assert.ok(Math.abs(num(g.share) - share) <= 0.006, `${group} ${g.key}: share ${g.share} vs ${share}`);
    }
    const value = {
      count: (w) => w.count,
      total: (w) => w.total,
      mean: (w) => w.total / w.count,
      min: (w) => w.min,
      max: (w) => w.max,
      share: (w) => 100 * w.total / matched,
    };
    for (const by of ['count', 'total', 'mean', 'min', 'max', 'share', 'name']) {
      for (const [dir, keys, rows] of await clickHeader(page, by, by, by !== 'name')) {
        assert.deepEqual(keys, inOrder(keys, dir), `${group} groups by ${by}, ${dir}`);
        if (by === 'name') continue;
        // The first group is the one with the extreme value over every group computed here.
        const firstKey = rows[0].key;
        const best = extreme([...want.values()].map(value[by]), dir);
        sameKey(value[by](want.get(firstKey)), best, `${group} groups by ${by}, ${dir}: the first`);
      }
    }
  }
  await page.screenshot({ path: screenshotPath('tables-explore-grouped') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

/** The timeline after a "Show on timeline": its rank, the event selected, and the range shown. */
async function shownOnTimeline(page) {
  await page.waitForSelector('#tab-timeline[aria-selected="true"]', { timeout: 30_000 });
  await page.waitForSelector('#event-details [data-metric="event-start-us"]', { timeout: 30_000 });
  await page.waitForFunction(() => {
    const t = document.querySelector('#timeline');
    const d = document.querySelector('#event-details [data-metric="event-start-us"]');
    if (!t || !d || t.dataset.visibleStartUs === undefined || t.dataset.visibleStartUs === '') return false;
    const s = Number(d.dataset.value);
    return Number(t.dataset.visibleStartUs) <= s && s <= Number(t.dataset.visibleEndUs);
  }, null, { timeout: 30_000 }).catch(() => {});
  return page.evaluate(() => {
    const t = document.querySelector('#timeline');
    const d = document.querySelector('#event-details');
    return {
      rank: Number(t.dataset.rank),
      picked: Number(document.querySelector('#rank-picker option:checked')?.dataset.rank),
      start: Number(t.dataset.visibleStartUs),
      end: Number(t.dataset.visibleEndUs),
      row: Number(d.dataset.row),
      name: d.querySelector('[data-metric="event-name"]').dataset.value,
      ts: Number(d.querySelector('[data-metric="event-start-us"]').dataset.value),
      dur: Number(d.querySelector('[data-metric="event-dur-us"]').dataset.value),
    };
  });
}

/** The window the report analysed on `rank` (ns): the automatic one, or over `steps` ("A..B"). */
function analysedWindow(rank, steps) {
  const args = ['report', '--json', ...(steps ? ['--steps', steps] : []), SAMPLE];
  const w = cliJson(args).context.windows.find((x) => x.rank === rank);
  return [w.start_ns, w.end_ns];
}

/** The CLI's events named `name` of `kind` on `rank`, each with the start of what launched it. */
function eventsNamed(rank, kind, name) {
  const rows = cliJson(['events', '--rank', String(rank), '--kind', kind, '--exact-name', name,
    '--limit', '10000', '--json', SAMPLE]).rows;
  if (kind !== 'kernel') return rows;
  const launches = new Map(cliJson(['events', '--rank', String(rank), '--kind', 'runtime', '--limit', '10000',
    '--json', SAMPLE]).rows.map((r) => [r.correlation, r.ts_us]));
  return rows.map((r) => ({ ...r, launch_us: launches.get(r.correlation) }));
}

/**
 * The longest events named `name` of `kind` on `rank` inside the report's analysed window (over
 * `steps` when given), computed here: a CPU op starting in it, a kernel starting or launched in it;
 * over the whole trace when none is inside.
 */
function longest(rank, kind, name, steps) {
  const rows = eventsNamed(rank, kind, name);
  const [s, e] = analysedWindow(rank, steps);
  const inWindow = (us) => us !== undefined && Math.round(us * 1000) >= s && Math.round(us * 1000) < e;
  const inside = rows.filter((r) => inWindow(r.ts_us) || inWindow(r.launch_us));
  const pool = inside.length > 0 ? inside : rows;
  const max = Math.max(...pool.map((r) => r.dur_us));
  return { max, rows: pool.filter((r) => r.dur_us === max), window: [s, e], outside: inside.length === 0, all: rows };
}

function sameEvent(at, rank, want, what) {
  assert.equal(at.rank, rank, `${what}: the timeline shows rank ${rank}`);
  assert.equal(at.picked, rank, `${what}: rank ${rank} is picked`);
  const row = want.rows.find((r) => r.row === at.row);
  assert.ok(row, `${what}: the selected event (row ${at.row}) is one of rank ${rank}'s longest (${want.rows.map((r) => r.row)})`);
  assert.ok(Math.abs(at.dur - want.max) <= 1e-3, `${what}: duration ${at.dur} = ${want.max}`);
  assert.ok(Math.abs(at.ts - row.ts_us) <= 1e-3, `${what}: start ${at.ts} = ${row.ts_us}`);
  assert.ok(at.start <= at.ts && at.ts + at.dur <= at.end + 1e-3, `${what}: [${at.ts}, ${at.ts + at.dur}] in view [${at.start}, ${at.end}]`);
}

test('"Show on timeline" from GPU kernels, Operators and Explore rows opens that rank and time with the event selected', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: WIDTH, height: 900 });
  await page.click('#try-sample');
  await page.waitForSelector(VERDICT, { timeout: 120_000 });
  const RANK = 2;
  const index = await page.locator(`#rank-picker option[data-rank="${RANK}"]`).getAttribute('value');
  // GPU kernels of rank 2: the top row's button.
  await openView(page, 'kernels');
  await page.selectOption('#rank-picker', index);
  await page.waitForSelector('#views[data-view="kernels"][data-state="ready"]', { timeout: 60_000 });
  const kernel = await page.locator('#views td.name.located').first().getAttribute('title');
  await page.locator('#views td.name.located button.locate').first().click();
  const k = await shownOnTimeline(page);
  sameEvent(k, RANK, longest(RANK, 'kernel', kernel), `kernel ${kernel}`);
  await page.screenshot({ path: screenshotPath('tables-kernel-on-timeline') });
  // Operators of rank 2.
  await openView(page, 'operators');
  const op = await page.locator('#views td.name.located').first().getAttribute('title');
  await page.locator('#views td.name.located button.locate').first().click();
  const o = await shownOnTimeline(page);
  sameEvent(o, RANK, longest(RANK, 'cpu_op', op), `operator ${op}`);
  // Explore: the longest kernel of rank 3 (another rank than the one picked).
  await openTab(page, 'explore');
  await page.waitForSelector('#explore-table', { timeout: 60_000 });
  await page.selectOption('#explore-kind', 'kernel');
  await page.waitForSelector('#explore-table tbody tr[data-rank="3"]', { timeout: 30_000 });
  const row = page.locator('#explore-table tbody tr[data-rank="3"]').first();
  const wantRow = Number(await row.getAttribute('data-row'));
  const wantName = await row.locator('td.name').getAttribute('title');
  await row.locator('button.locate').click();
  const e = await shownOnTimeline(page);
  assert.equal(e.rank, 3, 'Explore: the timeline shows rank 3');
  assert.equal(e.picked, 3, 'Explore: rank 3 is picked');
  assert.equal(e.row, wantRow, 'Explore: that event is selected');
  assert.equal(e.name, wantName, 'Explore: the event named');
  assert.ok(e.start <= e.ts && e.ts + e.dur <= e.end + 1e-3, `Explore: the event is in view`);
  await page.screenshot({ path: screenshotPath('tables-explore-on-timeline') });
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});

test('"Show on timeline" from a GPU kernels or Operators row picks the longest event inside the picked steps', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setViewportSize({ width: WIDTH, height: 900 });
  const RANK = 2;
  // The top kernel and operator of rank 2, and a step that does not hold their longest call over the
  // whole trace (so a pick over the whole trace would be wrong).
  const auto = cliJson(['report', '--json', SAMPLE]);
  const steps = auto.context.step_numbers;
  const kernel = cliJson(['kernels', '--json', SAMPLE]).find((r) => r.rank === RANK).result.rows[0].name;
  const whole = eventsNamed(RANK, 'kernel', kernel);
  const top = whole.reduce((a, b) => (b.dur_us > a.dur_us ? b : a));
  const step = steps.find((n) => {
    const [s, e] = analysedWindow(RANK, `${n}..${n}`);
    const t = Math.round(top.ts_us * 1000);
    return !(t >= s && t < e) && !longest(RANK, 'kernel', kernel, `${n}..${n}`).outside;
  });
  assert.ok(step !== undefined, `a step without kernel ${kernel}'s longest call (steps ${steps})`);
  const picked = `${step}..${step}`;
  await page.click('#try-sample');
  await page.waitForSelector(VERDICT, { timeout: 120_000 });
  await openTab(page, 'report');
  const PICKER = '.step-picker[data-place="report"]';
  await page.waitForSelector(PICKER, { timeout: 60_000 });
  await page.fill(`${PICKER} .first-step`, String(step));
  await page.fill(`${PICKER} .last-step`, String(step));
  await page.click(`${PICKER} .apply-steps`);
  await page.waitForSelector(`${PICKER}[data-applied="${step}-${step}"][data-pending=""]`, { timeout: 120_000 });
  const index = await page.locator(`#rank-picker option[data-rank="${RANK}"]`).getAttribute('value');
  await page.selectOption('#rank-picker', index);
  await openView(page, 'kernels');
  await page.waitForSelector(`.step-picker[data-place="views"][data-views-over="${step}-${step}"]`, { timeout: 120_000, state: 'attached' });
  await page.waitForSelector('#views[data-view="kernels"][data-state="ready"]', { timeout: 120_000 });
  await page.locator(`#views button.locate[data-locate="${kernel}"]`).first().click();
  const k = await shownOnTimeline(page);
  const want = longest(RANK, 'kernel', kernel, picked);
  assert.ok(!want.outside, `kernel ${kernel} runs in step ${step}`);
  sameEvent(k, RANK, want, `kernel ${kernel} in step ${step}`);
  assert.notEqual(k.row, top.row, 'not the longest call over the whole trace');
  assert.equal(await page.locator('#timeline-outside-window').count(), 0, 'inside the window: no notice');
  await page.screenshot({ path: screenshotPath('tables-kernel-on-timeline-in-steps') });
  // The top operator of the view over that step.
  await openView(page, 'operators');
  const op = await page.locator('#views td.name.located').first().getAttribute('title');
  await page.locator('#views td.name.located button.locate').first().click();
  const o = await shownOnTimeline(page);
  const wantOp = longest(RANK, 'cpu_op', op, picked);
  sameEvent(o, RANK, wantOp, `operator ${op} in step ${step}`);
  const [s, e] = wantOp.window;
  assert.ok(!wantOp.outside && Math.round(o.ts * 1000) >= s && Math.round(o.ts * 1000) < e,
    `operator ${op}: starts in step ${step} [${s}, ${e}) ns`);
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
