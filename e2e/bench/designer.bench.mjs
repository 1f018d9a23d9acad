// npm run bench:designer — the designer with large documents, in Debian's Chromium.
//
// Builds and serves the designer, then for layered DFGs of 1,000 (the baseline), 2,000 and
// 10,000 nodes on 16 hosts x (1 CPU + 3 GPUs): opens the file, times until both strategies
// are compiled, laid out and shown, then opens the Implementation tab and times until the IG
// is drawn; counts the elements in the page and times two animation frames there. Prints a
// table with each time against the 1,000-node run's. Never fails on time.
//
// First, the first load as a user gets it: the designer served by Vite's dev
// server on a first visit (a fresh dependency cache: what `npm start` served before), by the
// dev server again with that cache warm, and as the production build under `vite preview`
// (what `npm start` serves now); each in a fresh browser context (no HTTP cache), the median
// of --runs. Requests and bytes count the page's and its worker's (see the note printed
// under the table for what each byte column holds); time to first node is from navigation to the first DFG node
// on screen; a full reload is a second navigation of the page.
//
//   npm run bench:designer [-- --nodes 1000,2000,10000] [--runs 3] [--only first-load|large]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layeredDocument } from '@pipeloom/core/testing';
import { buildAndServe, launch } from './serve.mjs';
import { previewDesigner, serveDesigner } from '../../scripts/designer.ts';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SIZES = arg('--nodes', '1000,2000,10000').split(',').map(Number);
const RUNS = Math.max(1, Math.min(20, Number(arg('--runs', '3'))));
const ONLY = arg('--only', '');

const browser = await launch();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** One visit in a fresh context: requests, bytes, full reloads, ms to the first DFG node. */
async function firstLoad(url) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  let requests = 0;
  let bytes = 0;
  let wire = 0;
  let unsized = 0;
  const sizes = [];
  context.on('request', () => requests++);
  // Bodies as decoded (what the browser parses) for every response; on the wire (gzip, headers
  // included) as Chromium reports it, which is 0 for a worker's own requests.
  context.on('requestfinished', (r) =>
    sizes.push(
      Promise.all([r.sizes(), r.response().then((res) => res?.body())]).then(
        ([s, body]) => {
          wire += s.responseHeadersSize + s.responseBodySize;
          bytes += body?.length ?? 0;
        },
        () => unsized++,
      ),
    ),
  );
  let navigations = 0;
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) navigations++;
  });
  const t0 = Date.now();
  await page.goto(url);
  await page.locator('[data-testid^="dfg-node-"]').first().waitFor({ timeout: 300_000 });
  const ms = Date.now() - t0;
  // Let the compile the page starts with finish, so its requests (the worker) are counted.
  await page.getByText(/compiled both strategies in/).waitFor({ timeout: 300_000 });
  await Promise.all(sizes);
  await context.close();
  return { requests, bytes, wire, unsized, reloads: navigations - 1, ms };
}

