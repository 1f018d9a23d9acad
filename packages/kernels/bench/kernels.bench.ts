// npm run bench:kernels: one firing of every kernel on the CPU PE (the TypeScript twin) and on
// each WebGPU adapter asked for (default: llvmpipe through Dawn's OpenGL backend; add a real
// GPU with PIPELOOM_BENCH_BACKENDS=opengl,default), then the saliency pathway's frames per
// second at 512x512 and 720x576 against the paper's 44 and 21 fps on one GTX 285.
// GPU times: encode + submit + wait for the queue, inputs already on the device; median of
// several firings after a warm-up. Ratios are CPU time / GPU time, measured in this run.
import { getKernel, withDefaults } from '../src/registry.js';
import { GpuRunner, allocate, runCpu, type TypedArray } from '../src/gpu/harness.js';
import { uploadBuffer } from '../src/gpu/pipeline.js';
import { createTestDevice, type TestDevice } from '../src/gpu/node-device.js';
import { SALIENCY_PATHWAY } from '../src/saliency/index.js';
import type { Params } from '../src/types.js';

const backends = (process.env.PIPELOOM_BENCH_BACKENDS ?? 'opengl').split(',').map((s) => s.trim()) as Array<'opengl' | 'default'>;
const quick = process.argv.includes('--quick');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeCpu(fn: () => void, budgetMs: number): number {
  fn(); // warm-up (JIT)
  const times: number[] = [];
  const t0 = performance.now();
  while (times.length < 3 || (performance.now() - t0 < budgetMs && times.length < 15)) {
    const s = performance.now();
    fn();
    times.push(performance.now() - s);
  }
  return median(times);
}

async function timeGpu(fire: () => Promise<unknown>, budgetMs: number): Promise<number> {
  await fire();
  const times: number[] = [];
  const t0 = performance.now();
  while (times.length < 3 || (performance.now() - t0 < budgetMs && times.length < 15)) {
    const s = performance.now();
    await fire();
    times.push(performance.now() - s);
  }
  return median(times);
}

/** Bench sizes: large enough to be real work, small enough for a 2-core VM. */
const cases: Array<{ id: string; params: Params; label: string }> = [
  { id: 'matrix.produce', params: { width: 2048, height: 2048 }, label: '2048x2048' },
  { id: 'matrix.increment', params: { width: 2048, height: 2048, nb_loop: 100 }, label: '2048x2048, nb_loop 100' },
  { id: 'matrix.add', params: { width: 2048, height: 2048 }, label: '2048x2048' },
  { id: 'matrix.consume', params: { width: 2048, height: 2048 }, label: '2048x2048' },
  { id: 'granulometry.volume', params: { depth: 64, height: 64, width: 64, radius: 4, spheres: 20, levels: 9 }, label: '64^3, 20 balls' },
  {
    id: 'granulometry.openings',
    params: { depth: 64, height: 64, width: 64, radius: 4, spheres: 20, levels: 9, first: 1, last: 8 },
    label: '64^3, openings 1-8',
  },
  { id: 'granulometry.curve', params: { depth: 64, height: 64, width: 64, levels: 9 }, label: '9 levels' },
  ...(['saliency.image', ...SALIENCY_PATHWAY] as string[]).map((id) => ({ id, params: { width: 720, height: 576 }, label: '720x576' })),
];

/** Inputs for a kernel: the CPU outputs of the kernels before it in its family's chain. */
function inputsFor(id: string, params: Params, cache: Map<string, TypedArray>): Record<string, TypedArray> {
  const k = getKernel(id);
  const out: Record<string, TypedArray> = {};
  for (const port of k.inputs) {
    const key = `${id}.${port.name}`;
    if (cache.has(key)) out[port.name] = cache.get(key)!;
    else {
      const a = allocate(k, withDefaults(k, params), port.name, 'in');
      // the consumer gets what it expects (iteration 1, no increments) so it checks every element
      if (a instanceof Float32Array) for (let i = 0; i < a.length; i++) a[i] = id === 'matrix.consume' ? 1 : (i * 7919) % 101;
      out[port.name] = a;
    }
  }
  return out;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .flatMap((r, i) => {
      const line = `| ${r.map((c, j) => (j < 2 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join(' | ')} |`;
      return i === 0 ? [line, `|${widths.map((w, j) => (j < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`] : [line];
    })
    .join('\n');
}

