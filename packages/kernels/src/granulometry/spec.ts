import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, ParamSpec, Params } from '../types.js';

// Granulometry's kernels as data (ports, params, cost hints); how they run is in index.ts.
// Nothing here loads WGSL: core reads these through '@pipeloom/kernels/specs'.

const dimParams: Record<string, ParamSpec> = {
  depth: { type: 'int', default: 64, min: 3, max: 1024, unit: 'voxels', description: 'Volume depth' },
  height: { type: 'int', default: 64, min: 3, max: 1024, unit: 'voxels', description: 'Volume height' },
  width: { type: 'int', default: 64, min: 3, max: 1024, unit: 'voxels', description: 'Volume width' },
};
const levelsParam: ParamSpec = {
  type: 'int',
  default: 16,
  min: 2,
  max: 1024,
  unit: 'openings',
  description: 'Length of the curve: openings 0..levels-1 (0 is the volume itself)',
};

export const voxels = (p: Params) => Number(p.depth) * Number(p.height) * Number(p.width);
const volumeType = (p: Params): DataType => ({ kind: 'volume', element: 'u32', shape: [Number(p.depth), Number(p.height), Number(p.width)] });
const stateType = (p: Params): DataType => ({ kind: 'granulometry', element: 'u32', shape: [Number(p.levels) + voxels(p)] });
const curveType = (p: Params): DataType => ({ kind: 'curve', element: 'f32', shape: [2, Number(p.levels)] });

export const granulometrySpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'granulometry.volume',
    title: 'Sphere volume',
    category: 'Granulometry',
    description: 'Seeded synthetic binary volume of non-overlapping balls of one radius (the known predominant size); stands for the CPU reading the image.',
    params: {
      ...dimParams,
      radius: { type: 'int', default: 5, min: 1, max: 200, unit: 'voxels', description: 'Radius of every ball (the expected predominant size)' },
      spheres: { type: 'int', default: 12, min: 1, max: 4096, unit: 'balls', description: 'Balls to place (fewer if they do not fit)' },
      seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, description: 'Placement seed' },
    },
    inputs: [],
    outputs: [{ name: 'out', type: volumeType }],
    cost: (p) => ({ flops: voxels(p) * 8 * Number(p.spheres), bytes: voxels(p) * 4 }),
  },
  {
    id: 'granulometry.openings',
    title: 'Openings first..last',
    category: 'Granulometry',
    description:
      'Openings of size first..last by the 6-neighbour cross (opening n = n erosions then n dilations), counting the voxels left after each. Input: the volume (first = 1) or the state of the stage before; output: the state for the next stage or the curve.',
    params: {
      ...dimParams,
      levels: levelsParam,
      first: { type: 'int', default: 1, min: 1, max: 1023, unit: 'opening', description: 'First opening size done here (1 takes the raw volume)' },
      last: { type: 'int', default: 15, min: 1, max: 1023, unit: 'opening', description: 'Last opening size done here (< levels)' },
    },
    inputs: [
      {
        name: 'in',
        description: 'The volume when first = 1, else the state of the stage before',
        type: (p) => (Number(p.first) === 1 ? volumeType(p) : stateType(p)),
      },
    ],
    outputs: [{ name: 'out', type: stateType }],
    cost: (p) => {
      const k = Math.max(0, Number(p.last) - Number(p.first) + 1);
      const ops = k + (Number(p.last) * (Number(p.last) + 1) - (Number(p.first) - 1) * Number(p.first)) / 2 + k;
      return { flops: voxels(p) * 7 * ops, bytes: voxels(p) * 8 * ops };
    },
  },
  {
    id: 'granulometry.curve',
    title: 'Granulometric curve',
    category: 'Granulometry',
    description:
      'The granulometric curve (voxels left after each opening), its pattern spectrum (count[n] - count[n+1]) and the predominant size (the spectrum peak).',
    params: { ...dimParams, levels: levelsParam },
    inputs: [{ name: 'in', type: stateType }],
    outputs: [{ name: 'out', description: 'Row 0: the curve; row 1: the pattern spectrum', type: curveType }],
    cost: (p) => ({ flops: Number(p.levels) * 2, bytes: Number(p.levels) * 12 }),
  },
]);
