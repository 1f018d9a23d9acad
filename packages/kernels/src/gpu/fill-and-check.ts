import type { FiringReport, GpuExecutor, GpuImplementation, Params } from '../types.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, uniformBuffer } from './pipeline.js';

// Sources and checkers share these: a pass that fills a buffer with the iteration number, an
// element-wise check of the `in` port against an expected value, and the report of a failure.

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
      const uni = uniformBuffer(
        device,
        packWords([
          ['u', n],
          ['f', 0],
        ]),
      );
      return {
        encode(encoder, f) {
          device.queue.writeBuffer(
            uni,
            0,
            packWords([
              ['u', n],
              ['f', f.iteration],
            ]),
          );
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

// The smallest bad index wins an atomicMax(n - i); a one-thread pass fetches its value. The
// comparison is written so that NaN is never "within tolerance"; tolerance 0 is exact equality.
const WGSL_CHECK = /* wgsl */ `
struct U { n: u32, want: f32, tol: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> in_: array<f32>;
@group(0) @binding(2) var<storage, read_write> result: array<atomic<u32>, 4>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.n) { return; }
  if (!(abs(in_[i] - u.want) <= u.tol)) { atomicMax(&result[0], u.n - i); }
}`;
const WGSL_FETCH = /* wgsl */ `
struct U { n: u32, want: f32, tol: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> in_: array<f32>;
@group(0) @binding(2) var<storage, read_write> result: array<u32, 4>;
@compute @workgroup_size(1)
fn main() {
  let r = result[0];
  if (r != 0u) { result[1] = bitcast<u32>(in_[u.n - r]); }
}`;

export interface CheckSpec {
  /** Elements of the `in` port. */
  count: (p: Params) => number;
  /** The value every element must hold at `iteration` (f32-rounded). */
  expected: (p: Params, iteration: number) => number;
  /** Largest accepted |value - expected| (0: exact). */
  tolerance?: (p: Params) => number;
  /** A report that replaces the check (e.g. an iteration past what f32 holds exactly). */
  refuse?: (iteration: number, want: number) => FiringReport | undefined;
}

/** The GPU side of a checker: every element of `in` against `expected`, first bad index read back. */
export function checkAgainstExpected(kernel: string, c: CheckSpec): GpuImplementation {
  return {
    wgsl: { check: WGSL_CHECK, fetch: WGSL_FETCH },
    dispatches: (p) => [linear('check', c.count(p)), { module: 'fetch', workgroups: [1, 1, 1] }],
    async prepare(device, params) {
      const check = await createPipeline(device, kernel, 'check', WGSL_CHECK);
      const fetch = await createPipeline(device, kernel, 'fetch', WGSL_FETCH);
      const n = c.count(params);
      const tol = c.tolerance?.(params) ?? 0;
      const words = (it: number) =>
        packWords([
          ['u', n],
          ['f', c.expected(params, it)],
          ['f', tol],
        ]);
      const uni = uniformBuffer(device, words(0));
      const result = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      const staging = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const exec: GpuExecutor = {
        encode(encoder, f) {
          device.queue.writeBuffer(uni, 0, words(f.iteration));
          encoder.clearBuffer(result);
          dispatch(encoder, check, bindGroup(device, check, [uni, f.inputs.in, result]), n, `${kernel}/check`);
          const pass = encoder.beginComputePass({ label: `${kernel}/fetch` });
          pass.setPipeline(fetch);
          pass.setBindGroup(0, bindGroup(device, fetch, [uni, f.inputs.in, result]));
          pass.dispatchWorkgroups(1);
          pass.end();
          encoder.copyBufferToBuffer(result, 0, staging, 0, 16);
        },
        async report(f) {
          await staging.mapAsync(GPUMapMode.READ);
          const r = new Uint32Array(staging.getMappedRange().slice(0));
          staging.unmap();
          const want = c.expected(params, f.iteration);
          const refused = c.refuse?.(f.iteration, want);
          if (refused) return refused;
          if (r[0] === 0) return { ok: true };
          return mismatch(f.iteration, n - r[0], new Float32Array(r.buffer, 4, 1)[0], want);
        },
        destroy() {
          uni.destroy();
          result.destroy();
          staging.destroy();
        },
      };
      return exec;
    },
  };
}
