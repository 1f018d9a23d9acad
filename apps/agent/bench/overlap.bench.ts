// bench:overlap — the paper's Fig 15: P-I-I-C on two hosts (Fig 12 mapping), sweep nb_loop,
// per-iteration time without and with overlap, the speedup, and the model's speedup (paper
// 5.1) from the quantities measured as the paper defines them, in the runs without overlap:
//   Th  = the host<->GPU phase: the CPU->GPU and GPU->CPU copies of a host done in parallel
//         (per cycle, first copy start to last copy end, the slower host);
//   Tib = the host-to-host transfer (per cycle, the sender's first byte out to the receiver's
//         copy into its slot done);
//   a   = slope of the I firing time in nb_loop (Theil-Sen line over the sweep), f0 its intercept.
//   without: T = Th + Tib + f0 + a*nb_loop        with: T = max(Th, Tib, f0 + a*nb_loop)
// The paper sets up Th ~ Tib ~ a*nb_loop (its peak, 2 + Rib/Rh = 3) on real PCIe and
// InfiniBand. Here both are loopback and memcpy, far faster than the firing's fixed cost on
// llvmpipe, so the runs use link emulation (`emulateLinks`, runtime/emulate.ts): the document's
// PCIe and InfiniBand bandwidths are set so that a copy of one matrix takes `--stage` ms, and
// each transfer lasts at least that long (the bytes are still copied and checked). The sweep
// is centred on nb_loop* where f0 + a*nb_loop* = stage, from two probe runs.
// With --emulate-devices the GPUs are emulated too (`emulateDevices`, runtime/emulate.ts): I
// runs a small real kernel (nb_loop 1, still checked by C) and its firing is padded to a
// device time swept around the stage (--devices MS,... ; default 0.25-3 x stage), so the two
// llvmpipe "GPUs" no longer fill both cores and copies can hide under compute as on real GPUs.
// Every row says which: "llvmpipe" (real kernels, for machines with real GPUs) or "emulated".
//   npm run bench:overlap -- [--size BYTES] [--stage MS] [--iterations N] [--rounds N] [--loops 0,1,...] [--lp-threads N] [--emulate-devices [--devices MS,...]] [--sync barrier|self-timed] [--backend vulkan]
import { measuredTimes, predict, programHosts, type ProjectDocument, type RunResult } from '@pipeloom/core';
import { getKernel } from '@pipeloom/kernels';
import { availableParallelism } from 'node:os';
import { arg, argList, cluster, gpuLabel, compileOrThrow, cpuSeconds, cycleTime, meanDuration, median, ms, piicDoc, sideFor, table } from './common.js';

const bytes = arg('size', 1 << 20);
const side = sideFor(bytes);
const stage = arg('stage', 30) / 1000;
const iterations = arg('iterations', 20);
const rounds = arg('rounds', 3);
const emulated = process.argv.includes('--emulate-devices');
const syncAt = process.argv.indexOf('--sync');
const sync = syncAt >= 0 ? process.argv[syncAt + 1] : 'barrier';
const devicesLabel = emulated ? 'emulated' : gpuLabel();

