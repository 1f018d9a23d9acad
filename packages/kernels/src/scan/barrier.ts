import { bindGroup, createPipeline, dispatch, linear, LINEAR_ID, uniformBuffer, WORKGROUP } from '../gpu/pipeline.js';
import { KernelError, type KernelImplementation, type Params } from '../types.js';
import { SCAN_BARRIER } from './spec.js';

// scan.barrier runs: a copy of its input's words, the twin's and the WGSL's (one thread per word).

const wordsOf = (p: Params) => Number(p.count) * (2 + Number(p.words));

const WGSL_BARRIER = /* wgsl */ `
${LINEAR_ID}
struct U { n: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> in_: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg);
  if (e < u.n) { out_[e] = in_[e]; }
}`;

export const barrierImplementation: KernelImplementation = {
  cpu: ({ params, inputs, outputs }) => {
    const n = wordsOf(params);
    const from = inputs.in;
    const to = outputs.out;
    if (!from || !to || from.byteLength < 4 * n || to.byteLength < 4 * n) throw new KernelError(SCAN_BARRIER, `"in" and "out" must hold ${n} words`);
    new Uint32Array(to.buffer, to.byteOffset, n).set(new Uint32Array(from.buffer, from.byteOffset, n));
  },
  gpu: {
    wgsl: { main: WGSL_BARRIER },
    dispatches: (p) => [linear('main', wordsOf(p))],
    async prepare(device, params) {
      const pipeline = await createPipeline(device, SCAN_BARRIER, 'main', WGSL_BARRIER);
      const uni = uniformBuffer(device, new Uint32Array([wordsOf(params), 0, 0, 0]), `${SCAN_BARRIER}/u`);
      return {
        encode(encoder, f) {
          dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.inputs.in, f.outputs.out]), wordsOf(params), SCAN_BARRIER);
        },
        destroy: () => uni.destroy(),
      };
    },
  },
};
