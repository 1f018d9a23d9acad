// npm run bench:timeline — the canvas timeline under a million events, in Debian's Chromium.
//
// Builds the designer into a temporary folder, serves it on 127.0.0.1, opens the Run view with
// `?bench` and drives `window.__pipeloomBench` (apps/web/src/run/bench.ts): stream 1,000,000
// synthetic events in batches through the run store's ingest (the path live runs take) while
// the timeline follows the live edge, then zoom in and out and pan, one step per animation
// frame. Prints a table; the baseline row is the same timeline with 10,000 events, measured
// in the same run, and the time the store's publishes (its live numbers) took. Never fails on time.
//
//   npm run bench:timeline [-- --events 1000000 --batch 10000 --frames 240 --keep]
import { join } from 'node:path';
import { buildAndServe, launch, ROOT } from './serve.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const EVENTS = arg('events', 1_000_000);
const BATCH = arg('batch', 10_000);
const FRAMES = arg('frames', 240);
const BASELINE = 10_000;

const site = await buildAndServe('timeline', { keep: process.argv.includes('--keep') });
const browser = await launch();
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : 0;
};
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function measure(events) {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 }, deviceScaleFactor: 1 });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`${site.origin}/?bench`);
  await page.getByTestId('tab-run').click();
  await page.waitForFunction(() => !!window.__pipeloomBench, null, { timeout: 30_000 });
  await page.getByTestId('timeline-canvas').waitFor();
  // Warm-up (JIT) with a small stream, then the measured one into a fresh store.
  await page.evaluate(([b]) => window.__pipeloomBench.ingest(5 * b, b), [BATCH]);
  const ingest = await page.evaluate(([n, b]) => window.__pipeloomBench.ingest(n, b), [events, BATCH]);
  const rows = [];
  for (const [label, mode, fraction] of [
    ['zoom in/out, whole trace', 'zoom', 1],
    ['pan, whole trace', 'pan', 1],
    ['pan, 1% of the trace', 'pan', 0.01],
  ]) {
    const r = await page.evaluate(([m, f, fr]) => window.__pipeloomBench.animate(m, f, fr), [mode, FRAMES, fraction]);
    const iv = r.intervals.slice(1);
    rows.push({ label, fps: 1000 / mean(iv), p95: pct(iv, 95), drawMean: mean(r.draws), drawP95: pct(r.draws, 95), boxes: r.boxes });
  }
  if (process.argv.includes('--screenshot')) await page.screenshot({ path: join(ROOT, `e2e/artifacts/bench-timeline-${events}.png`) });
  await page.close();
  return { ingest, rows };
}

try {
  const chromeVersion = browser.version();
  const base = await measure(BASELINE);
  const big = await measure(EVENTS);
  const rate = (r) => r.events / (r.ingestMs / 1000);
  const wallRate = (r) => r.events / (r.wallMs / 1000);
  console.log(`\nbench:timeline — Chromium ${chromeVersion}, headless, 1600x900, batches of ${BATCH.toLocaleString()} events, ${FRAMES} frames per motion`);
  // Publishes: the live numbers (core's trace analysis) every 5 batches, as a live run's timer
  // does; the last one comes after the stream, with the whole trace there and nothing new.
  console.log(
    `\n| events | lanes | ingest (events/s, store only) | ingest (events/s, with live redraws) | vs ${BASELINE.toLocaleString()} | publishes | publish ms (total) | last publish ms |`,
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of [base, big])
    console.log(
      `| ${r.ingest.events.toLocaleString()} | ${r.ingest.lanes} | ${Math.round(rate(r.ingest)).toLocaleString()} | ${Math.round(wallRate(r.ingest)).toLocaleString()} | ${(rate(r.ingest) / rate(base.ingest)).toFixed(2)} | ${r.ingest.publishes} | ${r.ingest.publishMs.toFixed(0)} | ${r.ingest.lastPublishMs.toFixed(1)} |`,
    );
  console.log(`\n| motion | events | fps | p95 frame (ms) | draw mean (ms) | draw p95 (ms) | boxes drawn | draw vs ${BASELINE.toLocaleString()} |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, r] of big.rows.entries()) {
    const b = base.rows[i];
    console.log(
      `| ${r.label} | ${BASELINE.toLocaleString()} | ${b.fps.toFixed(1)} | ${b.p95.toFixed(1)} | ${b.drawMean.toFixed(2)} | ${b.drawP95.toFixed(2)} | ${b.boxes} | 1.00 |`,
    );
    console.log(
      `| ${r.label} | ${big.ingest.events.toLocaleString()} | ${r.fps.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.drawMean.toFixed(2)} | ${r.drawP95.toFixed(2)} | ${r.boxes} | ${(r.drawMean / Math.max(1e-3, b.drawMean)).toFixed(2)} |`,
    );
  }
  console.log(`\ntargets: ingest >= 500,000 events/s, >= 60 fps while zooming and panning`);
} finally {
  await browser.close();
  site.close();
}
