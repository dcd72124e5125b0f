// The TensorBoard-style views in the built page: each tab's figures equal the CLI twins'
// (`ops`, `kernels`, `memory`, `steps --json`), with a screenshot of each view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, openPage, openTab, cliJson, near, screenshotPath, trace } from './harness.mjs';

const env = useBrowser();

const NAME = 'hta__df_index_resolver.json.gz';

async function openView(page, id) {
  await openTab(page, id);
  await page.waitForSelector(`#views[data-view="${id}"][data-state="ready"]`, { timeout: 120_000 });
  assert.match(new URL(page.url()).hash, new RegExp(`tab=${id}`), 'the view is in the URL hash');
}

const value = async (loc) => Number(await loc.first().getAttribute('data-value'));

test('overview, operators, kernels, memory and modules equal the CLI twins', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 180_000, state: 'attached' });

  const steps = cliJson(['steps', '--json', trace(NAME)])[0].result;
  await openView(page, 'overview');
  near(await value(page.locator('#views [data-metric="step-total-us"][data-step="average"]')),
    steps.average.total_us, 'average step');
  const first = steps.steps[0];
  const kernelPart = first.parts.find((p) => p[0] === 'kernel')[1];
  near(await value(page.locator(`#views [data-metric="step-part-us"][data-step="${first.step}"][data-category="kernel"]`)),
    kernelPart, 'first step kernel time');
  // The diagnosis in the overview: its bottleneck is the report's, and the window bar's idle
  // causes are the report's idle attribution.
  const report = cliJson(['report', '--json', trace(NAME)]);
  const bottleneck = await page.locator('#views [data-metric="overview-bottleneck"]').getAttribute('data-value');
  assert.ok(bottleneck && bottleneck.length > 0, 'a bottleneck is named');
  for (const share of report.idle_attribution) {
    near(await value(page.locator(`#views [data-metric="overview-idle-us"][data-cause="${share.cause}"]`)),
      share.time_us, `idle ${share.cause}`);
  }
  await page.locator('#views').screenshot({ path: screenshotPath('view-overview') });

  const ops = cliJson(['ops', '--json', trace(NAME)])[0].result.rows;
  await openView(page, 'operators');
  const opRow = page.locator(`#views [data-metric="op-device-total-us"][data-name="${ops[0].name}"]`);
  near(await value(opRow), ops[0].device_total_us, `${ops[0].name} device total`);
  // An operator that launched kernels opens to its call stack and those kernels (the CLI's figures).
  const op = ops.slice(0, 20).find((o) => o.kernels.length > 0 && o.call_stack.length > 0);
  assert.ok(op, 'one of the first operators launched kernels under a call stack');
  const opened = page.locator(`#views details.op-detail[data-name="${op.name}"]`).first();
  await opened.locator('summary').click();
  for (const k of op.kernels) {
    near(await value(opened.locator(`[data-metric="op-kernel-us"][data-kernel="${k.name}"]`)), k.total_us, `${op.name} launched ${k.name}`);
  }
  assert.equal(await opened.locator('.call-stack li').count(), op.call_stack.length + 1, 'the call stack and the operator');
  await page.locator('#views').screenshot({ path: screenshotPath('view-operators') });
  await page.check('#ops-by-shape');
  const byShape = cliJson(['ops', '--by-shape', '--json', trace(NAME)])[0].result.rows;
  const shapeCells = page.locator('#views [data-metric="op-calls"][data-shapes]');
  assert.ok(await shapeCells.count() > 0, 'rows carry their input shapes');
  const firstShape = await shapeCells.first().getAttribute('data-shapes');
  const firstName = await shapeCells.first().getAttribute('data-name');
  const cliRow = byShape.find((r) => r.name === firstName && (r.input_shapes || '') === firstShape);
  assert.ok(cliRow, `${firstName} ${firstShape} is a CLI row`);
  near(await value(shapeCells), cliRow.calls, 'calls by shape');
  await page.fill('#view-filter', 'mm');
  const names = await page.locator('#views [data-metric="op-calls"]').evaluateAll((els) => els.map((e) => e.dataset.name));
  assert.ok(names.length > 0 && names.every((n) => n.toLowerCase().includes('mm')), `filtered: ${names.join(', ')}`);
  await page.fill('#view-filter', '');

  const kernels = cliJson(['kernels', '--json', trace(NAME)])[0].result;
  await openView(page, 'kernels');
  near(await value(page.locator(`#views [data-metric="kernel-total-us"][data-name="${kernels.rows[0].name}"]`)),
    kernels.rows[0].total_us, 'top kernel total');
  await page.locator('#views').screenshot({ path: screenshotPath('view-kernels') });

  const memory = cliJson(['memory', '--json', trace(NAME)])[0].result;
  await openView(page, 'memory');
  for (const d of memory.devices) {
    near(await value(page.locator(`#views dd[data-metric="memory-peak-bytes"][data-device="${d.device}"]`)),
      d.peak_allocated_bytes, `${d.device} peak`);
    near(await value(page.locator(`#views circle[data-metric="memory-curve-peak-bytes"][data-device="${d.device}"]`)),
      d.peak_allocated_bytes, `${d.device} chart peak`);
  }
  // The pointer over the chart's right edge reads the last allocated value.
  const svg = page.locator('#views .chart svg').first();
  const box = await svg.boundingBox();
  await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
  const hover = page.locator('#views [data-metric="memory-hover-bytes"]');
  await hover.waitFor();
  // The first chart is the device's (a GPU before the CPU).
  const d0 = memory.devices.find((d) => d.device_type !== 0) ?? memory.devices[0];
  const last = d0.curve[d0.curve.length - 1].allocated_bytes;
  const read = await value(hover);
  assert.ok(d0.curve.some((p) => p.allocated_bytes === read), `the hover reads a point of the curve (${read})`);
  assert.ok(Math.abs(read - last) <= Math.max(...d0.curve.map((p) => p.allocated_bytes)), 'a value of the chart');
  await page.locator('#views').screenshot({ path: screenshotPath('view-memory') });

  await openView(page, 'modules');
  const said = await page.locator('#views').innerText();
  assert.match(said, /with_stack=True/, 'a trace without module frames says how to record them');
  await page.locator('#views').screenshot({ path: screenshotPath('view-modules') });

  // Redact: the views hash the operators' and kernels' names as the report does.
  await page.check('#redact-names');
  await openView(page, 'kernels');
  const hashedNames = await page.locator('#views [data-metric="kernel-total-us"]').evaluateAll((els) => els.map((e) => e.dataset.name));
  assert.ok(hashedNames.length > 0 && hashedNames.every((n) => /^kernel_[0-9a-f]{6}$/.test(n)), `hashed: ${hashedNames.slice(0, 3)}`);
  assert.ok(!(await page.locator('#views').innerText()).includes(kernels.rows[0].name), 'no kernel name is shown');
  await page.uncheck('#redact-names');

  // A link to a view opens it.
  await page.goto(`${env.server.url}#tab=memory`);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#views[data-view="memory"][data-state="ready"]', { timeout: 180_000 });
  assert.equal(await page.locator('#tab-memory').getAttribute('aria-selected'), 'true');
  assert.deepEqual(errors, []);
  await page.close();
});

