// bench:overhead — the runtime against a hand-written loop doing the same kernels and
// transfers with no framework (no agents, no messages, no trace): P on the CPU fills a
// matrix, it is written to the GPU, I increments it there, it is read back, C checks it.
// The baseline that counts has the runtime's thread layout (one thread per PE, host buffers
// shared, an Atomics barrier between phases: hand-loop.worker.ts); a one-thread loop is
// printed beside it for reference. Ratio target <= 1.02 at 16 MiB. Also the fixed cost per
// cycle per PE (tiny matrices) and the cluster barrier's cost per cycle on two hosts.
import { Worker } from 'node:worker_threads';
import { getKernel, withDefaults } from '@pipeloom/kernels';
import { gpuFor } from '../src/devices/discover.js';
import { readBack } from './read-back.js';
import { arg, cluster, compileOrThrow, cycleTime, median, ms, picDoc, piicDoc, runOrThrow, sideFor, table, us } from './common.js';

const iterations = arg('iterations', 20);
const nbLoop = arg('nb-loop', 5);
const rounds = arg('rounds', 5);

const BOOT = new URL('./hand-loop-boot.mjs', import.meta.url);
// A worker's process.env is a copy; Dawn reads the real environment, which only the main thread sets.
process.env.EGL_PLATFORM ??= 'surfaceless';

/** The hand loop on two threads (CPU PE, GPU PE) as the runtime lays them out; seconds per steady cycle. */
async function threadedLoop(side: number, iters: number): Promise<number> {
  const bytes = side * side * 4;
  const shared = { side, nbLoop, iterations: iters, warmup: 3, hIn: new SharedArrayBuffer(bytes), hOut: new SharedArrayBuffer(bytes), sync: new SharedArrayBuffer(8) };
  const results = await Promise.all(
    (['cpu', 'gpu'] as const).map(
      (role) =>
        new Promise<number>((resolve, reject) => {
          const w = new Worker(BOOT, { workerData: { ...shared, role } });
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

async function handLoop(side: number, iters: number): Promise<number> {
  const gpu = await gpuFor('opengl');
  const adapter = (await gpu.requestAdapter({ featureLevel: 'compatibility' } as GPURequestAdapterOptions))!;
  const l = adapter.limits;
  const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: l.maxBufferSize, maxStorageBufferBindingSize: l.maxStorageBufferBindingSize } });
  const bytes = side * side * 4;
  const produce = getKernel('matrix.produce');
  const inc = getKernel('matrix.increment');
  const consume = getKernel('matrix.consume');
  const pParams = withDefaults(produce, { width: side, height: side });
  const iParams = withDefaults(inc, { width: side, height: side, nb_loop: nbLoop });
  const cParams = withDefaults(consume, { width: side, height: side, increments: String(nbLoop) });
  const exec = await inc.gpu!.prepare(device, iParams);
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const gIn = device.createBuffer({ size: bytes, usage });
  const gOut = device.createBuffer({ size: bytes, usage });
  const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
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

const rows: string[][] = [];
for (const bytes of [16 << 20, 1 << 20, 16]) {
  const side = sideFor(bytes);
  const ig = compileOrThrow(picDoc(side, nbLoop, iterations), false);
  // Interleave runtime and the hand loops, median of the rounds: the machine is shared.
  const c = await cluster(ig);
  const runtime: number[] = [];
  const hand: number[] = [];
  const one: number[] = [];
  const ratios: number[] = [];
  try {
    await runOrThrow(c, ig, 3);
    await threadedLoop(side, 3);
    for (let round = 0; round < rounds; round++) {
      const h = await threadedLoop(side, iterations);
      const r = cycleTime(ig, await runOrThrow(c, ig, iterations, undefined, true));
      one.push(await handLoop(side, iterations));
      hand.push(h);
      runtime.push(r);
      ratios.push(r / h);
    }
  } finally {
    await c.close();
  }
  const pes = ig.programs.pes.length;
  const h = median(hand);
  const r = median(runtime);
  rows.push([
    bytes >= 1 << 20 ? `${bytes >> 20} MiB` : `${bytes} B`,
    `${ms(h)} (${spread(hand)})`,
    `${ms(r)} (${spread(runtime)})`,
    `${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
    us((r - h) / pes),
    ms(median(one)),
  ]);
  if (ig.latency['C' as keyof typeof ig.latency] !== 2) throw new Error('the hand loop assumes C fires 2 cycles after P');
}
console.log(`P (cpu) -> I (gpu0) -> C (cpu) on one host, without overlap, nb_loop ${nbLoop}, ${iterations} iterations, ${rounds} interleaved rounds: median (min-max)`);
console.log(table(['matrix', 'hand loop ms/cycle (thread per PE)', 'runtime ms/cycle', 'ratio (per round)', 'fixed µs/cycle/PE', 'one-thread loop ms/cycle'], rows));

// The cluster barrier: two hosts, tiny matrices, three barriers per cycle without overlap.
const ig2 = compileOrThrow(piicDoc(2, 0, iterations * 10), false);
const c2 = await cluster(ig2);
try {
  await runOrThrow(c2, ig2, 3);
  const r = await runOrThrow(c2, ig2, iterations * 10);
  const ct = cycleTime(ig2, r);
  const barriers = ig2.phases.length;
  console.log(`\nP-I-I-C on two hosts, 16-byte matrices, ${iterations * 10} iterations: ${us(ct)} µs per cycle (${barriers} cluster barriers per cycle)`);
  console.log(table(['host', 'µs per cycle from last local arrival to release'], Object.entries(r.barrierPerCycle).map(([h, v]) => [h, v.toFixed(0)])));
} finally {
  await c2.close();
}
process.exit(0);
