import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, ParamSpec, Params } from '../types.js';

// The saliency pathway's kernels as data (ports, params, cost hints); how they run is in
// index.ts. Nothing here loads WGSL or the image decoder: core reads these through
// '@pipeloom/kernels/specs'.

const sizeParams: Record<string, ParamSpec> = {
  width: { type: 'int', default: 512, min: 2, max: 4096, unit: 'pixels', description: 'Image width (prime factors <= 13, e.g. 512 or 720)' },
  height: { type: 'int', default: 512, min: 2, max: 4096, unit: 'pixels', description: 'Image height (prime factors <= 13, e.g. 512 or 576)' },
};
const bankParams: Record<string, ParamSpec> = {
  ...sizeParams,
  orientations: { type: 'int', default: 6, min: 1, max: 16, unit: 'orientations', description: 'Gabor orientations theta_i = i pi / orientations' },
  frequencies: { type: 'int', default: 4, min: 1, max: 8, unit: 'bands', description: 'Gabor frequency bands f_j = 0.25 / 2^j cycles/pixel' },
};

export const px = (p: Params) => Number(p.width) * Number(p.height);
export const maps = (p: Params) => Number(p.orientations) * Number(p.frequencies);
const imageType = (p: Params): DataType => ({ kind: 'image', element: 'f32', shape: [Number(p.height), Number(p.width)] });
const spectrumType = (p: Params): DataType => ({ kind: 'spectrum', element: 'f32', shape: [Number(p.height), Number(p.width), 2] });
const complexMapsType = (p: Params): DataType => ({ kind: 'complex-maps', element: 'f32', shape: [maps(p), Number(p.height), Number(p.width), 2] });
const mapsType = (p: Params): DataType => ({ kind: 'maps', element: 'f32', shape: [maps(p), Number(p.height), Number(p.width)] });

const fftFlops = (p: Params, count: number) => 5 * count * px(p) * Math.log2(Math.max(2, px(p)));

