import type { GpuExecutor, Kernel, Params } from '../types.js';
import { implement } from '../implement.js';
import { maps, px, saliencySpecs } from './spec.js';
import { bindGroup, createPipeline, dispatch, linear, packWords, storageBuffer, uniformBuffer, uploadBuffer } from '../gpu/pipeline.js';
import { plan, twiddleTable, type Pass } from './fft.js';
import type { DispatchInfo } from '../types.js';
import { synthesize, type Scene } from './model.js';
import { fftCpu, fuseCpu, gaborCpu, hanningCpu, ifftCpu, interactionsCpu, ittiCpu, normalizeCpu, type BankParams } from './cpu.js';
import * as W from './wgsl.js';
import { imageFile } from './image-file.js';

// The static pathway of the visual saliency model (paper section 5.3, Algorithm 1), one kernel
// per step so that a mapping can cut it anywhere (Fig 24: the first five on GPU 0, the
// normalizations on GPU 1).

const bp = (p: Params): BankParams => ({
  width: Number(p.width),
  height: Number(p.height),
  orientations: Number(p.orientations),
  frequencies: Number(p.frequencies),
});

type Prep = (device: GPUDevice, params: Params) => Promise<GpuExecutor>;

/** An element-wise step: one pipeline, one uniform, inputs then output bound in port order. */
function simple(kernel: string, name: string, code: string, uniform: (p: Params) => ArrayBuffer, threads: (p: Params) => number, ports: string[]): Prep {
  return async (device, params) => {
    const pipeline = await createPipeline(device, kernel, name, code);
    const uni = uniformBuffer(device, uniform(params));
    return {
      encode(enc, f) {
        const bufs = ports.map((p) => f.inputs[p] ?? f.outputs[p]);
        dispatch(enc, pipeline, bindGroup(device, pipeline, [uni, ...bufs]), threads(params), kernel);
      },
      destroy: () => uni.destroy(),
    };
  };
}

/**
 * A 2D FFT on `count` planes: rows then columns, one dispatch per Stockham pass, ping-pong
 * between two work buffers; the first pass reads `first`, the last writes the output.
 */
async function fftPlan(device: GPUDevice, kernel: string, p: Params, count: number, sign: -1 | 1) {
  const w = Number(p.width);
  const h = Number(p.height);
  const pipeline = await createPipeline(device, kernel, 'fft_pass', W.FFT_PASS);
  const pw = plan(w, sign, kernel, 'width');
  const ph = plan(h, sign, kernel, 'height');
  const total = pw.length + ph.length;
  const passes: Array<{ uni: GPUBuffer; tw: GPUBuffer; threads: number }> = [];
  const add = (ps: Pass, n: number, words: Array<['u', number]>) => {
    const scale = sign === 1 && passes.length === total - 1 ? 1 / (w * h) : 1;
    const uni = uniformBuffer(device, packWords([['u', n], ['u', ps.R], ['u', ps.ns], ...words, ['f', scale]]));
    passes.push({ uni, tw: uploadBuffer(device, twiddleTable(ps), `${kernel}/twiddles`), threads: (count * h * w) / ps.R });
  };
  // rows: line l at l w, stride 1; columns: line l = (plane, x) at plane h w + x, stride w
  for (const ps of pw)
    add(ps, w, [
      ['u', 1],
      ['u', count * h],
      ['u', 1],
      ['u', w],
      ['u', 0],
    ]);
  for (const ps of ph)
    add(ps, h, [
      ['u', w],
      ['u', count * w],
      ['u', w],
      ['u', h * w],
      ['u', 1],
    ]);
  const work = [storageBuffer(device, count * w * h * 8, `${kernel}/a`), storageBuffer(device, count * w * h * 8, `${kernel}/b`)];
  return {
    work,
    encode(enc: GPUCommandEncoder, first: GPUBuffer, out: GPUBuffer) {
      let src = first;
      passes.forEach((ps, i) => {
        const dst = i === passes.length - 1 ? out : work[i % 2] === src ? work[(i + 1) % 2] : work[i % 2];
        dispatch(enc, pipeline, bindGroup(device, pipeline, [ps.uni, src, dst, ps.tw]), ps.threads, `${kernel} pass ${i}`);
        src = dst;
      });
    },
    destroy() {
      for (const b of [...work, ...passes.flatMap((x) => [x.uni, x.tw])]) b.destroy();
    },
  };
}

