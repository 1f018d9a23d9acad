// bench:overhead — the runtime against a hand-written loop doing the same kernels and
// transfers with no framework (no agents, no messages, no trace): P on the CPU fills a
// matrix, it is written to the GPU, I increments it there, it is read back, C checks it.
// The baseline that counts has the runtime's thread layout (one thread per PE, host buffers
// shared, an Atomics barrier between phases: hand-loop.worker.ts); a one-thread loop is
// printed beside it for reference. Both sync modes of the runtime (self-timed, barrier) are
// measured in the same rounds. Then P-I-I-C on two local hosts at 16-byte matrices against
// its slowest PE's own work per iteration, by hand. The targets, as ratios of this run:
// 16 B fixed cost <= 20 µs per cycle per PE over the hand loop; 16 MiB runtime / hand loop
// <= 1.01; P-I-I-C cycle <= 1.5 x the slowest PE's hand loop.
import { Worker } from 'node:worker_threads';
import { getKernel, withDefaults } from '@pipeloom/kernels';
import { readBack } from './read-back.js';
import { SYNC_MODES, type ImplementationGraph, type SyncMode } from '@pipeloom/core';
import {
  arg,
  benchBackend,
  cluster,
  gpuLabel,
  openBenchDevice,
  compileOrThrow,
  cycleTime,
  median,
  ms,
  picDoc,
  piicDoc,
  sideFor,
  table,
  us,
  type Cluster,
} from './common.js';

const iterations = arg('iterations', 20);
/**
 * Iterations per run at a size: 16-byte cycles last ~0.2 ms, so 20 of them are mostly the
 * first cycles' one-time costs (code not yet optimised, first submissions); small tokens run
 * 50 times as many, for the steady state the targets are about.
 */
const itersFor = (bytes: number) => (bytes <= 1 << 16 ? iterations * 50 : iterations);
const nbLoop = arg('nb-loop', 5);
const rounds = arg('rounds', 5);

const BOOT = new URL('./hand-loop-boot.mjs', import.meta.url);
// A worker's process.env is a copy; Dawn reads the real environment, which only the main thread sets.
process.env.EGL_PLATFORM ??= 'surfaceless';

/** The hand loop on two threads (CPU PE, GPU PE) as the runtime lays them out; seconds per steady cycle. */
async function threadedLoop(side: number, iters: number): Promise<number> {
  const bytes = side * side * 4;
  const shared = {
    side,
    nbLoop,
    iterations: iters,
    warmup: 3,
    hIn: new SharedArrayBuffer(bytes),
    hOut: new SharedArrayBuffer(bytes),
    sync: new SharedArrayBuffer(8),
  };
  const results = await Promise.all(
    (['cpu', 'gpu'] as const).map(
      (role) =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(BOOT, { workerData: { ...shared, role, backend: benchBackend } });
          w.once('message', (m: { seconds?: number; error?: string }) => {
            void w.terminate();
            if (m.error !== undefined) reject(new Error(`hand loop ${role}: ${m.error}`));
            else resolve(m.seconds!);
          });
          w.once('error', reject);
        }),
    ),
  );
  return Math.max(...results);
}

const spread = (xs: number[]) => `${ms(Math.min(...xs))}-${ms(Math.max(...xs))}`;

/** A device, I's kernel and the buffers a hand loop needs. */
async function openGpu(side: number, nb: number) {
  const device = await openBenchDevice();
  const bytes = side * side * 4;
  const inc = getKernel('matrix.increment');
  const exec = await inc.gpu!.prepare(device, withDefaults(inc, { width: side, height: side, nb_loop: nb }));
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const gIn = device.createBuffer({ size: bytes, usage });
  const gOut = device.createBuffer({ size: bytes, usage });
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  return { device, exec, gIn, gOut, staging, bytes };
}