type Ev = RunResult['events'][number];
/** The largest nb_loop matrix.increment takes (its spec). */
const NB_LOOP_MAX = getKernel('matrix.increment').params.nb_loop?.max ?? 100_000;
/** P-I-I-C whose PCIe and InfiniBand move one matrix in `stage` seconds. */
function docFor(n: number): ProjectDocument {
  // Emulated devices: `n` is the device's ms per firing, the kernel itself a small one.
  const doc = piicDoc(side, emulated ? 1 : n, iterations);
  const matrix = side * side * 4;
  for (const h of doc.arch.hosts) (h as { pcie?: unknown }).pcie = { bandwidth: matrix / stage, latency: 0 };
  (doc.arch as { network?: unknown }).network = { kind: 'infiniband', bandwidth: matrix / stage, latency: 0 };
  return doc;
}
const igFor = (n: number, overlap: boolean) => compileOrThrow(docFor(n), overlap);
const cores = availableParallelism();
// llvmpipe starts a thread per core in each agent, so the emulated GPUs of both hosts would
// take every core of any machine. Where there are enough, each agent's llvmpipe gets its
// share less two cores, which stay for the host's main and PE threads (the CPU side a real
// host keeps while its GPU computes). `--lp-threads N` sets it; 0 runs kernels on the PE thread.
const ig0 = igFor(0, false);
const hostCount = programHosts(ig0).length;
const lpThreads = arg('lp-threads', cores >= 4 * hostCount ? Math.floor(cores / hostCount) - 2 : -1);
const c = await cluster(ig0, undefined, lpThreads >= 0 ? { LP_NUM_THREADS: String(lpThreads) } : undefined);
const fill = ig0.fillCycles;
const pids = [...c.local.agents.map((a) => a.process.pid!), process.pid];
/** Per run: the share of the machine's cores the agents and this process (the coordinator) kept busy over its steady cycles. */
const busy = new Map<RunResult, number>();
async function run(n: number, overlap: boolean): Promise<RunResult> {
  let from: { cpu: number; t: number } | undefined;
  let to: { cpu: number; t: number } | undefined;
  const onProgress = (p: { cycle: number }) => {
    if (p.cycle < fill) return;
    const s = { cpu: cpuSeconds(pids), t: performance.now() };
    if (!from) from = s;
    else to = s;
  };
  const device = emulated ? { emulateDevices: { I1: n / 1000, I2: n / 1000 } } : {};
  // Always said: the coordinator's default sync mode has changed once already (barrier, then self-timed).
  const r = await c.coordinator.run(igFor(n, overlap), {
    iterations,
    keepEvents: true,
    emulateLinks: true,
    onProgress,
    ...device,
    sync: sync as 'barrier' | 'self-timed',
  }).done;
  if (!r.ok) throw new Error(`run failed: ${JSON.stringify(r.failure)}`);
  if (from && to && to.t > from.t) busy.set(r, (to.cpu - from.cpu) / ((to.t - from.t) / 1000) / cores);
  return r;
}

// Copies between a host's CPU and GPU are drawn on the GPU's lanes; host-to-host transfers on
// both CPUs' send:/recv: lanes (core trace/lanes.ts).
const sameHost = (e: Ev) => e.kind === 'transfer' && e.pe.startsWith('gpu');
const hostToHost = (e: Ev) => e.kind === 'transfer' && e.pe.startsWith('cpu');
const incFire = (e: Ev) => e.kind === 'fire' && (e.node === 'I1' || e.node === 'I2');

/** Mean over steady cycles of the span (first start to last end) of the matching events, per group, the slowest group. */
function meanSpan(r: RunResult, pred: (e: Ev) => boolean, group: (e: Ev) => string, fill: number): number {
  const spans = new Map<number, Map<string, [number, number]>>();
  for (const e of r.events) {
    if (!pred(e) || e.cycle < fill) continue;
    let g = spans.get(e.cycle);
    if (!g) spans.set(e.cycle, (g = new Map()));
    const s = g.get(group(e));
    g.set(group(e), s ? [Math.min(s[0], e.start), Math.max(s[1], e.end)] : [e.start, e.end]);
  }
  let sum = 0;
  for (const g of spans.values()) sum += Math.max(...[...g.values()].map(([a, b]) => b - a)) / 1e6;
  return spans.size ? sum / spans.size : 0;
}
/** Per steady cycle (means): from the last PE's arrival at the cycle's last barrier to the first release, and from the first release to the last. */
function barrierSpread(r: RunResult, fill: number): { wait: number; stagger: number } {
  const byCycle = new Map<number, { arrive: number; first: number; last: number }>();
  const last = r.events.filter((e) => e.kind === 'barrier').reduce((m, e) => Math.max(m, e.cycle), 0);
  for (const e of r.events) {
    if (e.kind !== 'barrier' || e.cycle < fill || e.cycle >= last) continue;
    const c = byCycle.get(e.cycle) ?? { arrive: -Infinity, first: Infinity, last: -Infinity };
    byCycle.set(e.cycle, { arrive: Math.max(c.arrive, e.start), first: Math.min(c.first, e.end), last: Math.max(c.last, e.end) });
  }
  const cs = [...byCycle.values()];
  const mean = (f: (c: (typeof cs)[number]) => number) => (cs.length ? cs.reduce((s, c) => s + f(c), 0) / cs.length / 1e6 : 0);
  return { wait: mean((c) => Math.max(0, c.first - c.arrive)), stagger: mean((c) => c.last - c.first) };
}
const thOf = (r: RunResult, fill: number) => meanSpan(r, sameHost, (e) => e.host, fill);
const tibOf = (r: RunResult, fill: number) => meanSpan(r, hostToHost, () => 'link', fill);

