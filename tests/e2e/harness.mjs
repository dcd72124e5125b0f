// Helpers for the end-to-end tests: a static server for dist/, headless Chromium via playwright-core,
// console-error collection, and the native CLI's summary as the reference.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { before, after } from 'node:test';
import assert from 'node:assert/strict';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = process.env.PROFILE_MODEL_DIST || path.join(ROOT, 'dist');
export const OUT = path.join(ROOT, 'test-output');
export const TRACES = process.env.PROFILE_MODEL_TRACES || path.resolve(ROOT, '../shared/traces');
export const trace = (name) => path.join(TRACES, name);

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8', '.md': 'text/markdown; charset=utf-8',
};

/** Serves `dir` on 127.0.0.1 at a random free port. Resolves to { url, close() }. */
export function startServer(dir = DIST) {
  const server = http.createServer((req, res) => {
    let rel = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(dir, path.normalize(rel));
    if (!file.startsWith(dir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': MIME[path.extname(file)] || 'application/octet-stream',
      'cache-control': 'no-store',
      'access-control-allow-origin': '*',
    });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** Headless Debian Chromium with the flags this sandbox needs and a fresh profile. */
export async function launchBrowser() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pm-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 1000 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Harmless noise (TOOLCHAIN trap 9): the favicon 404 and Trunk's worker-shim deprecation warning. */
function harmless(text, url) {
  return /favicon\.ico/.test(url || '') || /favicon\.ico/.test(text)
    || /deprecated parameters for the initialization function/.test(text);
}

/** Opens the page; returns { page, errors } where errors collects console errors and page exceptions. */
export async function openPage(context, url, { allow = null } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const where = msg.location()?.url;
    if (harmless(text, where) || (allow && allow.test(text))) return;
    errors.push(`console.error: ${text} (${where || '?'})`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  await page.goto(url);
  await page.waitForSelector('#file-input', { state: 'attached', timeout: 30_000 });
  return { page, errors };
}

/** Reads `data-value` of every `[data-metric]` directly in `root` (not inside tables' rows). */
export async function metric(page, name, scope = '#summary') {
  const el = page.locator(`${scope} [data-metric="${name}"]`).first();
  return el.getAttribute('data-value');
}

/** The native CLI's JSON output for these arguments (`profile-model ARGS...`). */
export function cliJson(args) {
  const cli = process.env.PROFILE_MODEL_CLI
    || path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release', 'profile-model');
  const out = execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
  return JSON.parse(out);
}

/** The native CLI's summary (`profile-model summary --json PATH`). */
export function cliSummary(file) {
  return cliJson(['summary', '--json', file]);
}

export function near(actual, expected, what) {
  const a = Number(actual);
  const e = Number(expected);
  if (!Number.isFinite(a) || Math.abs(a - e) > 1e-6 * Math.max(1, Math.abs(e)) + 0.005) {
    throw new Error(`${what}: page says ${actual}, CLI says ${expected}`);
  }
}

export function screenshotPath(name) {
  fs.mkdirSync(OUT, { recursive: true });
  return path.join(OUT, `${name}.png`);
}

/** Shows a tab of the results (`report`, `analyses`, `timeline`, `explore`, `compare`): clicks it in the tab
 *  bar and waits for its panel. Every panel stays in the page; only the picked one is visible. */
export async function openTab(page, name) {
  await page.click(`#tab-${name}`);
  // The view tabs (overview, operators, ...) share one panel, labelled by the tab shown.
  await page.waitForSelector(`[role="tabpanel"][aria-labelledby="tab-${name}"]:not([hidden])`, { state: 'attached' });
  await page.waitForSelector(`#tab-${name}[aria-selected="true"]`);
}

/**
 * The set-up every test file shares: before its tests, checks that the page is built, runs `prepare`
 * (when given; `false` from it skips the rest), starts the static server and the browser; after them,
 * closes both and runs `cleanUp`. Returns the handles, filled in once the tests run:
 * `{ server, browser }`.
 */
export function useBrowser({ prepare, cleanUp } = {}) {
  const env = { server: null, browser: null };
  before(async () => {
    assert.ok(fs.existsSync(path.join(DIST, 'index.html')), `${DIST}/index.html: run trunk build --release first`);
    if (prepare && (await prepare()) === false) return;
    env.server = await startServer();
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
    await cleanUp?.();
  });
  return env;
}