// The memory view follows the step picker (its figures the CLI's `memory --steps`), shows the
// device's memory before the host's, and its chart has labelled axes; the step bars have a labelled
// axis; every cause's colour comes from the one palette (src/page/palette.rs), one colour per cause.
// Screenshot: test-output/view-memory-steps.png.
test('the memory view over picked steps, the device first, labelled axes, one palette', async () => {
  const { page, errors } = await openPage(env.browser.context, env.server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 180_000, state: 'attached' });
  await openView(page, 'memory');
  const whole = cliJson(['memory', '--json', trace(NAME)])[0].result;
  const headings = await page.locator('#views h3, #views h4').evaluateAll((els) => els.map((e) => e.textContent.trim()));
  const devices = headings.filter((h) => /^(GPU \d+|CPU)$/.test(h));
  assert.ok(devices.length >= 2 && devices[0].startsWith('GPU') && devices[devices.length - 1] === 'CPU',
    `the device's memory first: ${devices.join(', ')}`);
  // Labelled axes, ticks with units.
  const chart = page.locator('#views .chart').first();
  assert.match(await chart.locator('[data-axis-title="y"]').innerText(), /Memory \(bytes\)/);
  assert.match(await chart.locator('[data-axis-title="x"]').innerText(), /Time/);
  const yTicks = await chart.locator('[data-axis="y"] .tick').allInnerTexts();
  assert.ok(yTicks.length >= 2 && yTicks.slice(1).every((t) => /[KMG]?B$/.test(t)), `y ticks in bytes: ${yTicks}`);
  const xTicks = await chart.locator('[data-axis="x"] .tick').allInnerTexts();
  assert.ok(xTicks.length >= 2 && xTicks.slice(1).every((t) => /(µs|ms|s)$/.test(t)), `x ticks in time: ${xTicks}`);

  // Pick steps 3-4 in the views' picker: the memory view is the CLI's over those steps.
  const picker = '.step-picker[data-place="views"]';
  await page.fill(`${picker} .first-step`, '3');
  await page.fill(`${picker} .last-step`, '4');
  await page.click(`${picker} .apply-steps`);
  await page.waitForSelector(`${picker}[data-views-over="3-4"]`, { timeout: 120_000, state: 'attached' });
  await page.waitForSelector('#views[data-view="memory"][data-state="ready"]', { timeout: 120_000 });
  const chosen = cliJson(['memory', '--json', '--steps', '3..4', trace(NAME)])[0].result;
  assert.ok(chosen.devices.length > 0, 'steps 3-4 hold memory events');
  let differs = false;
  for (const d of chosen.devices) {
    near(await value(page.locator(`#views dd[data-metric="memory-peak-bytes"][data-device="${d.device}"]`)),
      d.peak_allocated_bytes, `${d.device} peak over steps 3-4`);
    const w = whole.devices.find((x) => x.device === d.device);
    if (w.events !== d.events || w.peak_allocated_bytes !== d.peak_allocated_bytes) differs = true;
  }
  assert.ok(differs, 'steps 3-4 are not the whole trace');
  await page.locator('#views').screenshot({ path: screenshotPath('view-memory-steps') });

  // The step bars: an axis with its title and time ticks.
  await openView(page, 'overview');
  assert.match(await page.locator('#views .step-bars [data-axis-title="x"]').innerText(), /Time per step/);
  assert.ok(await page.locator('#views .step-bars [data-axis="x"] .tick').count() >= 2, 'the bars have ticks');

  // One palette: the page's <style id="palette"> colours every cause; no two causes share a colour,
  // and what the page draws takes its colour from it.
  const colours = await page.evaluate(() => {
    const out = {};
    for (const rule of document.getElementById('palette').sheet.cssRules) {
      const m = rule.selectorText.match(/^\.(c-[a-z-]+)$/);
      if (m) out[m[1]] = rule.style.background || rule.style.backgroundColor;
    }
    return out;
  });
  const names = Object.keys(colours);
  assert.ok(names.length >= 20, `the palette's causes: ${names.join(', ')}`);
  assert.equal(new Set(Object.values(colours)).size, names.length, 'one colour per cause');
  const drawn = await page.locator('#views .step-bars .seg').evaluateAll((els) => els.map((e) => {
    const cls = [...e.classList].find((c) => c.startsWith('c-'));
    const probe = document.createElement('i');
    probe.className = cls;
    document.body.appendChild(probe);
    const want = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return [cls, getComputedStyle(e).backgroundColor, want];
  }));
  assert.ok(drawn.length > 0 && drawn.every(([, got, want]) => got === want && got !== 'rgba(0, 0, 0, 0)'),
    `the step bars take the palette's colours: ${JSON.stringify(drawn.slice(0, 3))}`);
  assert.deepEqual(errors, []);
  await page.close();
});
