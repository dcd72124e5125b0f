// Runs the loader compiled to WebAssembly (examples/wasm_parse.rs) over FILE in Node (V8, as in Chromium) and
// prints MB/s; with `node --cpu-prof`, the profile shows which Rust functions take the time in WebAssembly.
// Usage: [ANALYZE=1] node [--cpu-prof --cpu-prof-dir DIR] scripts/profile-wasm-parse.mjs WASM FILE
// (ANALYZE=1: then runs every analysis on the table and times it)
import fs from 'node:fs';

const [wasmPath, file] = process.argv.slice(2);
const stub = new Proxy({}, { get: () => () => { throw new Error('import called'); } });
const imports = new Proxy({}, { get: () => stub });
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), imports);
const { buffer, feed, finish, memory } = instance.exports;
const CHUNK = 4 << 20;
const fd = fs.openSync(file, 'r');
const chunk = Buffer.alloc(CHUNK);
const t0 = performance.now();
let total = 0;
let parseMs = 0;
for (;;) {
  const n = fs.readSync(fd, chunk, 0, CHUNK, null);
  if (n === 0) break;
  const t = performance.now();
  const ptr = buffer(n);
  new Uint8Array(memory.buffer, ptr, n).set(chunk.subarray(0, n));
  if (feed(n) !== 0) throw new Error('feed failed');
  parseMs += performance.now() - t;
  total += n;
}
const t = performance.now();
const events = finish();
parseMs += performance.now() - t;
const s = (performance.now() - t0) / 1000;
const mb = total / 1e6;
if (process.env.ANALYZE === '1') {
  const ta = performance.now();
  const segments = instance.exports.analyze();
  console.log(`analyses: ${(performance.now() - ta).toFixed(0)} ms (critical path of ${segments} segments)`);
}
console.log(`${file}: ${mb.toFixed(0)} MB, ${events} events; parse ${(parseMs / 1000).toFixed(2)} s = ${(mb / parseMs * 1000).toFixed(1)} MB/s (with file reads ${(mb / s).toFixed(1)} MB/s)`);
