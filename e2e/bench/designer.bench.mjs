// npm run bench:designer — the designer with large documents, in Debian's Chromium.
//
// Builds and serves the designer, then for layered DFGs of 1,000 (the baseline), 2,000 and
// 10,000 nodes on 16 hosts x (1 CPU + 3 GPUs): opens the file, times until both strategies
// are compiled, laid out and shown, then opens the Implementation tab and times until the IG
// is drawn; counts the elements in the page and times two animation frames there. Prints a
// table with each time against the 1,000-node run's. Never fails on time.
//
//   npm run bench:designer [-- --nodes 1000,2000,10000]
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layeredDocument } from '@pipeloom/core/testing';
import { buildAndServe, launch } from './serve.mjs';

const i = process.argv.indexOf('--nodes');
const SIZES = (i > 0 ? process.argv[i + 1] : '1000,2000,10000').split(',').map(Number);

const site = await buildAndServe('designer');
const browser = await launch();
const twoFrames = (page) => page.evaluate(() => new Promise((r) => { const t = performance.now(); requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now() - t))); }));

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
  await page.waitForFunction((old) => { const t = [...document.querySelectorAll('*')].find((e) => e.children.length === 0 && /compiled both strategies in/.test(e.textContent ?? '')); return t && t.textContent !== old; }, before, { timeout: 600_000, polling: 100 });
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

try {
  const rows = [];
  for (const n of SIZES) rows.push(await measure(n));
  const base = rows[0];
  console.log(`\nbench:designer — Chromium ${browser.version()}, headless, 1440x900; layered DFGs on 16 hosts x (1 CPU + 3 GPUs)`);
  console.log(`\n| nodes | open -> compiled, ms | in the worker: compile / with layout | vs ${base.nodes.toLocaleString()} | IG tab -> drawn, ms | vs ${base.nodes.toLocaleString()} | elements in the page | two frames, ms |`);
  console.log('|---:|---:|---|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.nodes.toLocaleString()} | ${r.open} | ${r.worker} | ${(r.open / base.open).toFixed(2)} | ${r.ig} | ${(r.ig / base.ig).toFixed(2)} | ${r.elements.toLocaleString()} | ${r.frames.toFixed(0)} |`);
} finally {
  await browser.close();
  site.close();
}
