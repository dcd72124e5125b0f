// Browser part of scripts/bench.sh: loads FILE into the built page (dist/) in headless Chromium and times
// setInputFiles -> #summary ready; then JSON.parse of the same text in the same page (gzip via
// DecompressionStream). Prints table rows like bench.sh. Usage: node bench-browser.mjs FILE TEXT_BYTES EVENTS
import path from 'node:path';
import { startServer, launchBrowser, openPage, DIST } from '../tests/e2e/harness.mjs';

const [file, textBytes, events] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const name = path.basename(file);
const site = await startServer(DIST);
const data = await startServer(path.dirname(file));
const browser = await launchBrowser();
const row = (who, s, heapMb) => `${name.padEnd(16)} ${who.padEnd(32)} ${(textBytes / 1e6 / s).toFixed(1).padStart(9)} ${(events / s / 1e6).toFixed(2).padStart(9)} ${String(heapMb ?? '-').padStart(9)} ${s.toFixed(2).padStart(8)}`;
try {
  // Each run in a fresh page: wall time from setInputFiles to the summary, and the worker's own load-ms.
  const runs = [];
  for (let i = 0; i < Number(process.env.BENCH_RUNS || 3); i++) {
    const { page } = await openPage(browser.context, site.url);
    const t0 = Date.now();
    await page.setInputFiles('#file-input', file);
    await page.waitForSelector('#summary[data-state="ready"]', { timeout: 1_800_000 });
    const wall = (Date.now() - t0) / 1000;
    const metric = async (m) => Number(await page.locator(`#summary [data-metric="${m}"]`).first()
      .getAttribute('data-value', { timeout: 1000 }).catch(() => 0));
    runs.push({ wall, load: (await metric('load-ms')) / 1000, memMb: Math.round((await metric('worker-memory-bytes')) / 1e6) });
    await page.close();
  }
  const pick = (key) => {
    const s = [...runs].sort((a, b) => a[key] - b[key]);
    return [['best of ' + s.length, s[0]], ['median', s[Math.floor(s.length / 2)]]];
  };
  for (const [how, r] of pick('wall')) console.log(row(`page: file->summary, ${how}`, r.wall, null));
  for (const [how, r] of pick('load')) if (r.load > 0) console.log(row(`page: worker load, ${how}`, r.load, r.memMb || null));

  const { page: p2 } = await openPage(browser.context, site.url);
  const r = await p2.evaluate(async ([url, gz]) => {
    try {
      const t0 = performance.now();
      let body = (await fetch(url)).body;
      if (gz) body = body.pipeThrough(new DecompressionStream('gzip'));
      const text = await new Response(body).text();
      const t1 = performance.now();
      const doc = JSON.parse(text);
      const t2 = performance.now();
      return { read: (t1 - t0) / 1000, parse: (t2 - t1) / 1000, n: doc.traceEvents.length,
        heap: Math.round((performance.memory?.usedJSHeapSize || 0) / 1e6) };
    } catch (e) { return { error: String(e) }; }
  }, [data.url + encodeURIComponent(name), name.endsWith('.gz')]);
  if (r.error) console.log(`${name.padEnd(16)} ${'page: JSON.parse baseline'.padEnd(32)} failed: ${r.error}`);
  else {
    console.log(row('page: fetch+gunzip+JSON.parse', r.read + r.parse, r.heap));
    console.log(row('page: JSON.parse only', r.parse, r.heap));
  }
} finally {
  await browser.close();
  await site.close();
  await data.close();
}
