import { builtinBinarySpecs } from '../binary.js';
import { scanElementType } from '../binary-modes.js';
import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, ParamSpec, Params, PortSpec } from '../types.js';

/** Pyramid levels: full size, half, quarter (the 3-level coarse-to-fine scheme). */
export const LEVELS = 3;
export const LATTICE = 8;
export const LATTICE_SIGMA = 1.6;
export const FEATURES = 16;
export const LOW_CONTRAST = 0.25;

/** Size of pyramid level l: floor(W / 2^l) x floor(H / 2^l). */
export function levelSize(width: number, height: number, level: number): [number, number] {
  return [Math.floor(width / 2 ** level), Math.floor(height / 2 ** level)];
}

/** f32 words of one frame's pyramid (levels stored finest first) and each level's offset. */
export function pyramidLayout(width: number, height: number): { words: number; offsets: number[] } {
  const offsets: number[] = [];
  let words = 0;
  for (let l = 0; l < LEVELS; l++) {
    offsets.push(words);
    const [w, h] = levelSize(width, height, l);
    words += w * h;
  }
  return { words, offsets };
}

// Image registration as a scan (Copik's thesis, A and B) as data. The series is a
// replicated `frames` context: reg2d.frames makes it (one 3-level pyramid per frame), and
// reg2d.pair and reg2d.compose read it. Elements (binary.ts) are [lo, hi, theta, tx, ty]: W = 3
// f32 bit patterns; element x_i = phi_{i,i+1} covers [i, i], and an element covering [lo, hi]
// holds phi_{lo,hi+1}, which maps frame lo's coordinates to frame hi + 1's (f_{hi+1} o phi ~ f_lo).
// How they run is in index.ts.

/** The largest frames context: 1 GiB of pyramids (the type refuses more, naming the params). */
export const MAX_SERIES_BYTES = 2 ** 30;
/** The tolerance of compose: any bracketing within this of the serial scan, in pixels of the largest corner shift. */
export const COMPOSE_TOLERANCE = 0.25;
/** Descent evaluations one application makes, about (for the cost hint; the real count is reported). */
const EVALS_PER_APPLICATION = 60;
/** Per pixel and evaluation: 4 bilinear taps, the image gradient, 15 sums. */
const FLOPS_PER_SAMPLE = 60;

const size = (what: string): ParamSpec => ({
  type: 'int',
  default: 64,
  min: 32,
  max: 512,
  unit: 'pixels',
  description: `Frame ${what} (levels of ${what} / 2 and / 4 below it)`,
});
const seriesShape = {
  width: size('width'),
  height: size('height'),
  frames: { type: 'int', default: 65, min: 2, max: 4096, unit: 'frames', description: 'Frames in the series (N elements register N + 1 frames)' } as ParamSpec,
};
const descent = {
  eps: { type: 'float', default: 1e-6, min: 0, max: 1, description: 'Stop a level when an accepted step lowers the energy 1 - NCC by less' } as ParamSpec,
  iterations: { type: 'int', default: 50, min: 1, max: 10000, unit: 'iterations', description: 'M: descent iterations per level, at most' } as ParamSpec,
};

/** The frames context: one pyramid per frame (levels W x H, W/2 x H/2, W/4 x H/4, each mean 0, sd 1), f32. */
export function framesType(p: Params): DataType {
  const { words } = pyramidLayout(Number(p.width), Number(p.height));
  const frames = Number(p.frames);
  if (frames * words * 4 > MAX_SERIES_BYTES)
    throw new Error(
      `params frames, width, height: ${frames} frames of ${p.width} x ${p.height} need ${frames * words * 4} bytes of pyramids, more than ${MAX_SERIES_BYTES} (use fewer or smaller frames)`,
    );
  return { kind: 'frame-pyramids', element: 'f32', shape: [frames, words] };
}

/** How the series looks (reg2d.frames's and reg2d.frame's params beside its shape). */
const seriesLook: Record<string, ParamSpec> = {
  seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, description: 'Seed of the scene, the drift and the noise' },
  drift: { type: 'float', default: 0.4, min: 0, max: 4, unit: 'pixels', description: 'Standard deviation of the per-frame translation step, each axis' },
  rotation: { type: 'float', default: 0.003, min: 0, max: 0.05, unit: 'radians', description: 'Standard deviation of the per-frame rotation step' },
  noise: { type: 'float', default: 0.1, min: 0, max: 10, description: 'Amplitude of the uniform noise (a lattice blob peaks at 1)' },
  low_contrast: { type: 'int', default: 0, min: 0, max: 4096, description: 'k > 0: frames k-1, 2k-1, ... have low contrast; 0: none' },
};

export const REG2D_FRAME = 'reg2d.frame';
export const REG2D_PYRAMIDS = 'reg2d.pyramids';
/** Most images reg2d.pyramids takes: one input port each. */
export const MAX_IMAGE_FRAMES = 256;