export const saliencySpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'saliency.image',
    title: 'Image source',
    category: 'Visual saliency',
    description:
      "A grey-level image in [0, 1]: a PGM/PNG file (scene 'file') or a seeded synthetic scene, 'blob' (noise texture, dim dots, one large bright disc: the odd blob) or 'noise'. Made once; every firing emits it.",
    params: {
      ...sizeParams,
      scene: { type: 'enum', default: 'blob', values: ['blob', 'noise', 'file'], description: "Synthetic scene, or 'file' for the PGM/PNG named by `file`" },
      file: { type: 'string', default: '', description: "With scene 'file': the PGM (P2/P5) or PNG the host registered, resampled to width x height" },
      seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, description: 'Scene seed' },
    },
    inputs: [],
    outputs: [{ name: 'out', type: imageType }],
    cost: (p) => ({ flops: 0, bytes: px(p) * 4 }),
  },
  {
    id: 'saliency.hanning',
    title: 'Hanning filter',
    category: 'Visual saliency',
    description: 'r_fim = r_im x hann(x) x hann(y): fades the image towards its edges before the FFT.',
    params: { ...sizeParams },
    inputs: [{ name: 'in', type: imageType }],
    outputs: [{ name: 'out', type: imageType }],
    cost: (p) => ({ flops: px(p) * 2, bytes: px(p) * 8 }),
  },
  {
    id: 'saliency.fft',
    title: 'FFT',
    category: 'Visual saliency',
    description: '2D forward FFT of the real image (mixed-radix Stockham, sizes with prime factors <= 13, no padding).',
    params: { ...sizeParams },
    inputs: [{ name: 'in', type: imageType }],
    outputs: [{ name: 'out', type: spectrumType }],
    cost: (p) => ({ flops: fftFlops(p, 1), bytes: px(p) * 8 * 2 * Math.ceil(Math.log2(Math.max(2, px(p))) / 2) }),
  },
  {
    id: 'saliency.gabor',
    title: 'Gabor filter bank',
    category: 'Visual saliency',
    description: 'cf_maps[i, j] = cf_fim x G_ij, the 24 (orientations x frequencies) filters of the G_ij formula applied in the frequency domain.',
    params: { ...bankParams },
    inputs: [{ name: 'in', type: spectrumType }],
    outputs: [{ name: 'out', type: complexMapsType }],
    cost: (p) => ({ flops: maps(p) * px(p) * 20, bytes: maps(p) * px(p) * 8 + px(p) * 8 }),
  },
  {
    id: 'saliency.ifft',
    title: 'IFFT',
    category: 'Visual saliency',
    description: 'c_maps[i, j] = IFFT(cf_maps[i, j]) for every partial map (scaled by 1 / (width x height)).',
    params: { ...bankParams },
    inputs: [{ name: 'in', type: complexMapsType }],
    outputs: [{ name: 'out', type: complexMapsType }],
    cost: (p) => ({ flops: fftFlops(p, maps(p)), bytes: maps(p) * px(p) * 16 * 4 }),
  },
  {
    id: 'saliency.interactions',
    title: 'Interactions',
    category: 'Visual saliency',
    description:
      'r_maps from the energy |c|^2 of each partial map: + excite x the same orientation at the neighbouring frequencies, - inhibit x the neighbouring orientations at the same frequency, clipped at 0.',
    params: {
      ...bankParams,
      excite: { type: 'float', default: 0.5, min: 0, max: 4, description: 'Weight of the same orientation at neighbouring frequencies' },
      inhibit: { type: 'float', default: 0.5, min: 0, max: 4, description: 'Weight of neighbouring orientations at the same frequency' },
    },
    inputs: [{ name: 'in', type: complexMapsType }],
    outputs: [{ name: 'out', type: mapsType }],
    cost: (p) => ({ flops: maps(p) * px(p) * 15, bytes: maps(p) * px(p) * (8 * 5 + 4) }),
  },
  {
    id: 'saliency.normalize',
    title: 'Normalize',
    category: 'Visual saliency',
    description: 'Each partial map to the range [0, 1]: (m - min) / (max - min).',
    params: { ...bankParams },
    inputs: [{ name: 'in', type: mapsType }],
    outputs: [{ name: 'out', type: mapsType }],
    cost: (p) => ({ flops: maps(p) * px(p) * 5, bytes: maps(p) * px(p) * 12 }),
  },
  {
    id: 'saliency.itti',
    title: "Itti's method",
    category: 'Visual saliency',
    description: 'Each partial map times (max(m) - mean(m))^2: maps with a few strong peaks win over maps with many.',
    params: { ...bankParams },
    inputs: [{ name: 'in', type: mapsType }],
    outputs: [{ name: 'out', type: mapsType }],
    cost: (p) => ({ flops: maps(p) * px(p) * 5, bytes: maps(p) * px(p) * 12 }),
  },
  {
    id: 'saliency.fuse',
    title: 'Normalize and fuse',
    category: 'Visual saliency',
    description: 'Divides the maps by their common maximum, suppresses values under the threshold and sums them: the static saliency map.',
    params: {
      ...bankParams,
      threshold: { type: 'float', default: 0.1, min: 0, max: 1, description: 'Values under this fraction of the maximum are suppressed' },
    },
    inputs: [{ name: 'in', type: mapsType }],
    outputs: [{ name: 'out', type: imageType }],
    cost: (p) => ({ flops: maps(p) * px(p) * 4, bytes: maps(p) * px(p) * 8 + px(p) * 4 }),
  },
]);

/** The static pathway in order, for benches and checks: kernel ids of Algorithm 1's steps. */
export const SALIENCY_PATHWAY = [
  'saliency.hanning',
  'saliency.fft',
  'saliency.gabor',
  'saliency.ifft',
  'saliency.interactions',
  'saliency.normalize',
  'saliency.itti',
  'saliency.fuse',
] as const;
