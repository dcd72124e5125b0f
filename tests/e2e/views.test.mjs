// The TensorBoard-style views in the built page: each tab's figures equal the CLI twins'
// (`ops`, `kernels`, `memory`, `steps --json`), with a screenshot of each view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openPage, cliJson, near, screenshotPath, trace } from './harness.mjs';

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

const NAME = 'hta__df_index_resolver.json.gz';

async function openView(page, id) {
  await page.click(`#view-${id}`);
  await page.waitForSelector(`#views[data-view="${id}"][data-state="ready"]`, { timeout: 120_000 });
}

const value = async (loc) => Number(await loc.first().getAttribute('data-value'));

test('overview, operators, kernels, memory and modules equal the CLI twins', async () => {
  const { page, errors } = await openPage(browser.context, server.url);
  await page.setInputFiles('#file-input', trace(NAME));
  await page.waitForSelector('#views[data-state="ready"]', { timeout: 180_000 });

  const steps = cliJson(['steps', '--json', trace(NAME)])[0].result;
  await openView(page, 'overview');
  near(await value(page.locator('#views [data-metric="step-total-us"][data-step="average"]')),
    steps.average.total_us, 'average step');
  const first = steps.steps[0];
  const kernelPart = first.parts.find((p) => p[0] === 'kernel')[1];
  near(await value(page.locator(`#views [data-metric="step-part-us"][data-step="${first.step}"][data-category="kernel"]`)),
    kernelPart, 'first step kernel time');
  await page.locator('#views').screenshot({ path: screenshotPath('view-overview') });

  const ops = cliJson(['ops', '--json', trace(NAME)])[0].result.rows;
  await openView(page, 'operators');
  const opRow = page.locator(`#views [data-metric="op-device-total-us"][data-name="${ops[0].name}"]`);
  near(await value(opRow), ops[0].device_total_us, `${ops[0].name} device total`);
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
  await page.locator('#views').screenshot({ path: screenshotPath('view-memory') });

  await openView(page, 'modules');
  const said = await page.locator('#views').innerText();
  assert.match(said, /with_stack=True/, 'a trace without module frames says how to record them');
  await page.locator('#views').screenshot({ path: screenshotPath('view-modules') });
  assert.deepEqual(errors, []);
  await page.close();
});