try {
  // Where the model peaks: the firing's cost at two points, the sweep centred where it equals the stage.
  let loops = emulated
    ? argList(
        'devices',
        [0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 3].map((f) => Math.round(stage * 1000 * f * 10) / 10),
      )
    : argList('loops', []);
  if (!loops.length) {
    const f0 = meanDuration(await run(0, false), incFire);
    // A real GPU's loop costs ~1 µs: grow the probe until the firing's growth stands well
    // above the noise (a quarter stage), so the slope is not read off jitter.
    let probe = 16;
    let fp = meanDuration(await run(probe, false), incFire);
    while (fp - f0 < stage / 4 && probe * 4 <= NB_LOOP_MAX) {
      probe *= 4;
      fp = meanDuration(await run(probe, false), incFire);
    }
    const a0 = Math.max(1e-9, (fp - f0) / probe);
    const peak = Math.max(1, (stage - f0) / a0);
    loops = [...new Set([0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 3].map((f) => Math.min(NB_LOOP_MAX, Math.max(0, Math.round(peak * f)))))].sort(
      (x, y) => x - y,
    );
    process.stderr.write(
      `probe: firing ${ms(f0)} ms at nb_loop 0, a ~ ${(a0 * 1e6).toFixed(0)} µs/loop; stage ${ms(stage)} ms; model peak near nb_loop ${peak.toFixed(1)}\n`,
    );
  }
  const runs: { n: number; no: RunResult[]; ov: RunResult[]; tNo: number[]; tOv: number[]; speedups: number[] }[] = [];
  for (const n of loops) {
    const igNo = igFor(n, false);
    const igOv = igFor(n, true);
    const point = { n, no: [] as RunResult[], ov: [] as RunResult[], tNo: [] as number[], tOv: [] as number[], speedups: [] as number[] };
    // Interleaved rounds (shared machine): the speedup of each round, then the median.
    for (let round = 0; round < rounds; round++) {
      const no = await run(n, false);
      const ov = await run(n, true);
      point.no.push(no);
      point.ov.push(ov);
      point.tNo.push(cycleTime(igNo, no));
      point.tOv.push(cycleTime(igOv, ov));
      point.speedups.push(cycleTime(igNo, no) / cycleTime(igOv, ov));
    }
    runs.push(point);
    process.stderr.write(`${emulated ? 'device ms' : 'nb_loop'} ${n}: ${ms(median(point.tNo))} ms / ${ms(median(point.tOv))} ms\n`);
  }
  // Model parameters from the runs without overlap (nothing competes with a phase there).
  const all = runs.flatMap((r) => r.no);
  const th = median(all.map((r) => thOf(r, fill)));
  const tib = median(all.map((r) => tibOf(r, fill)));
  const xs = runs.map((r) => r.n);
  const ys = runs.map((r) => median(r.no.map((x) => meanDuration(x, incFire))));
  // Theil-Sen line (median of pairwise slopes): one loaded point does not tilt it.
  const slopes: number[] = [];
  for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) if (xs[j] !== xs[i]) slopes.push((ys[j] - ys[i]) / (xs[j] - xs[i]));
  const a = slopes.length ? Math.max(0, median(slopes)) : 0;
  const f0 = Math.max(0, median(ys.map((y, i) => y - a * xs[i])));
  // Barrier: the paper's model from Th, Tib and the firing's line. Self-timed: the paper's
  // formula does not hold (without overlap, successive iterations already pipeline across the
  // hosts), so the model is core's own self-timed prediction of both strategies, given each
  // point's measured firing and transfer times (from its runs without overlap, as the paper's).
  const coreModel = new Map<number, { no: number; ov: number }>();
  if (sync === 'self-timed') {
    for (const r of runs) {
      const times = measuredTimes(r.no[Math.floor(r.no.length / 2)].events.filter((e) => e.cycle >= fill && e.cycle < iterations));
      const p = predict(docFor(r.n), { sync: 'self-timed', iterations, timelineCycles: 1, ...times });
      if (!p.ok) throw new Error(`predict: ${p.diagnostics.map((d) => d.message).join('; ')}`);
      coreModel.set(r.n, { no: p.prediction.noOverlap!.cycleTime, ov: p.prediction.overlap!.cycleTime });
    }
  }
  const modelAt = (n: number) => {
    const core = coreModel.get(n);
    if (core) return core.no / core.ov;
    const compute = f0 + a * n;
    return (th + tib + compute) / Math.max(th, tib, compute);
  };
  /** The model's cycle with overlap at a point. */
  const modelCycle = (n: number) => coreModel.get(n)?.ov ?? Math.max(th, tib, f0 + a * n);
  const rows = runs.map((r, i) => {
    const s = median(r.speedups);
    return [
      devicesLabel,
      sync,
      String(r.n),
      ms(median(r.tNo)),
      ms(median(r.tOv)),
      ms(ys[i]),
      `${s.toFixed(2)} (${Math.min(...r.speedups).toFixed(2)}-${Math.max(...r.speedups).toFixed(2)})`,
      modelAt(r.n).toFixed(2),
      (s / modelAt(r.n)).toFixed(2),
    ];
  });
  console.log(
    `P-I-I-C on two local hosts, ${(bytes / (1 << 20)).toFixed(2)} MiB matrices, ${iterations} iterations per run, ${rounds} interleaved rounds per point (median, min-max), links emulated: PCIe and InfiniBand move a matrix in ${ms(stage)} ms; devices ${emulated ? "emulated: I runs nb_loop 1 and its firing lasts the row's device ms" : `${devicesLabel} (real kernels)`}; sync ${sync}`,
  );
  console.log(`${cores} cores; llvmpipe threads per agent: ${lpThreads >= 0 ? `${lpThreads} (LP_NUM_THREADS)` : "Mesa's default (one per core)"}`);
  const unit = emulated ? 'device ms' : 'nb_loop';
  console.log(
    `measured without overlap: Th = ${ms(th)} ms, Tib = ${ms(tib)} ms, a = ${(a * 1e6).toFixed(1)} µs per ${emulated ? 'device ms' : 'loop'}, f0 = ${ms(f0)} ms per firing; model peak at ${unit} ${((Math.max(th, tib) - f0) / Math.max(a, 1e-12)).toFixed(1)}\n`,
  );
  console.log(
    table(
      [
        'devices',
        'sync',
        unit,
        'without ms/it',
        'with ms/it',
        'I firing ms',
        'speedup',
        sync === 'self-timed' ? 'model (core, self-timed)' : 'model (paper 5.1)',
        'measured/model',
      ],
      rows,
    ),
  );
  const speedupOf = (r: string[]) => Number(r[6].split(' ')[0]);
  const best = rows.reduce((b, r) => (speedupOf(r) > speedupOf(b) ? r : b));
  const models = runs.map((r) => modelAt(r.n));
  const atPeak = models.indexOf(Math.max(...models));
  console.log(
    `\n${devicesLabel} devices, ${sync}: peak measured speedup ${speedupOf(best).toFixed(2)} (${unit} ${best[2]}), model peak ${models[atPeak].toFixed(2)} (${unit} ${runs[atPeak].n}): ratio ${(speedupOf(best) / models[atPeak]).toFixed(2)} (target >= 0.95)`,
  );
  // Where the cycle with overlap goes beyond the model's max(Th, Tib, firing) at the peak.
  const peakRuns = runs[atPeak];
  const firingOv = median(peakRuns.ov.map((x) => meanDuration(x, incFire)));
  const spreads = peakRuns.ov.map((x) => barrierSpread(x, fill));
  const spread = { wait: median(spreads.map((x) => x.wait)), stagger: median(spreads.map((x) => x.stagger)) };
  console.log(
    `at the model's peak, with overlap: cycle ${ms(median(peakRuns.tOv))} ms against the model's ${ms(modelCycle(peakRuns.n))}; I firing ${ms(firingOv)} ms (${ms(ys[atPeak])} without overlap); ` +
      `barrier ${ms(spread.wait)} ms from the last PE's arrival to the first release, PEs released ${ms(spread.stagger)} ms apart`,
  );
  // The model's overlap takes the copies off the compute: a GPU's DMA engines and a NIC do them.
  // Here the emulated GPUs' kernels (llvmpipe), the copies and the link's bytes share the cores.
  const busyOf = (rs: RunResult[]) => median(rs.map((x) => busy.get(x) ?? NaN));
  const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : 'n/a');
  console.log(
    `at the model's peak, the agents and the coordinator kept ${pct(busyOf(peakRuns.ov))} of this machine's ${cores} cores busy with overlap (${pct(busyOf(peakRuns.no))} without)`,
  );
  console.log(
    `at the model's peak: measured ${speedupOf(rows[atPeak]).toFixed(2)} / model ${models[atPeak].toFixed(2)} = ${(speedupOf(rows[atPeak]) / models[atPeak]).toFixed(2)}; median measured/model over the sweep ${median(rows.map((r) => Number(r[8]))).toFixed(2)}`,
  );
} finally {
  await c.close();
}
process.exit(0);
