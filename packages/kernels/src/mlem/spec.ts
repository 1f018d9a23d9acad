import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, ParamSpec, Params } from '../types.js';

// MLEM (Pedemonte et al., the Boss/Worker paper, Eq. 1) as data: ports, params, cost hints.
// How they run is in index.ts; nothing here loads WGSL (core reads these through
// '@pipeloom/kernels/specs'). The estimate lives in an N^3 volume [z][y][x]; the scanner is a
// parallel beam rotating about z: A angles over 180 degrees, N detector bins per z-slice, so a
// sinogram is [A][z][t].

export const MAX_SIZE = 256;
export const MAX_ANGLES = 720;

const sizeParam: ParamSpec = {
  type: 'int',
  default: 32,
  min: 2,
  max: MAX_SIZE,
  unit: 'voxels',
  description: 'N: the volume is N x N x N voxels, N detector bins per slice',
};
const anglesParam: ParamSpec = {
  type: 'int',
  default: 36,
  min: 1,
  max: MAX_ANGLES,
  unit: 'angles',
  description: 'A: projection angles pi a / A, a = 0..A-1 (over 180 degrees)',
};

/** Why an estimate must start above 0. */
const ESTIMATE_POSITIVE = 'an MLEM estimate: the update is multiplicative, so a voxel at 0 stays 0 and the reconstruction is lost';

export const voxelCount = (p: Params) => Number(p.size) ** 3;
export const binCount = (p: Params) => Number(p.angles) * Number(p.size) ** 2;

const volumeType = (p: Params): DataType => ({ kind: 'volume', element: 'f32', shape: [Number(p.size), Number(p.size), Number(p.size)] });
const sinogramType = (p: Params): DataType => ({ kind: 'sinogram', element: 'f32', shape: [Number(p.angles), Number(p.size), Number(p.size)] });

/**
 * The angles share j of K takes: j, j + K, j + 2K, ... < A (interleaved, so every share sees
 * the whole half-turn and the shares' costs differ by at most one angle).
 */
export function shareAngles(angles: number, shares: number, share: number): number[] {
  const out: number[] = [];
  for (let a = share; a < angles; a += shares) out.push(a);
  return out;
}

/** Per angle and sample: 4 bilinear taps forward, up to 9 candidate samples gathered back. */
const PROJBP_FLOPS_PER_VOXEL_ANGLE = 4 * 10 + 9 * 14;

export const mlemSpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'mlem.phantom',
    title: 'MLEM phantom',
    category: 'MLEM',
    description:
      'Stands for the scanner: a seeded phantom (a body sphere of activity `background` holding `spheres` non-overlapping spheres of activity 0 or 2..8), ' +
      'its sinogram n = P lambda_true (noiseless, or seeded Poisson with `counts` expected counts in all) and the sensitivity s = P^T 1. ' +
      'P: parallel beam about z, rotate-and-sum with bilinear interpolation in each z-slice.',
    params: {
      size: sizeParam,
      angles: anglesParam,
      spheres: {
        type: 'int',
        default: 6,
        min: 0,
        max: 64,
        unit: 'spheres',
        description: 'Spheres of known activity inside the body (fewer when they do not fit)',
      },
      background: { type: 'float', default: 1, min: 0, max: 1000, description: 'Activity of the body sphere around them' },
      counts: {
        type: 'float',
        default: 0,
        min: 0,
        max: 1e8,
        unit: 'counts',
        description: '0: noiseless n = P lambda_true; else the expected total of Poisson counts (seeded)',
      },
      seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, description: 'Seed of the spheres and of the Poisson noise' },
    },
    inputs: [],
    outputs: [
      { name: 'truth', description: 'lambda_true, the phantom', type: volumeType },
      { name: 'sinogram', description: 'n, the measured counts', type: sinogramType },
      { name: 'sensitivity', description: 's = P^T 1', type: volumeType },
    ],
    cost: (p) => ({ flops: voxelCount(p) * Number(p.angles) * PROJBP_FLOPS_PER_VOXEL_ANGLE, bytes: (2 * voxelCount(p) + binCount(p)) * 4 }),
  },
  {
    id: 'mlem.projbp',
    title: 'MLEM project and back-project',
    category: 'MLEM',
    description:
      'For the estimate lambda and the counts n: r = n / (P lambda) (0 where (P lambda)_d = 0), then the back-projection P^T r, over the angles of share `share` of `shares` (angles share, share + shares, ...). ' +
      "Split param: shares; combine: sum of the shares' outputs in share order. The back-projector is the exact transpose of the projector, written as a gather.",
    params: {
      size: sizeParam,
      angles: anglesParam,
      shares: {
        type: 'int',
        default: 1,
        min: 1,
        max: MAX_ANGLES,
        unit: 'shares',
        description: 'K: the angles are split into K interleaved shares (at most A)',
      },
      share: { type: 'int', default: 0, min: 0, max: MAX_ANGLES - 1, unit: 'share', description: 'j < K: this node takes angles j, j + K, j + 2K, ...' },
    },
    inputs: [
      { name: 'estimate', description: 'lambda', type: volumeType, positive: ESTIMATE_POSITIVE },
      { name: 'sinogram', description: 'n', type: sinogramType },
    ],
    outputs: [{ name: 'backprojection', description: "P^T (n / P lambda) over this share's angles", type: volumeType }],
    split: { count: 'shares', index: 'share', range: 'angles', combine: 'sum' },
    cost: (p) => {
      const m = Math.ceil(Number(p.angles) / Math.max(1, Number(p.shares)));
      return { flops: voxelCount(p) * m * PROJBP_FLOPS_PER_VOXEL_ANGLE, bytes: (2 * voxelCount(p) + binCount(p) + 2 * m * Number(p.size) ** 2) * 4 };
    },
  },
  {
    id: 'mlem.update',
    title: 'MLEM update',
    category: 'MLEM',
    description: 'The multiplicative update lambda <- lambda / s * P^T(n / P lambda); 0 where s = 0.',
    params: { size: sizeParam },
    inputs: [
      { name: 'previous', description: 'lambda of the iteration before', type: volumeType, positive: ESTIMATE_POSITIVE },
      { name: 'backprojection', description: 'P^T (n / P lambda), all shares summed', type: volumeType },
      { name: 'sensitivity', description: 's = P^T 1', type: volumeType },
    ],
    outputs: [{ name: 'estimate', description: 'the next lambda', type: volumeType }],
    cost: (p) => ({ flops: 2 * voxelCount(p), bytes: 16 * voxelCount(p) }),
  },
  {
    id: 'mlem.error',
    title: 'MLEM error',
    category: 'MLEM',
    description:
      'Checks an estimate against the phantom each iteration: reports the relative L2 error ||lambda - lambda_true|| / ||lambda_true|| (`error`), its bound (`bound`) and the total activity sum(lambda) (`activity`), ' +
      "and fails the run where the error is above the bound: `max_error`, or where that is 0 the error of a flat image at the phantom's mean activity (one MLEM step from a flat start beats it, so a reconstruction that does not is wrong).",
    params: {
      size: sizeParam,
      max_error: {
        type: 'float',
        default: 0,
        min: 0,
        max: 1000,
        description: "The largest relative error that passes; 0: the error of a flat image at the phantom's mean activity",
      },
    },
    inputs: [
      { name: 'estimate', description: 'lambda', type: volumeType },
      { name: 'truth', description: 'lambda_true, the phantom', type: volumeType },
    ],
    outputs: [],
    cost: (p) => ({ flops: 4 * voxelCount(p), bytes: 8 * voxelCount(p) }),
  },
]);
