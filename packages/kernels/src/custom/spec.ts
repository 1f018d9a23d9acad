import { builtinSpecs } from '../definition.js';
import { WORKGROUP, type DataType, type ElementType, type KernelSpec, type Params, type PortSpec } from '../types.js';

// The custom-WGSL kernels as data (ports, params, cost hints); how they run is in index.ts.
// The example module below is the `source` param's default (text the editor offers), not a
// shader this package compiles. Core reads these through '@pipeloom/kernels/specs'.

export const CUSTOM_WGSL = 'custom.wgsl';

/** Largest vector: one row of 65535 workgroups of 64 threads, so `gid.x` is the element index. */
export const MAX_VECTOR = 65535 * WORKGROUP;

const vectorType = (p: Params): DataType => ({ kind: 'vector', element: 'f32', shape: [Number(p.length)] });
export const length = (p: Params) => Number(p.length);

export const lengthParam = { type: 'int', default: 1024, min: 1, max: MAX_VECTOR, unit: 'elements', description: 'Vector length' } as const;

/** The starting point offered by the editor: out = in * 2 + 1. */
export const CUSTOM_WGSL_EXAMPLE = `@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(0) @binding(2) var<uniform> info: vec4<u32>; // (length, iteration, 0, 0)

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.x;
  if (i >= info.x) { return; }
  output[i] = input[i] * 2.0 + 1.0;
}`;

/**
 * The ports a custom.wgsl node declares in its `ports` param: `a: f32[1024], b: u32[64x16] ->
 * sum: f32[1024]` (inputs, then outputs, bound in this order); empty: `in: f32[length] ->
 * out: f32[length]`, the original contract. Throws naming the part that is wrong.
 */
export function declaredPorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  const text = String(p.ports ?? '').trim();
  if (!text) return { inputs: [{ name: 'in', type: vectorType }], outputs: [{ name: 'out', type: vectorType }] };
  const sides = text.split('->');
  if (sides.length !== 2)
    throw new Error(`param ports: "${text}" needs one "->" between inputs and outputs, e.g. "a: f32[1024], b: f32[1024] -> sum: f32[1024]"`);
  const names = new Set<string>();
  const side = (list: string): PortSpec[] =>
    list
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)
      .map((decl) => {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(f32|u32|i32)\s*\[\s*(\d+(?:\s*x\s*\d+)*)\s*\]$/.exec(decl);
        if (!m) throw new Error(`param ports: "${decl}" is not "name: f32|u32|i32[size]" (size: N or NxM)`);
        if (names.has(m[1])) throw new Error(`param ports: two ports are named "${m[1]}"`);
        names.add(m[1]);
        const shape = m[3].split('x').map((d) => Number(d.trim()));
        if (shape.some((d) => d < 1)) throw new Error(`param ports: "${decl}" has a size below 1`);
        const type: DataType = { kind: 'vector', element: m[2] as ElementType, shape };
        return { name: m[1], type: () => type };
      });
  return { inputs: side(sides[0]), outputs: side(sides[1]) };
}

export const customSpecs: KernelSpec[] = builtinSpecs([
  {
    id: 'vector.produce',
    title: 'Produce vector',
    category: 'Custom WGSL',
    description: 'Fills an f32 vector of `length` elements with the iteration number (exact up to 2^24).',
    params: { length: lengthParam },
    inputs: [],
    outputs: [{ name: 'out', type: vectorType }],
    cost: (p) => ({ flops: 0, bytes: length(p) * 4 }),
    values: () => ({ out: { scale: 1, offset: 0 } }),
  },
  {
    id: CUSTOM_WGSL,
    title: 'Custom WGSL',
    category: 'Custom WGSL',
    description:
      'Runs your own WGSL compute module on a GPU PE (no CPU twin; agents refuse it unless started with --allow-wgsl). ' +
      'Contract: `@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>)`, one thread per element at index gid.x; ' +
      'read `@group(0) @binding(0) var<storage, read> input: array<f32>;`, write `@group(0) @binding(1) var<storage, read_write> output: array<f32>;` ' +
      '(both `length` elements; the buffers may be longer, so test the index against info.x), and optionally read ' +
      '`@group(0) @binding(2) var<uniform> info: vec4<u32>;` = (length, iteration, 0, 0). ' +
      'With `ports` declared (any number of inputs and outputs, each its own element type and size), binding i is the i-th port (inputs `var<storage, read>`, outputs `var<storage, read_write>`) and info comes after the last; `length` threads still run. Validation checks the bindings against the ports.',
    params: {
      source: { type: 'string', multiline: true, default: CUSTOM_WGSL_EXAMPLE, description: 'The WGSL compute module (see the contract in the description)' },
      length: lengthParam,
      ports: {
        type: 'string',
        default: '',
        description:
          'Its ports, bound in this order (inputs then outputs, then info): "a: f32[1024], b: f32[1024] -> sum: f32[1024]"; empty: in: f32[length] -> out: f32[length]',
      },
    },
    inputs: [{ name: 'in', type: vectorType }],
    outputs: [{ name: 'out', type: vectorType }],
    ports: declaredPorts,
    gpuOnly: true,
    // Unknown user code: one flop and 8 bytes per element until measured times replace it.
    cost: (p) => ({ flops: length(p), bytes: length(p) * 8 }),
  },
  {
    id: 'vector.check',
    title: 'Check vector',
    category: 'Custom WGSL',
    description:
      'Checks every element equals iteration * scale + offset (rounded to f32), within `tolerance`; a mismatch reports the iteration, first bad index and value.',
    params: {
      length: lengthParam,
      scale: { type: 'float', default: 1, description: 'Expected value = iteration * scale + offset' },
      offset: { type: 'float', default: 0, description: 'Expected value = iteration * scale + offset' },
      tolerance: { type: 'float', default: 0, min: 0, description: 'Largest accepted |value - expected| (0: exact)' },
    },
    inputs: [{ name: 'in', type: vectorType }],
    outputs: [],
    cost: (p) => ({ flops: length(p) * 2, bytes: length(p) * 4 }),
    // Behind user WGSL nothing is known: derived only straight from a producer.
    expects: { params: ['scale', 'offset'], derive: ({ in: v }) => v && { scale: v.scale, offset: v.offset } },
  },
]);
