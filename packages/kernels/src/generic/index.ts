import { implement } from '../implement.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, uniformBuffer } from '../gpu/pipeline.js';
import type { Kernel, Params } from '../types.js';
import { genericSpecs, GENERIC_SUM, GENERIC_WORK, sumShape } from './spec.js';

// generic.work runs as cheaply as it can (zeros out), so what a run measures of it is the
// emulated time of its cost hint, not this code.
//
// generic.sum adds its inputs in input order, one f32 rounding per addition, on both sides:
// the twin with Math.fround, the WGSL one `acc = acc + x` per input (WGSL f32 addition is
// correctly rounded), so a split node's result is the same bits wherever its shares and its
// combine ran. A pass binds up to SUM_BATCH inputs and the sum: 4 storage buffers, what every
// compatibility-mode device allows; passes after the first start from the running sum.

const SUM_BATCH = 3;

/** The WGSL of one pass adding `inputs` inputs; `first`: the sum starts at in0, else at what `sum` holds. */
function sumModule(inputs: number, first: boolean): string {
  const bind = Array.from({ length: inputs }, (_, i) => `@group(0) @binding(${i + 1}) var<storage, read> in${i}: array<f32>;`).join('\n');
  const adds = Array.from({ length: inputs }, (_, i) => (first && i === 0 ? '  var acc = in0[i];' : `  acc = acc + in${i}[i];`));
  return /* wgsl */ `
struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
${bind}
@group(0) @binding(${inputs + 1}) var<storage, read_write> sum: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.n) { return; }
${first ? '' : '  var acc = sum[i];\n'}${adds.join('\n')}
  sum[i] = acc;
}`;
}

/** The passes of one firing: the inputs in order, in batches of at most `batch`. */
function sumBatches(count: number, batch: number): { first: number; inputs: number }[] {
  const out: { first: number; inputs: number }[] = [];
  for (let first = 0; first < count; first += batch) out.push({ first, inputs: Math.min(batch, count - first) });
  return out;
}

const elements = (p: Params) => sumShape(p).reduce((a, b) => a * b, 1);

export const genericKernels: Kernel[] = implement(genericSpecs, {
  [GENERIC_WORK]: {
    cpu: ({ outputs }) => {
      for (const v of Object.values(outputs)) new Uint8Array(v.buffer, v.byteOffset, v.byteLength).fill(0);
    },
    gpu: {
      wgsl: {},
      dispatches: () => [],
      prepare: async () => ({
        encode(encoder, firing) {
          for (const b of Object.values(firing.outputs)) encoder.clearBuffer(b);
        },
        destroy() {},
      }),
    },
  },
  [GENERIC_SUM]: {
    cpu: ({ params, inputs, outputs }) => {
      const count = Number(params.count);
      const out = outputs.sum as Float32Array;
      const first = inputs.in0 as Float32Array;
      for (let i = 0; i < out.length; i++) out[i] = first[i];
      for (let j = 1; j < count; j++) {
        const x = inputs[`in${j}`] as Float32Array;
        for (let i = 0; i < out.length; i++) out[i] = Math.fround(out[i] + x[i]);
      }
    },
    gpu: {
      wgsl: { first: sumModule(SUM_BATCH, true), add: sumModule(SUM_BATCH, false) },
      dispatches: (p) => sumBatches(Number(p.count), SUM_BATCH).map((b) => linear(b.first === 0 ? 'first' : 'add', elements(p))),
      async prepare(device, params) {
        const count = Number(params.count);
        const n = elements(params);
        const passes = sumBatches(count, SUM_BATCH);
        // One pipeline per (first, inputs) pair used: at most three.
        const pipes = new Map<string, GPUComputePipeline>();
        for (const b of passes) {
          const key = `${b.first === 0 ? 'first' : 'add'}${b.inputs}`;
          if (!pipes.has(key)) pipes.set(key, await createPipeline(device, GENERIC_SUM, b.first === 0 ? 'first' : 'add', sumModule(b.inputs, b.first === 0)));
        }
        const uni = uniformBuffer(device, packWords([['u', n]]), `${GENERIC_SUM}.uniforms`);
        return {
          encode(encoder, f) {
            for (const b of passes) {
              const key = `${b.first === 0 ? 'first' : 'add'}${b.inputs}`;
              const pipe = pipes.get(key)!;
              const ins = Array.from({ length: b.inputs }, (_, i) => f.inputs[`in${b.first + i}`]);
              dispatch(encoder, pipe, bindGroup(device, pipe, [uni, ...ins, f.outputs.sum]), n, `${GENERIC_SUM}/${b.first === 0 ? 'first' : 'add'}`);
            }
          },
          destroy: () => uni.destroy(),
        };
      },
    },
  },
});