async function firstLoads() {
  const rows = [];
  const measure = async (label, serve, visits) => {
    const runs = [];
    for (let r = 0; r < RUNS; r++) {
      const server = await serve();
      try {
        for (const v of visits) {
          const m = await firstLoad(server.url);
          if (v) runs.push(m);
        }
      } finally {
        await server.close();
        server.cleanup?.();
      }
    }
    rows.push({
      label,
      requests: median(runs.map((m) => m.requests)),
      bytes: median(runs.map((m) => m.bytes)),
      wire: median(runs.map((m) => m.wire)),
      unsized: median(runs.map((m) => m.unsized)),
      reloads: median(runs.map((m) => m.reloads)),
      ms: median(runs.map((m) => m.ms)),
      all: runs.map((m) => m.ms),
    });
  };
  const fresh = (name) => mkdtempSync(join(tmpdir(), `pipeloom-designer-${name}-`));
  const devServer = async () => {
    const cacheDir = fresh('vite-cache');
    const s = await serveDesigner({ dev: true, port: 0, cacheDir });
    return { ...s, cleanup: () => rmSync(cacheDir, { recursive: true, force: true }) };
  };
  console.log('first load: the dev server (fresh dependency cache each run) ...');
  await measure('dev server, first visit (npm start before)', devServer, [true]);
  await measure('dev server, second visit (cache warm)', devServer, [false, true]);
  console.log('first load: the production build under vite preview ...');
  const out = fresh('dist');
  try {
    const built = await serveDesigner({ port: 0, outDir: out });
    await built.close();
    await measure('production build, vite preview (npm start now)', () => previewDesigner(out, 0), [true]);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return rows;
}

function printFirstLoads(rows) {
  const base = rows[0];
  console.log(`\nbench:designer first load — Chromium ${browser.version()}, headless, 1440x900, fresh context per visit; median of ${RUNS}`);
  console.log(
    `\n| served | requests | bodies, MB | on the wire (page), MB | unsized | full reloads | to first node, ms | vs ${base.label.split(',')[0]}, first visit | runs, ms |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of rows)
    console.log(
      `| ${r.label} | ${r.requests} | ${(r.bytes / 1e6).toFixed(2)} | ${(r.wire / 1e6).toFixed(2)} | ${r.unsized} | ${r.reloads} | ${r.ms} | ${(r.ms / base.ms).toFixed(2)} | ${r.all.join(', ')} |`,
    );
  console.log(
    "bodies: every response as decoded, the worker's included; on the wire: as Chromium reports it (gzip and headers), 0 for the worker's own requests; unsized: responses gone before they could be read (a full reload drops the first page's)",
  );
}
const twoFrames = (page) =>
  page.evaluate(
    () =>
      new Promise((r) => {
        const t = performance.now();
        requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t)));
      }),
  );

async function measure(nodes) {
  const doc = layeredDocument(5, { nodes, hosts: 16, gpus: 3 });
  const file = join(tmpdir(), `pipeloom-designer-bench-${nodes}.json`);
  writeFileSync(file, JSON.stringify(doc));
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(site.origin);
  const status = page.getByText(/compiled both strategies in/);
  await status.waitFor({ timeout: 60_000 });
  const before = await status.textContent();
  const t0 = Date.now();
  await page.getByTestId('open-input').setInputFiles(file);
  await page.getByTestId('doc-name').filter({ hasText: doc.name }).waitFor({ timeout: 600_000 });
  await page.waitForFunction(
    (old) => {
      const t = [...document.querySelectorAll('*')].find((e) => e.children.length === 0 && /compiled both strategies in/.test(e.textContent ?? ''));
      return t && t.textContent !== old;
    },
    before,
    { timeout: 600_000, polling: 100 },
  );
  const open = Date.now() - t0;
  const compiled = (await status.textContent()).match(/in ([\d.]+ \w+) \(with layout ([\d.]+ \w+)\)/);
  const t1 = Date.now();
  await page.getByTestId('tab-ig').click();
  await page.getByTestId('ig-summary').waitFor({ timeout: 600_000 });
  await page.locator('[data-testid^="ig-pe-"]').first().waitFor({ timeout: 600_000 });
  await twoFrames(page);
  const ig = Date.now() - t1;
  const elements = await page.evaluate(() => document.querySelectorAll('*').length);
  const frames = await twoFrames(page);
  await page.close();
  return { nodes, open, worker: compiled ? `${compiled[1]} / ${compiled[2]}` : '?', ig, elements, frames };
}

let site;
try {
  if (ONLY !== 'large') printFirstLoads(await firstLoads());
  if (ONLY !== 'first-load') await large();
} finally {
  await browser.close();
  site?.close();
}

async function large() {
  site = await buildAndServe('designer');
  const rows = [];
  for (const n of SIZES) rows.push(await measure(n));
  const base = rows[0];
  console.log(`\nbench:designer — Chromium ${browser.version()}, headless, 1440x900; layered DFGs on 16 hosts x (1 CPU + 3 GPUs)`);
  console.log(
    `\n| nodes | open -> compiled, ms | in the worker: compile / with layout | vs ${base.nodes.toLocaleString()} | IG tab -> drawn, ms | vs ${base.nodes.toLocaleString()} | elements in the page | two frames, ms |`,
  );
  console.log('|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.nodes.toLocaleString()} | ${r.open} | ${r.worker} | ${(r.open / base.open).toFixed(2)} | ${r.ig} | ${(r.ig / base.ig).toFixed(2)} | ${r.elements.toLocaleString()} | ${r.frames.toFixed(0)} |`,
    );
}
