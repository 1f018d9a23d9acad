import type { FiringReport, GpuImplementation, Params } from '../types.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, uniformBuffer } from './pipeline.js';

// Sources and checkers share two pieces: a pass that fills a buffer with the iteration number,
// and the report of a failed element-wise check.

const WGSL_FILL = /* wgsl */ `
struct U { n: u32, value: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.n) { return; }
  out_[i] = u.value;
}`;

/** The GPU side of a source that fills its `out` port's `count(params)` f32s with the iteration. */
export function fillWithIteration(kernel: string, module: string, count: (p: Params) => number): GpuImplementation {
  return {
    wgsl: { [module]: WGSL_FILL },
    dispatches: (p) => [linear(module, count(p))],
    async prepare(device, params) {
      const pipeline = await createPipeline(device, kernel, module, WGSL_FILL);
      const n = count(params);
      const uni = uniformBuffer(device, packWords([['u', n], ['f', 0]]));
      return {
        encode(encoder, f) {
          device.queue.writeBuffer(uni, 0, packWords([['u', n], ['f', f.iteration]]));
          dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.outputs.out]), n, kernel);
        },
        destroy: () => uni.destroy(),
      };
    },
  };
}

/** A failed check: names the iteration, the first bad index and its value. */
export function mismatch(iteration: number, index: number, value: number, want: number): FiringReport {
  return { ok: false, message: `iteration ${iteration}: element ${index} is ${value}, expected ${want}`, values: { iteration, index, value, expected: want } };
}