const devices: TestDevice[] = [];
const short = (d: TestDevice) => d.name.split(/[-\s]/)[0];
for (const b of backends) devices.push(await createTestDevice(b));
const budget = quick ? 300 : 1500;

// Chain each family so kernels see realistic data (the openings see balls, the fuse sees maps).
const cache = new Map<string, TypedArray>();
const feed = (from: string, fromParams: Params, to: string) => {
  const res = runCpu(getKernel(from), fromParams, inputsFor(from, fromParams, cache));
  cache.set(`${to}.in`, res.outputs.out);
};
feed('granulometry.volume', cases[4].params, 'granulometry.openings');
feed('granulometry.openings', cases[5].params, 'granulometry.curve');
{
  let prev = runCpu(getKernel('saliency.image'), { width: 720, height: 576 }, {}).outputs.out;
  for (const id of SALIENCY_PATHWAY) {
    cache.set(`${id}.in`, prev);
    prev = runCpu(getKernel(id), { width: 720, height: 576 }, { in: prev }).outputs.out;
  }
}

const head = ['kernel', 'size', 'CPU ms', ...devices.flatMap((d) => [`${short(d)} ms`, 'CPU / GPU'])];
const rows = [head];
for (const c of cases) {
  const k = getKernel(c.id);
  const p = withDefaults(k, c.params);
  const inputs = inputsFor(c.id, p, cache);
  const state = {};
  const cpu = timeCpu(() => runCpu(k, p, inputs, 1, state), budget);
  const row = [c.id, c.label, cpu.toFixed(2)];
  for (const d of devices) {
    const run = await GpuRunner.create(d.device, k, p);
    const bufs = Object.fromEntries(Object.entries(inputs).map(([n, a]) => [n, uploadBuffer(d.device, a)]));
    const gpu = await timeGpu(() => run.fireBuffers(bufs, 1), budget);
    row.push(gpu.toFixed(2), (cpu / gpu).toFixed(1));
    run.destroy();
    for (const b of Object.values(bufs)) b.destroy();
  }
  rows.push(row);
  process.stderr.write('.');
}
process.stderr.write('\n');

// Whole-pathway frame rate: every step of one frame in one command buffer (image source
// included), as one GPU of the paper ran it.
const fpsRows = [['saliency pathway', 'size', 'CPU fps', ...devices.flatMap((d) => [`${short(d)} fps`, 'GPU / CPU']), 'paper (GTX 285) fps']];
for (const [w, h, paper] of [
  [512, 512, 44],
  [720, 576, 21],
]) {
  const p = { width: w, height: h };
  const state = {};
  const cpu = timeCpu(
    () => {
      let prev = runCpu(getKernel('saliency.image'), p, {}, 0, state).outputs.out;
      for (const id of SALIENCY_PATHWAY) prev = runCpu(getKernel(id), p, { in: prev }).outputs.out;
    },
    quick ? 0 : budget,
  );
  const row = ['Algorithm 1 (8 steps)', `${w}x${h}`, (1000 / cpu).toFixed(2)];
  for (const d of devices) {
    const runs: GpuRunner[] = [];
    for (const id of ['saliency.image', ...SALIENCY_PATHWAY]) runs.push(await GpuRunner.create(d.device, getKernel(id), p));
    const frame = async () => {
      const enc = d.device.createCommandEncoder();
      let prev: GPUBuffer | undefined;
      for (const r of runs) {
        r.executor.encode(enc, { iteration: 0, inputs: prev ? { in: prev } : {}, outputs: r.outputBuffers as Record<string, GPUBuffer> });
        prev = r.outputBuffers.out;
      }
      d.device.queue.submit([enc.finish()]);
      await d.device.queue.onSubmittedWorkDone();
    };
    const gpu = await timeGpu(frame, budget);
    row.push((1000 / gpu).toFixed(2), (cpu / gpu).toFixed(1));
    for (const r of runs) r.destroy();
  }
  row.push(String(paper));
  fpsRows.push(row);
}

console.log(`Kernels: one firing each, median; node ${process.version}; adapters: ${devices.map((d) => d.name).join('; ')}`);
console.log(table(rows));
console.log();
console.log(table(fpsRows));
for (const d of devices) d.destroy();
