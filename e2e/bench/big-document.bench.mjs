// npm run bench:big-document — the designer opening a large document file, in Debian's Chromium.
//
// Builds and serves the designer, writes a 2,100-node layered DFG padded to --mb megabytes (its
// description), opens it through Open… and records the page's long tasks (a PerformanceObserver
// for 'longtask') from the open until both strategies are compiled, then reloads the page and
// says whether the project came back. Prints the longest task, their sum and the time to compiled.
// Never fails on time.
//
//   npm run bench:big-document [-- --mb 20]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layeredDocument } from '@pipeloom/core/testing';
import { buildAndServe, launch } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const MB = Number(arg('--mb', '20'));

const doc = layeredDocument(5, { nodes: 2100, hosts: 16, gpus: 3 });
const base = JSON.stringify(doc).length;
doc.description = 'x'.repeat(Math.max(0, Math.round(MB * 1e6) - base - 20));
const dir = mkdtempSync(join(tmpdir(), 'pipeloom-big-document-'));
const file = join(dir, 'big.json');
writeFileSync(file, JSON.stringify(doc));

const served = await buildAndServe('big-document');
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  await page.goto(served.origin);
  await page.getByTestId('doc-name').waitFor();
  await page.evaluate(() => {
    const w = window;
    w.longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
  });
  const t0 = Date.now();
  await page.getByTestId('open-input').setInputFiles(file);
  await page.getByTestId('doc-name').filter({ hasText: doc.name }).waitFor({ timeout: 300_000 });
  await page.getByText(/compiled both strategies in/).waitFor({ timeout: 300_000 });
  const compiledMs = Date.now() - t0;
  // Two frames, so that a task still running shows.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const tasks = await page.evaluate(() => window.longTasks);
  await page.reload();
  await page.getByText(/compiled both strategies in/).waitFor({ timeout: 300_000 });
  const kept = (await page.getByTestId('doc-name').textContent()) === doc.name;
  const row = {
    'document MB': (JSON.stringify(doc).length / 1e6).toFixed(1),
    'longest task ms': Math.round(Math.max(0, ...tasks)),
    'long tasks ms (sum)': Math.round(tasks.reduce((a, b) => a + b, 0)),
    'long tasks': tasks.length,
    'open to compiled ms': compiledMs,
    'kept across reload': kept,
  };
  console.table([row]);
} finally {
  await browser.close();
  served.close();
  rmSync(dir, { recursive: true, force: true });
}
