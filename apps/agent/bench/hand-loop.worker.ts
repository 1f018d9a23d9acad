// One thread of bench:overhead's hand-written loop: the same thread layout as the runtime
// (one thread for the CPU PE, one for the GPU PE, host buffers shared between them) and the
// same per-cycle schedule, with no framework: a two-party Atomics barrier, no trace, no
// messages. The CPU thread fires P(k) and C(k-2); the GPU thread drives the copies (upload
// k-1 through a private scratch copy, as writeBuffer does not take shared memory; read k-2
// back through a mapped staging buffer) and fires I(k-1).
import { parentPort, workerData } from 'node:worker_threads';
import { getKernel, withDefaults } from '@pipeloom/kernels';
import { openBenchDevice } from './common.js';
import { readBack } from './read-back.js';

export interface HandLoopData {
  role: 'cpu' | 'gpu';
  /** Dawn backend of the GPU thread's device (bench --backend). */
  backend: string;
  side: number;
  nbLoop: number;
  iterations: number;
  /** Measured cycles start after this many warm-up cycles of a 3-iteration run. */
  warmup: number;
  hIn: SharedArrayBuffer;
  hOut: SharedArrayBuffer;
  /** Int32 [arrived, generation]. */
  sync: SharedArrayBuffer;
}

const d = workerData as HandLoopData;
const sync = new Int32Array(d.sync);
const PARTIES = 2;

/** Sense-free counting barrier: the last of the two to arrive bumps the generation. */
function barrier(): void {
  const gen = Atomics.load(sync, 1);
  if (Atomics.add(sync, 0, 1) === PARTIES - 1) {
    Atomics.store(sync, 0, 0);
    Atomics.add(sync, 1, 1);
    Atomics.notify(sync, 1);
  } else Atomics.wait(sync, 1, gen);
}

const bytes = d.side * d.side * 4;
const hIn = new Float32Array(d.hIn);
const hOut = new Float32Array(d.hOut);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;

async function main(): Promise<void> {
  const inc = getKernel('matrix.increment');
  const iParams = withDefaults(inc, { width: d.side, height: d.side, nb_loop: d.nbLoop });
  let step: (k: number, total: number, phase: 'pcie' | 'fire') => Promise<void>;
  let cleanup = () => {};
  if (d.role === 'gpu') {
    const device = await openBenchDevice(d.backend);
    const exec = await inc.gpu!.prepare(device, iParams);
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const gIn = device.createBuffer({ size: bytes, usage });
    const gOut = device.createBuffer({ size: bytes, usage });
    const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const scratch = new Float32Array(d.side * d.side);
    step = async (k, total, phase) => {
      if (phase === 'pcie') {
        const copies: Promise<unknown>[] = [];
        if (k >= 1 && k - 1 < total) {
          scratch.set(hIn);
          device.queue.writeBuffer(gIn, 0, scratch);
          copies.push(device.queue.onSubmittedWorkDone());
        }
        if (k >= 2 && k - 2 < total) {
          copies.push(readBack(device, gOut, staging, bytes, hOut));
        }
        await Promise.all(copies);
      } else if (k >= 1 && k - 1 < total) {
        const enc = device.createCommandEncoder();
        exec.encode(enc, { iteration: k - 1, inputs: { in: gIn }, outputs: { out: gOut } });
        device.queue.submit([enc.finish()]);
        await device.queue.onSubmittedWorkDone();
      }
    };
    cleanup = () => {
      exec.destroy();
      device.destroy();
    };
  } else {
    const produce = getKernel('matrix.produce');
    const consume = getKernel('matrix.consume');
    const pParams = withDefaults(produce, { width: d.side, height: d.side });
    const cParams = withDefaults(consume, { width: d.side, height: d.side, increments: String(d.nbLoop) });
    step = async (k, total, phase) => {
      if (phase !== 'fire') return;
      if (k < total) produce.cpu({ params: pParams, iteration: k, inputs: {}, outputs: { out: hIn }, state: {} });
      if (k >= 2 && k - 2 < total) {
        const rep = consume.cpu({ params: cParams, iteration: k - 2, inputs: { in: hOut }, outputs: {}, state: {} });
        if (rep && !rep.ok) throw new Error(rep.message);
      }
    };
  }
  const cycles = async (total: number, ends?: number[]) => {
    for (let k = 0; k < total + 2; k++) {
      await step(k, total, 'pcie');
      barrier();
      await step(k, total, 'fire');
      barrier();
      ends?.push(nowUs());
    }
  };
  await cycles(d.warmup);
  const ends: number[] = [];
  await cycles(d.iterations, ends);
  cleanup();
  // Steady state, as the runtime's cycle time (bench/common.ts cycleTime): from the end of
  // cycle 2 (the fill) to the end of the last cycle.
  const last = ends.length - 1;
  parentPort!.postMessage({ seconds: (ends[last] - ends[2]) / 1e6 / (last - 2) });
}

main().catch((e) => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) }));
