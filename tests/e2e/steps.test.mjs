// The step picker in the built page: on the 4-rank sample, a picked step range re-runs the
// diagnosis and the views on those steps (their figures equal `report --json --steps A..B` and
// `steps --json --steps A..B`), a range the trace lacks is refused in words, and Automatic goes back
// to the automatic window. Screenshot: test-output/step-picker.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser, openPage, openTab, cliJson, near, screenshotPath, ROOT } from './harness.mjs';

const env = useBrowser();
const SAMPLE = path.join(ROOT, 'samples');
const PICKER = '.step-picker[data-place="report"]';

async function idleCauses(page) {
  const cells = page.locator('#report [data-metric="idle-cause-us"]');
  const out = {};
  for (let i = 0; i < await cells.count(); i += 1) {
    const c = cells.nth(i);
    out[await c.getAttribute('data-cause')] = Number(await c.getAttribute('data-value'));
  }
  return out;
}

function sameIdle(page, cli, what) {
  const want = Object.fromEntries(cli.idle_attribution.map((s) => [s.cause, s.time_us]));
  assert.deepEqual(Object.keys(page).sort(), Object.keys(want).sort(), `${what}: idle causes`);
  for (const [cause, us] of Object.entries(want)) near(page[cause], us, `${what}: idle ${cause}`);
}

async function pick(page, first, last) {
  await page.fill(`${PICKER} .first-step`, String(first));
  await page.fill(`${PICKER} .last-step`, String(last));
  await page.click(`${PICKER} .apply-steps`);
}

test('a picked step range re-runs the diagnosis and the views on those steps', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.click('#try-sample');
  await page.waitForSelector('#report[data-state="ready"]', { timeout: 120_000, state: 'attached' });
  await openTab(page, 'report');
  const auto = cliJson(['report', '--json', SAMPLE]);
  const [a0, b0] = auto.context.steps;
  await page.waitForSelector(`${PICKER}[data-automatic="${a0}-${b0}"]`, { timeout: 60_000 });
  const available = (await page.locator(PICKER).getAttribute('data-available')).split(',').map(Number);
  assert.deepEqual(available, auto.context.step_numbers, 'the steps every rank has');
  assert.equal(await page.inputValue(`${PICKER} .first-step`), String(a0), 'the inputs show the automatic window');
  sameIdle(await idleCauses(page), auto, 'automatic');

  // The first steps (the automatic window may leave them out as warm-up), two of them.
  const [first, last] = [available[0], available[1]];
  const chosen = cliJson(['report', '--json', '--steps', `${first}..${last}`, SAMPLE]);
  assert.ok(chosen.context.steps_chosen);
  await pick(page, first, last);
  await page.waitForSelector(`${PICKER}[data-applied="${first}-${last}"][data-pending=""]`, { timeout: 120_000 });
  assert.match(await page.locator(`${PICKER} .step-status`).innerText(), new RegExp(`steps ${first}-${last}, as picked`));
  assert.match(await page.locator('#report').innerText(), new RegExp(`Analysed: steps ${first}-${last} \\(2 steps, as chosen\\)`));
  assert.equal(await page.locator('#report [data-section="context"]').getAttribute('data-main-finding'),
    chosen.main_finding_id ?? '', 'the main finding over the picked steps');
  sameIdle(await idleCauses(page), chosen, `steps ${first}-${last}`);
  await page.screenshot({ path: screenshotPath('step-picker'), fullPage: false });

  // The views follow the picked steps: the step-time view lists exactly them, with the CLI's figures.
  const steps = cliJson(['steps', '--json', '--steps', `${first}..${last}`, SAMPLE])[0].result;
  assert.deepEqual(steps.steps.map((s) => s.step), [first, last], 'the CLI keeps the picked steps');
  await openTab(page, 'overview');
  await page.waitForSelector(`.step-picker[data-place="views"][data-views-over="${first}-${last}"]`, { timeout: 120_000, state: 'attached' });
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 120_000 });
  near(await page.locator('#views [data-metric="step-total-us"][data-step="average"]').first().getAttribute('data-value'),
    steps.average.total_us, 'average step over the picked steps');
  const shownSteps = await page.locator('#views [data-metric="step-total-us"][data-step]:not([data-step="average"])')
    .evaluateAll((els) => [...new Set(els.map((e) => Number(e.getAttribute('data-step'))))]);
  assert.deepEqual(shownSteps.sort((x, y) => x - y), [first, last], 'the view shows the picked steps only');
  // The operators and GPU kernels views too: every row's calls and device time are the CLI's over
  // the picked steps (`ops --steps`, `kernels --steps`), not over the automatic window.
  const steps2 = `${first}..${last}`;
  const ops = cliJson(['ops', '--json', '--steps', steps2, SAMPLE])[0].result.rows;
  const opsAuto = cliJson(['ops', '--json', SAMPLE])[0].result.rows;
  assert.notEqual(ops[0].calls, opsAuto[0].calls, 'the picked steps hold another number of calls');
  await openTab(page, 'operators');
  await page.waitForSelector('#views[data-view="operators"][data-state="ready"]', { timeout: 120_000 });
  for (const op of ops.slice(0, 5)) {
    const at = (m) => page.locator(`#views [data-metric="${m}"][data-name="${op.name}"]`).first().getAttribute('data-value');
    near(await at('op-calls'), op.calls, `${op.name} calls over steps ${steps2}`);
    near(await at('op-device-total-us'), op.device_total_us, `${op.name} device total over steps ${steps2}`);
  }
  const kernels = cliJson(['kernels', '--json', '--steps', steps2, SAMPLE])[0].result.rows;
  await openTab(page, 'kernels');
  await page.waitForSelector('#views[data-view="kernels"][data-state="ready"]', { timeout: 120_000 });
  for (const k of kernels.slice(0, 5)) {
    const at = (m) => page.locator(`#views [data-metric="${m}"][data-name="${k.name}"]`).first().getAttribute('data-value');
    near(await at('kernel-calls'), k.calls, `${k.name} calls over steps ${steps2}`);
    near(await at('kernel-total-us'), k.total_us, `${k.name} total over steps ${steps2}`);
  }
  await page.screenshot({ path: screenshotPath('step-picker-kernels'), fullPage: false });

  // A range the trace lacks: said beside the picker, nothing changes.
  await openTab(page, 'report');
  await pick(page, 900, 901);
  await page.waitForSelector(`${PICKER} .step-error:has-text("No step in 900-901")`, { timeout: 10_000 });
  assert.equal(await page.locator(PICKER).getAttribute('data-applied'), `${first}-${last}`);

  // Automatic: back to the automatic window's report.
  await page.click(`${PICKER} .automatic-steps`);
  await page.waitForSelector(`${PICKER}[data-applied=""][data-pending=""]`, { timeout: 120_000 });
  sameIdle(await idleCauses(page), auto, 'automatic again');
  assert.deepEqual(errors, [], 'no console errors');
  await page.close();
});