/** One full-size frame as an image, height x width (rows first). */
const frameType = (p: Params): DataType => ({ kind: 'image', element: 'f32', shape: [Number(p.height), Number(p.width)] });

/** reg2d.pyramids' ports: an image per frame, the frames context out. */
function pyramidPorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  const n = Math.max(0, Math.min(MAX_IMAGE_FRAMES, Math.floor(Number(p.frames) || 0)));
  return {
    inputs: Array.from({ length: n }, (_, i): PortSpec => ({ name: `in${i}`, description: `frame ${i}`, type: frameType })),
    outputs: [{ name: 'frames', description: 'the series, one pyramid per frame', type: framesType }],
  };
}

/** Pixels one descent evaluation visits on all levels, about. */
const samples = (p: Params) => pyramidLayout(Number(p.width), Number(p.height)).words;
const applicationCost = (p: Params) => ({ flops: EVALS_PER_APPLICATION * samples(p) * FLOPS_PER_SAMPLE, bytes: EVALS_PER_APPLICATION * samples(p) * 20 });

export const reg2dPlainSpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'reg2d.frames',
    title: 'Image series',
    category: 'Image registration',
    description:
      `A seeded synthetic microscope series: a lattice of Gaussian blobs (spacing ${LATTICE} px) plus ${FEATURES} larger non-periodic blobs, seen through a known drift ` +
      '(a rigid random walk: Gaussian steps of `rotation` rad and `drift` px per frame from frame 0), plus seeded uniform noise of amplitude `noise`; ' +
      `with low_contrast k > 0 every k-th frame has ${LOW_CONTRAST} of the contrast. Emits each frame's 3-level pyramid (each level mean 0, sd 1): the frames context of reg2d.pair and reg2d.compose.`,
    params: { ...seriesShape, ...seriesLook },
    inputs: [],
    outputs: [{ name: 'frames', description: 'the series, one pyramid per frame', type: framesType }],
    cost: (p) => ({ flops: Number(p.frames) * Number(p.width) * Number(p.height) * (9 + FEATURES) * 20, bytes: Number(p.frames) * samples(p) * 4 }),
  },
  {
    id: REG2D_FRAME,
    title: 'Image series, frame by frame',
    category: 'Image registration',
    description:
      'Frame k of the series reg2d.frames makes with the same params, at iteration k (mod frames), as an image: the full-size frame scaled to [0, 1] (its darkest pixel 0, its brightest 1; NCC ignores the scale). ' +
      'Written by io.write, the series becomes image files (data:frames/%05d.png); reg2d.pyramids makes the frames context from them again.',
    params: { ...seriesShape, ...seriesLook },
    inputs: [],
    outputs: [{ name: 'image', description: 'frame k, scaled to [0, 1]', type: frameType }],
    cost: (p) => ({ flops: Number(p.width) * Number(p.height) * (9 + FEATURES) * 20, bytes: Number(p.width) * Number(p.height) * 4 }),
  },
  {
    id: REG2D_PYRAMIDS,
    title: 'Series from images',
    category: 'Image registration',
    description:
      'The frames context of reg2d.pair and reg2d.compose from `frames` images (in0 .. in{frames - 1}, each height x width, any scale: io.read of the files reg2d.frame wrote): ' +
      "each frame's 3-level pyramid, each level mean 0 and sd 1, as reg2d.frames makes them.",
    params: {
      ...seriesShape,
      frames: { type: 'int', default: 9, min: 2, max: MAX_IMAGE_FRAMES, unit: 'frames', description: 'Frames in the series: one input image each' },
    },
    inputs: pyramidPorts({ frames: 2 }).inputs,
    outputs: pyramidPorts({ frames: 2 }).outputs,
    ports: pyramidPorts,
    cost: (p) => ({ flops: Number(p.frames) * samples(p) * 6, bytes: Number(p.frames) * (Number(p.width) * Number(p.height) + samples(p)) * 4 }),
  },
  {
    id: 'reg2d.pair',
    title: 'Register neighbours',
    category: 'Image registration',
    description:
      "The thesis's A: registers frame first + j to frame first + j + 1, j < count, from the identity (3-level coarse-to-fine gradient descent on 1 - NCC with Armijo backtracking, until the energy changes less than eps or M iterations per level). " +
      "Emits the scan's input: element j covers [first + j, first + j] and holds phi (theta, tx, ty as f32 bits), mapping frame first + j to frame first + j + 1. Reports the iterations.",
    params: {
      ...seriesShape,
      first: { type: 'int', default: 0, min: 0, max: 4094, unit: 'frames', description: 'Frame of the first pair' },
      count: { type: 'int', default: 64, min: 1, max: 4095, unit: 'pairs', description: 'Pairs (elements) to register; first + count must be a frame' },
      ...descent,
    },
    inputs: [{ name: 'frames', description: 'the series (reg2d.frames)', type: framesType }],
    outputs: [{ name: 'out', description: 'phi_{i,i+1} per pair, as scan elements', type: (p) => scanElementType(Number(p.count), 3) }],
    cost: (p) => {
      const one = applicationCost(p);
      return { flops: Number(p.count) * one.flops, bytes: Number(p.count) * one.bytes };
    },
  },
]);