/** Per-map statistics then an apply step (normalize, Itti, fuse). */
function statsThen(kernel: string, name: string, code: string, uniform: (p: Params) => ArrayBuffer, threads: (p: Params) => number): Prep {
  return async (device, params) => {
    const stats = await createPipeline(device, kernel, 'stats', W.STATS);
    const apply = await createPipeline(device, kernel, name, code);
    const m = maps(params);
    const statsU = uniformBuffer(device, packWords([['u', px(params)]]));
    const applyU = uniformBuffer(device, uniform(params));
    const st = storageBuffer(device, m * 16, `${kernel}/stats`);
    return {
      encode(enc, f) {
        const pass = enc.beginComputePass({ label: `${kernel} stats` });
        pass.setPipeline(stats);
        pass.setBindGroup(0, bindGroup(device, stats, [statsU, f.inputs.in, st]));
        pass.dispatchWorkgroups(m);
        pass.end();
        dispatch(enc, apply, bindGroup(device, apply, [applyU, f.inputs.in, st, f.outputs.out]), threads(params), kernel);
      },
      destroy() {
        for (const b of [statsU, applyU, st]) b.destroy();
      },
    };
  };
}

function sourceImage(p: Params): Float32Array {
  if (p.scene === 'file') return imageFile(String(p.file), Number(p.width), Number(p.height));
  const img = new Float32Array(px(p));
  synthesize(img, Number(p.width), Number(p.height), String(p.scene) as Scene, Number(p.seed));
  return img;
}

/** The FFT passes' dispatches: one per radix, rows then columns. */
function fftDispatches(p: Params, kernel: string, count: number): DispatchInfo[] {
  return [...plan(Number(p.width), -1, kernel, 'width'), ...plan(Number(p.height), -1, kernel, 'height')].map((ps) =>
    linear('fft_pass', (count * px(p)) / ps.R),
  );
}
const statsDispatch = (p: Params): DispatchInfo => ({ module: 'stats', workgroups: [maps(p), 1, 1] });

/**
 * A per-map normalisation: a stats pass (each map's extremes), then `apply` over every pixel in
 * the mode its uniform names (0: normalize, 1: Itti's), with the same CPU twin's arguments.
 */
function statsKernel(kernel: string, cpu: (input: Float32Array, output: Float32Array, maps: number, px: number) => void, mode: 0 | 1) {
  return {
    cpu: ({ params, inputs, outputs }: { params: Params; inputs: Record<string, unknown>; outputs: Record<string, unknown> }) =>
      cpu(inputs.in as Float32Array, outputs.out as Float32Array, maps(params), px(params)),
    gpu: {
      wgsl: { stats: W.STATS, apply: W.APPLY },
      dispatches: (p: Params) => [statsDispatch(p), linear('apply', maps(p) * px(p))],
      prepare: statsThen(
        kernel,
        'apply',
        W.APPLY,
        (p) =>
          packWords([
            ['u', px(p)],
            ['u', maps(p)],
            ['u', mode],
          ]),
        (p) => maps(p) * px(p),
      ),
    },
  };
}