async function handLoop(side: number, iters: number): Promise<number> {
  const { device, exec, gIn, gOut, staging, bytes } = await openGpu(side, nbLoop);
  const produce = getKernel('matrix.produce');
  const consume = getKernel('matrix.consume');
  const pParams = withDefaults(produce, { width: side, height: side });
  const cParams = withDefaults(consume, { width: side, height: side, increments: String(nbLoop) });
  const hIn = new Float32Array(side * side);
  const hOut = new Float32Array(side * side);
  // The same schedule the compiler gives the runtime (no overlap): per cycle k, the PCIe
  // phase (write iteration k-1 to the GPU, read iteration k-2 back, both at once), then the
  // fire phase (P fills k, I increments k-1 on the GPU, C checks k-2, at once).
  const cycle = async (k: number, total: number) => {
    const pcie: Promise<unknown>[] = [];
    if (k >= 1 && k - 1 < total) {
      device.queue.writeBuffer(gIn, 0, hIn);
      pcie.push(device.queue.onSubmittedWorkDone());
    }
    if (k >= 2 && k - 2 < total) {
      pcie.push(readBack(device, gOut, staging, bytes, hOut));
    }
    await Promise.all(pcie);
    const fire: Promise<unknown>[] = [];
    if (k >= 1 && k - 1 < total) {
      const enc = device.createCommandEncoder();
      exec.encode(enc, { iteration: k - 1, inputs: { in: gIn }, outputs: { out: gOut } });
      device.queue.submit([enc.finish()]);
      fire.push(device.queue.onSubmittedWorkDone());
    }
    if (k < total) produce.cpu({ params: pParams, iteration: k, inputs: {}, outputs: { out: hIn }, state: {} });
    if (k >= 2 && k - 2 < total) {
      const rep = consume.cpu({ params: cParams, iteration: k - 2, inputs: { in: hOut }, outputs: {}, state: {} });
      if (rep && !rep.ok) throw new Error(rep.message);
    }
    await Promise.all(fire);
  };
  for (let k = 0; k < 5; k++) await cycle(k, 3);
  const t0 = performance.now();
  const cycles = iters + 2;
  for (let k = 0; k < cycles; k++) await cycle(k, iters);
  const t = (performance.now() - t0) / 1000 / cycles;
  exec.destroy();
  device.destroy();
  return t;
}

/**
 * One PE's own work per iteration, by hand, as P-I-I-C's GPU PEs do it (the slowest of its
 * PEs): write its input to the GPU, increment it there, read it back. Seconds per iteration.
 */
async function gpuPeLoop(side: number, nb: number, iters: number): Promise<number> {
  const { device, exec, gIn, gOut, staging, bytes } = await openGpu(side, nb);
  const hIn = new Float32Array(side * side);
  const hOut = new Float32Array(side * side);
  const once = async (i: number) => {
    device.queue.writeBuffer(gIn, 0, hIn);
    await device.queue.onSubmittedWorkDone();
    const enc = device.createCommandEncoder();
    exec.encode(enc, { iteration: i, inputs: { in: gIn }, outputs: { out: gOut } });
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    await readBack(device, gOut, staging, bytes, hOut);
  };
  for (let i = 0; i < 5; i++) await once(i);
  const t0 = performance.now();
  for (let i = 0; i < iters; i++) await once(i);
  const t = (performance.now() - t0) / 1000 / iters;
  exec.destroy();
  device.destroy();
  return t;
}

/** The runtime's steady seconds per cycle in one sync mode. */
async function runtimeCycle(c: Cluster, ig: ImplementationGraph, iters: number, sync: SyncMode): Promise<number> {
  const r = await c.coordinator.run(ig, { iterations: iters, sync, keepEvents: true }).done;
  if (!r.ok) throw new Error(`run failed (${sync}): ${JSON.stringify(r.failure)}`);
  return cycleTime(ig, r);
}

