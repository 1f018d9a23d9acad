// bench:overlap — the paper's Fig 15: P-I-I-C on two hosts (Fig 12 mapping), sweep nb_loop,
// per-iteration time without and with overlap, the speedup, and the model's speedup from the
// measured Th (host<->GPU copy), Tib (host-to-host link) and a (GPU time per loop):
//   without: T = Th + Tib + a*nb_loop        with: T = max(Th, Tib, a*nb_loop)
// where a*nb_loop is each point's measured firing time of I (a, from a line fit, is printed).
// The host-to-host link is slowed with the agents' link rate cap so Tib ~ Th (where the
// model's peak is 3), unless --link-rate is given (0 = uncapped).
//   npm run bench:overlap -- [--size BYTES] [--iterations N] [--loops 0,50,...] [--link-rate B/s]
import type { RunResult } from '@pipeloom/core/coordinator/coordinator';
import { arg, argList, cluster, compileOrThrow, cycleTime, meanDuration, ms, piicDoc, runOrThrow, sideFor, table } from './common.js';

const bytes = arg('size', 1 << 20);
const side = sideFor(bytes);
const iterations = arg('iterations', 30);
const loops = argList('loops', [0, 25, 50, 100, 200, 400, 800]);

const igFor = (n: number, overlap: boolean) => compileOrThrow(piicDoc(side, n, iterations), overlap);
const c = await cluster(igFor(0, false));

// Copies between a host's CPU and GPU are drawn on the GPU's lanes (core trace/lanes.ts).
const sameHost = (e: RunResult['events'][number]) => e.kind === 'transfer' && e.pe.startsWith('gpu');
const hostToHost = (e: RunResult['events'][number]) => e.kind === 'transfer' && e.pe === 'cpu@h0' && e.thread === 'send:cpu@h1';
const incFire = (e: RunResult['events'][number]) => e.kind === 'fire' && (e.node === 'I1' || e.node === 'I2');

try {
  // Th at this size, with the link uncapped; then cap the link so Tib ~ Th.
  const probe = await runOrThrow(c, igFor(0, false), iterations, 0);
  const th0 = meanDuration(probe, sameHost);
  const rateArg = arg('link-rate', -1);
  const linkRate = rateArg >= 0 ? rateArg : Math.round(bytes / th0);
  const runs: { n: number; no: RunResult; ov: RunResult; tNo: number; tOv: number }[] = [];
  for (const n of loops) {
    const igNo = igFor(n, false);
    const igOv = igFor(n, true);
    // Best of two for each strategy (shared machine).
    let no = await runOrThrow(c, igNo, iterations, linkRate);
    let tNo = cycleTime(igNo, no);
    let ov = await runOrThrow(c, igOv, iterations, linkRate);
    let tOv = cycleTime(igOv, ov);
    const no2 = await runOrThrow(c, igNo, iterations, linkRate);
    if (cycleTime(igNo, no2) < tNo) [no, tNo] = [no2, cycleTime(igNo, no2)];
    const ov2 = await runOrThrow(c, igOv, iterations, linkRate);
    if (cycleTime(igOv, ov2) < tOv) [ov, tOv] = [ov2, cycleTime(igOv, ov2)];
    runs.push({ n, no, ov, tNo, tOv });
    process.stderr.write(`nb_loop ${n}: ${ms(tNo)} ms / ${ms(tOv)} ms\n`);
  }
  // Measured model parameters, from the runs without overlap (nothing competes there).
  const th = runs.reduce((s, r) => s + meanDuration(r.no, sameHost), 0) / runs.length;
  const tib = runs.reduce((s, r) => s + meanDuration(r.no, hostToHost), 0) / runs.length;
  const xs = runs.map((r) => r.n);
  const ys = runs.map((r) => meanDuration(r.no, incFire));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const a = xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) / Math.max(1e-12, xs.reduce((s, x) => s + (x - mx) ** 2, 0));
  const f0 = Math.max(0, my - a * mx);
  // The model takes each point's measured GPU firing time (a * nb_loop plus the kernel's fixed cost).
  const rows = runs.map((r) => {
    const compute = meanDuration(r.no, incFire);
    const model = (th + tib + compute) / Math.max(th, tib, compute);
    const speedup = r.tNo / r.tOv;
    return [String(r.n), ms(r.tNo), ms(r.tOv), speedup.toFixed(2), model.toFixed(2), (speedup / model).toFixed(2)];
  });
  console.log(`P-I-I-C on two local hosts, ${(bytes / (1 << 20)).toFixed(2)} MiB matrices, ${iterations} iterations per point, link capped at ${(linkRate / 1e6).toFixed(0)} MB/s`);
  console.log(`measured: Th = ${ms(th)} ms, Tib = ${ms(tib)} ms, a = ${(a * 1e6).toFixed(1)} µs per loop (+ ${ms(f0)} ms fixed per firing)\n`);
  console.log(table(['nb_loop', 'without ms/it', 'with ms/it', 'speedup', 'model', 'measured/model'], rows));
  const peak = Math.max(...runs.map((r) => r.tNo / r.tOv));
  const peakModel = Math.max(...rows.map((r) => Number(r[4])));
  console.log(`\npeak speedup ${peak.toFixed(2)}, model peak ${peakModel.toFixed(2)}, ratio ${(peak / peakModel).toFixed(2)} (target >= 0.95)`);
} finally {
  await c.close();
}
process.exit(0);