export const reg2dBinarySpecs: KernelSpec[] = builtinBinarySpecs([
  {
    id: 'reg2d.compose',
    title: 'Compose registrations',
    category: 'Image registration',
    description:
      "The thesis's B, the scan operator on rigid transforms: [a, b-1] (+) [b, c-1] takes phi_ab and phi_bc and refines their composition phi_bc o phi_ab " +
      'between frames a and c (the same descent as reg2d.pair, from that guess). Payload theta, tx, ty (f32 bits); identity (0, 0, 0). ' +
      `Associative within ${COMPOSE_TOLERANCE} px of the largest corner shift (approximate), not commutative. Reports the iterations.`,
    params: { ...seriesShape, ...descent },
    words: () => 3,
    binary: {
      associativity: 'approximate',
      commutative: false,
      identity: () => [0, 0, 0],
      tolerance: COMPOSE_TOLERANCE,
      payload: 'f32',
      context: [{ name: 'frames', description: 'the series (reg2d.frames), replicated on every worker', type: framesType }],
    },
    cost: applicationCost,
  },
]);

// reg2d.check (check.ts runs it): a registration scan against the series' known drift.
export const REG2D_CHECK = 'reg2d.check';

const checkPorts = (p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } => ({
  inputs: [
    { name: 'out', description: "the scan's out: N elements", type: (q) => scanElementType(Number(q.count), 3) },
    ...(p.total === true ? [{ name: 'total', description: "the scan's total: one element", type: () => scanElementType(1, 3) } as PortSpec] : []),
    ...(p.serial === true
      ? [{ name: 'serial', description: "the serial scan's out: N elements", type: (q) => scanElementType(Number(q.count), 3) } as PortSpec]
      : []),
  ],
  outputs: [],
});

export const reg2dCheckSpecs: KernelSpec[] = builtinSpecs([
  {
    id: REG2D_CHECK,
    title: 'Registration check',
    category: 'Image registration',
    description:
      "Checks a scan of reg2d.compose over reg2d.pair's elements against the known drift of the seeded series (give it reg2d.frames's width, height, seed, drift and rotation): " +
      "every element's range ([0, i]; exclusive: the empty range [1, 0], then [0, i - 1]; with `total`, [0, N - 1]) and its transform within `within` px (the largest corner shift) of the true phi_{0, hi + 1}. " +
      "With `serial`, every element of `out` also within `tolerance` px of the serial scan's (input serial): an approximate operator's correctness (any bracketing within its tolerance of serial). " +
      'Reports the largest and the mean shift; a miss names the port, the element, its range and its shift.',
    params: {
      width: seriesShape.width,
      height: seriesShape.height,
      seed: { type: 'int', default: 1, min: 0, max: 2 ** 31 - 1, description: "Seed of the series (reg2d.frames's)" },
      drift: { type: 'float', default: 0.4, min: 0, max: 4, unit: 'pixels', description: "The series' drift (reg2d.frames's)" },
      rotation: { type: 'float', default: 0.003, min: 0, max: 0.05, unit: 'radians', description: "The series' rotation (reg2d.frames's)" },
      count: { type: 'int', default: 64, min: 1, max: 4095, unit: 'elements', description: 'Elements N of the scan (frames 0 .. N)' },
      output: {
        type: 'enum',
        default: 'inclusive',
        values: ['inclusive', 'exclusive'],
        description: "The scan's output: inclusive (y_i covers [0, i]) or exclusive (y_0 the identity, y_i covers [0, i - 1])",
      },
      total: { type: 'bool', default: false, description: 'Also check a `total` input ([0, N - 1])' },
      within: { type: 'float', default: 0.5, min: 0, max: 100, unit: 'pixels', description: 'Largest corner shift from the truth accepted' },
      serial: { type: 'bool', default: false, description: 'Also compare `out` with a `serial` input (the serial scan of the same elements)' },
      tolerance: {
        type: 'float',
        default: COMPOSE_TOLERANCE,
        min: 0,
        max: 100,
        unit: 'pixels',
        description: "Largest corner shift from the serial scan accepted (reg2d.compose's tolerance)",
      },
    },
    inputs: checkPorts({ total: false }).inputs,
    outputs: [],
    ports: checkPorts,
    cost: (p) => ({ flops: 64 * (Number(p.count) + 1), bytes: 20 * (Number(p.count) + 1) }),
  },
]);

export const reg2dSpecs: KernelSpec[] = [...reg2dPlainSpecs, ...reg2dBinarySpecs, ...reg2dCheckSpecs];