const rows: string[][] = [];
/** Per sync mode: the median fixed cost per cycle per PE at 16 B (s) and the 16 MiB ratio. */
const fixed: Partial<Record<SyncMode, number>> = {};
const big: Partial<Record<SyncMode, number>> = {};
for (const bytes of [16 << 20, 1 << 20, 16]) {
  const side = sideFor(bytes);
  const its = itersFor(bytes);
  const ig = compileOrThrow(picDoc(side, nbLoop, its), false);
  // Interleave the modes and the hand loops, median of the rounds: the machine is shared.
  const c = await cluster(ig);
  const runtime: Record<SyncMode, number[]> = { 'self-timed': [], barrier: [] };
  const ratios: Record<SyncMode, number[]> = { 'self-timed': [], barrier: [] };
  const hand: number[] = [];
  const one: number[] = [];
  try {
    for (const sync of SYNC_MODES) await runtimeCycle(c, ig, 3, sync);
    await threadedLoop(side, 3);
    for (let round = 0; round < rounds; round++) {
      const h = await threadedLoop(side, its);
      hand.push(h);
      for (const sync of SYNC_MODES) {
        const r = await runtimeCycle(c, ig, its, sync);
        runtime[sync].push(r);
        ratios[sync].push(r / h);
      }
      one.push(await handLoop(side, its));
    }
  } finally {
    await c.close();
  }
  const pes = ig.programs.pes.length;
  const h = median(hand);
  for (const sync of SYNC_MODES) {
    const r = median(runtime[sync]);
    const rs = ratios[sync];
    rows.push([
      bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes} B`,
      sync,
      `${ms(h)} (${spread(hand)})`,
      `${ms(r)} (${spread(runtime[sync])})`,
      `${median(rs).toFixed(3)} (${Math.min(...rs).toFixed(2)}-${Math.max(...rs).toFixed(2)})`,
      us((r - h) / pes),
      ms(median(one)),
    ]);
    if (bytes === 16) fixed[sync] = (r - h) / pes;
    if (bytes === 16 << 20) big[sync] = median(rs);
  }
  if (ig.latency['C' as keyof typeof ig.latency] !== 2) throw new Error('the hand loop assumes C fires 2 cycles after P');
}
console.log(
  `P (cpu) -> I (gpu0) -> C (cpu) on one host, GPU ${gpuLabel()}, without overlap, nb_loop ${nbLoop}, ${iterations} iterations (${itersFor(16)} at 16 B), ${rounds} interleaved rounds: median (min-max)`,
);
console.log(
  table(
    ['matrix', 'sync', 'hand loop ms/cycle (thread per PE)', 'runtime ms/cycle', 'ratio (per round)', 'fixed µs/cycle/PE', 'one-thread loop ms/cycle'],
    rows,
  ),
);

// P-I-I-C on two hosts, 16-byte matrices: the cycle against the slowest PE's own work.
const piicIterations = itersFor(16);
const ig2 = compileOrThrow(piicDoc(2, 0, piicIterations), false);
const c2 = await cluster(ig2);
const piic: Record<SyncMode, number[]> = { 'self-timed': [], barrier: [] };
const work: number[] = [];
const barrierHosts: Record<string, number[]> = {};
try {
  for (const sync of SYNC_MODES) await runtimeCycle(c2, ig2, 3, sync);
  for (let round = 0; round < 3; round++) {
    work.push(await gpuPeLoop(2, 0, piicIterations));
    for (const sync of SYNC_MODES) {
      const r = await c2.coordinator.run(ig2, { iterations: piicIterations, sync, keepEvents: true }).done;
      if (!r.ok) throw new Error(`run failed (${sync}): ${JSON.stringify(r.failure)}`);
      piic[sync].push(cycleTime(ig2, r));
      if (sync === 'barrier') for (const [h, v] of Object.entries(r.barrierPerCycle)) (barrierHosts[h] ??= []).push(v);
    }
  }
} finally {
  await c2.close();
}
const w = median(work);
console.log(`\nP-I-I-C on two hosts, 16-byte matrices, nb_loop 0, ${piicIterations} iterations, 3 interleaved rounds: median (min-max)`);
console.log(
  table(
    ['sync', 'µs per cycle', 'slowest PE by hand µs/iteration', 'cycle / slowest PE'],
    SYNC_MODES.map((sync) => [
      sync,
      `${us(median(piic[sync]))} (${us(Math.min(...piic[sync]))}-${us(Math.max(...piic[sync]))})`,
      `${us(w)} (${us(Math.min(...work))}-${us(Math.max(...work))})`,
      (median(piic[sync]) / w).toFixed(2),
    ]),
  ),
);
console.log(
  `barrier mode, µs per cycle from last local arrival to release (${ig2.phases.length} cluster barriers per cycle): ${Object.entries(barrierHosts)
    .map(([h, v]) => `${h} ${median(v).toFixed(0)}`)
    .join(', ')}`,
);

const met = (ok: boolean) => (ok ? 'yes' : 'no');
console.log('\ntargets (ratios measured in this run)');
console.log(
  table(
    ['target', 'goal', ...SYNC_MODES],
    [
      ['16 B: fixed µs/cycle/PE over the hand loop', '<= 20', ...SYNC_MODES.map((m) => `${us(fixed[m]!)} (${met(fixed[m]! <= 20e-6)})`)],
      [
        'P-I-I-C 2 hosts: cycle / slowest PE by hand',
        '<= 1.5',
        ...SYNC_MODES.map((m) => `${(median(piic[m]) / w).toFixed(2)} (${met(median(piic[m]) / w <= 1.5)})`),
      ],
      ['16 MiB: runtime / hand loop', '<= 1.01', ...SYNC_MODES.map((m) => `${big[m]!.toFixed(3)} (${met(big[m]! <= 1.01)})`)],
    ],
  ),
);
process.exit(0);