export const saliencyKernels: Kernel[] = implement(saliencySpecs, {
  'saliency.image': {
    cpu: ({ params, outputs, state }) => {
      const out = outputs.out as Float32Array;
      if (!(state.image instanceof Float32Array)) state.image = sourceImage(params);
      out.set(state.image as Float32Array);
    },
    gpu: {
      wgsl: {},
      dispatches: () => [],
      async prepare(device, params) {
        const img = sourceImage(params);
        const src = uploadBuffer(device, img, 'saliency.image');
        return { encode: (enc, f) => enc.copyBufferToBuffer(src, 0, f.outputs.out, 0, img.byteLength), destroy: () => src.destroy() };
      },
    },
  },
  'saliency.hanning': {
    cpu: ({ params, inputs, outputs }) => hanningCpu(inputs.in as Float32Array, outputs.out as Float32Array, Number(params.width), Number(params.height)),
    gpu: {
      wgsl: { hanning: W.HANNING },
      dispatches: (p) => [linear('hanning', px(p))],
      prepare: simple(
        'saliency.hanning',
        'hanning',
        W.HANNING,
        (p) =>
          packWords([
            ['u', Number(p.width)],
            ['u', Number(p.height)],
          ]),
        px,
        ['in', 'out'],
      ),
    },
  },
  'saliency.fft': {
    cpu: ({ params, inputs, outputs }) => fftCpu(inputs.in as Float32Array, outputs.out as Float32Array, Number(params.width), Number(params.height)),
    gpu: {
      wgsl: { pack: W.PACK, fft_pass: W.FFT_PASS },
      dispatches: (p) => [linear('pack', px(p)), ...fftDispatches(p, 'saliency.fft', 1)],
      async prepare(device, params) {
        const pack = await createPipeline(device, 'saliency.fft', 'pack', W.PACK);
        const plan = await fftPlan(device, 'saliency.fft', params, 1, -1);
        const uni = uniformBuffer(device, packWords([['u', px(params)]]));
        return {
          encode(enc, f) {
            dispatch(enc, pack, bindGroup(device, pack, [uni, f.inputs.in, plan.work[1]]), px(params), 'saliency.fft pack');
            plan.encode(enc, plan.work[1], f.outputs.out);
          },
          destroy() {
            uni.destroy();
            plan.destroy();
          },
        };
      },
    },
  },
  'saliency.gabor': {
    cpu: ({ params, inputs, outputs }) => gaborCpu(inputs.in as Float32Array, outputs.out as Float32Array, bp(params)),
    gpu: {
      wgsl: { gabor: W.GABOR },
      dispatches: (p) => [linear('gabor', maps(p) * px(p))],
      prepare: simple(
        'saliency.gabor',
        'gabor',
        W.GABOR,
        (p) =>
          packWords([
            ['u', Number(p.width)],
            ['u', Number(p.height)],
            ['u', Number(p.orientations)],
            ['u', Number(p.frequencies)],
          ]),
        (p) => maps(p) * px(p),
        ['in', 'out'],
      ),
    },
  },
  'saliency.ifft': {
    cpu: ({ params, inputs, outputs }) => ifftCpu(inputs.in as Float32Array, outputs.out as Float32Array, bp(params)),
    gpu: {
      wgsl: { fft_pass: W.FFT_PASS },
      dispatches: (p) => fftDispatches(p, 'saliency.ifft', maps(p)),
      async prepare(device, params) {
        const plan = await fftPlan(device, 'saliency.ifft', params, maps(params), 1);
        return { encode: (enc, f) => plan.encode(enc, f.inputs.in, f.outputs.out), destroy: () => plan.destroy() };
      },
    },
  },
  'saliency.interactions': {
    cpu: ({ params, inputs, outputs }) =>
      interactionsCpu(inputs.in as Float32Array, outputs.out as Float32Array, bp(params), Number(params.excite), Number(params.inhibit)),
    gpu: {
      wgsl: { interactions: W.INTERACTIONS },
      dispatches: (p) => [linear('interactions', maps(p) * px(p))],
      prepare: simple(
        'saliency.interactions',
        'interactions',
        W.INTERACTIONS,
        (p) =>
          packWords([
            ['u', px(p)],
            ['u', Number(p.orientations)],
            ['u', Number(p.frequencies)],
            ['f', Number(p.excite)],
            ['f', Number(p.inhibit)],
          ]),
        (p) => maps(p) * px(p),
        ['in', 'out'],
      ),
    },
  },
  'saliency.normalize': statsKernel('saliency.normalize', normalizeCpu, 0),
  'saliency.itti': statsKernel('saliency.itti', ittiCpu, 1),
  'saliency.fuse': {
    cpu: ({ params, inputs, outputs }) => fuseCpu(inputs.in as Float32Array, outputs.out as Float32Array, maps(params), px(params), Number(params.threshold)),
    gpu: {
      wgsl: { stats: W.STATS, fuse: W.FUSE },
      dispatches: (p) => [statsDispatch(p), linear('fuse', px(p))],
      prepare: statsThen(
        'saliency.fuse',
        'fuse',
        W.FUSE,
        (p) =>
          packWords([
            ['u', px(p)],
            ['u', maps(p)],
            ['f', Number(p.threshold)],
          ]),
        px,
      ),
    },
  },
});

export { SALIENCY_PATHWAY } from './spec.js';
