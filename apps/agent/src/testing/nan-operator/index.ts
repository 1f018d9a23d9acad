import { defineBinaryKernel, defineKernel, scanElementType, type Params } from '@pipeloom/kernels';

// A kernel package for the non-finite check's run-time test (scan.test.ts): `test.ones` makes N
// scan elements [i, i, 1.0f], and `test.nanat`, an f32 sum operator, gives NaN for every
// application whose right operand starts at element `bad`: the run must stop there, naming the
// expanded node, the operands' ranges and the PE.

const N = (p: Params) => Number(p.count);
const ONE = 0x3f800000;
const NAN = 0x7fc00000;

export const ones = defineKernel({
  id: 'test.ones',
  version: '1.0.0',
  description: 'N scan elements [i, i, 1.0f] (f32 payload), the same every iteration.',
  params: { count: { type: 'int', default: 16, min: 1, max: 4096, description: 'elements N' } },
  outputs: [{ name: 'out', description: 'N elements', type: (p) => scanElementType(N(p), 1) }],
  cost: (p) => ({ flops: 0, bytes: 12 * N(p) }),
  cpu: ({ params, outputs }) => {
    const out = outputs.out as Uint32Array;
    for (let i = 0; i < N(params); i++) out.set([i, i, ONE], 3 * i);
  },
});

export const nanAt = defineBinaryKernel({
  id: 'test.nanat',
  version: '1.0.0',
  description: 'f32 sum, except that an application whose right operand starts at element `bad` gives NaN.',
  params: { bad: { type: 'int', default: 12, min: 0, max: 4096, description: 'the element whose application gives NaN' } },
  words: () => 1,
  binary: { associativity: 'exact', commutative: false, identity: () => [0], payload: 'f32' },
  apply: {
    cpu: (a, b, out, params, _context, info) => {
      const f = new Float32Array(out.buffer, out.byteOffset, 1);
      f[0] = new Float32Array(a.buffer, a.byteOffset, 1)[0] + new Float32Array(b.buffer, b.byteOffset, 1)[0];
      if (info.right[0] === Number(params.bad)) out[0] = NAN;
    },
    wgsl: (p) => /* wgsl */ `
fn op_apply(lane: u32, lanes: u32) {
  if (lane != 0u) { return; }
  op_out[0] = bitcast<u32>(bitcast<f32>(op_a[0]) + bitcast<f32>(op_b[0]));
  if (op_range.z == ${Number(p.bad)}u) { op_out[0] = ${NAN}u; }
}`,
  },
  cost: () => ({ flops: 1, bytes: 24 }),
});

export default [ones, nanAt];
