import { bindGroup, createPipeline, dispatch, linear, LINEAR_ID, uniformBuffer, WORKGROUP } from '../gpu/pipeline.js';
import { KernelError, type FiringReport, type KernelImplementation, type Params } from '../types.js';
import { expectedOut, expectedTotal, INV2, INV3, mismatchReport, sourceElement } from './known.js';
import { knownCount, knownWords, matrixSide, MULMOD_PRIME, SCAN_CHECK, SCAN_SOURCE } from './spec.js';

// scan.source and scan.check run: CPU twins from known.ts's answer, and WGSL that computes the
// same words with the same u32 arithmetic (one thread per word). The check records the first
// bad element (an atomicMax of elements - i, so the smallest index wins) and copies its words
// out; the report is made on the host from them, as the twin makes it.

const words32 = (v: ArrayBufferView | undefined, need: number, port: string): Uint32Array => {
  if (!v) throw new KernelError(SCAN_CHECK, `input "${port}" is missing`);
  const u = new Uint32Array(v.buffer, v.byteOffset, Math.floor(v.byteLength / 4));
  if (u.length < need) throw new KernelError(SCAN_CHECK, `input "${port}" holds ${u.length} words; ${need} expected`);
  return u;
};

const hasTotal = (p: Params) => p.total === true;

/** Both modules' shared part: the uniform (N, W, k, flags: 1 exclusive, 2 total) and the embedding of [[1, x01, x02], [0, 1, x12], [0, 0, 1]]. */
const WGSL_COMMON = /* wgsl */ `
struct U { n: u32, w: u32, k: u32, flags: u32 }
const P: u32 = ${MULMOD_PRIME}u;
${LINEAR_ID}
// Entry t (row-major) of the k x k identity with the 3 x 3 top-left [[1, x01, x02], [0, 1, x12], [0, 0, 1]].
fn embedded(t: u32, k: u32, x01: u32, x02: u32, x12: u32) -> u32 {
  let r = t / k;
  let c = t % k;
  if (r == 0u && c == 1u) { return x01; }
  if (r == 0u && c == 2u) { return x02; }
  if (r == 1u && c == 2u) { return x12; }
  return select(0u, 1u, r == c);
}`;

const WGSL_SOURCE = /* wgsl */ `${WGSL_COMMON}
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> out_: array<u32>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg);
  let E = u.w + 2u;
  if (e >= u.n * E) { return; }
  let i = e / E;
  let t = e % E;
  if (t < 2u) { out_[e] = i; return; }
  out_[e] = embedded(t - 2u, u.k, 1u, 0u, (i + 1u) % P);
}`;

// Element i < N is out's; i = N is total (when flags & 2).
const WGSL_CHECK = /* wgsl */ `${WGSL_COMMON}
const INV2: u32 = ${INV2}u;
const INV3: u32 = ${INV3}u;
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> out_: array<u32>;
@group(0) @binding(2) var<storage, read> total_: array<u32>;
@group(0) @binding(3) var<storage, read_write> result: array<atomic<u32>>;

// a b mod P for a, b < P: a b < 2^32.
fn mm(a: u32, b: u32) -> u32 { return (a * b) % P; }

fn elements() -> u32 { return u.n + select(0u, 1u, (u.flags & 2u) != 0u); }

// Word t of what element i must hold (known.ts: expectedOut, expectedTotal).
fn expected(i: u32, t: u32) -> u32 {
  var lo = 0u;
  var hi = i;
  if (i == u.n) { hi = u.n - 1u; } else if ((u.flags & 1u) != 0u) {
    if (i == 0u) { lo = 1u; hi = 0u; } else { hi = i - 1u; }
  }
  if (t == 0u) { return lo; }
  if (t == 1u) { return hi; }
  if (lo > hi) { return embedded(t - 2u, u.k, 0u, 0u, 0u); }
  let n = hi + 1u;
  let a = (n - 1u) % P;
  let b = n % P;
  let c = (n + 1u) % P;
  return embedded(t - 2u, u.k, b, mm(mm(mm(a, b), c), INV3), mm(mm(b, c), INV2));
}

fn held(i: u32, t: u32) -> u32 {
  if (i == u.n) { return total_[t]; }
  return out_[i * (u.w + 2u) + t];
}

@compute @workgroup_size(${WORKGROUP})
fn check(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = linear_id(gid, nwg);
  let E = u.w + 2u;
  let m = elements();
  if (e >= m * E) { return; }
  let i = e / E;
  let t = e % E;
  if (held(i, t) != expected(i, t)) { atomicMax(&result[0], m - i); }
}

// One workgroup copies the first bad element's words after result[0].
@compute @workgroup_size(${WORKGROUP})
fn fetch(@builtin(local_invocation_index) lane: u32) {
  let r = atomicLoad(&result[0]);
  if (r == 0u) { return; }
  let i = elements() - r;
  for (var t = lane; t < u.w + 2u; t += ${WORKGROUP}u) { atomicStore(&result[1u + t], held(i, t)); }
}`;

/** The uniform both modules read. */
const uniformWords = (p: Params) =>
  new Uint32Array([knownCount(p), knownWords(p), matrixSide(p), (String(p.output) === 'exclusive' ? 1 : 0) | (hasTotal(p) ? 2 : 0)]);

export const sourceImplementation: KernelImplementation = {
  cpu: ({ params, outputs }) => {
    const E = 2 + knownWords(params);
    const out = outputs.out as Uint32Array;
    for (let i = 0; i < knownCount(params); i++) sourceElement(params, i, out.subarray(i * E, (i + 1) * E));
  },
  gpu: {
    wgsl: { source: WGSL_SOURCE },
    dispatches: (p) => [linear('source', knownCount(p) * (2 + knownWords(p)))],
    async prepare(device, params) {
      const pipeline = await createPipeline(device, SCAN_SOURCE, 'source', WGSL_SOURCE);
      const uni = uniformBuffer(device, uniformWords(params), `${SCAN_SOURCE}/u`);
      const threads = knownCount(params) * (2 + knownWords(params));
      return {
        encode(encoder, f) {
          dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.outputs.out]), threads, SCAN_SOURCE);
        },
        destroy: () => uni.destroy(),
      };
    },
  },
};

/** The first element of `out` (then `total`) that is not the known answer, as a failed report; ok otherwise. */
function checkCpu(params: Params, iteration: number, inputs: Record<string, ArrayBufferView>): FiringReport {
  const N = knownCount(params);
  const E = 2 + knownWords(params);
  const want = new Uint32Array(E);
  const out = words32(inputs.out, N * E, 'out');
  const same = (got: Uint32Array) => got.every((v, j) => v === want[j]);
  for (let i = 0; i < N; i++) {
    expectedOut(params, i, want);
    const got = out.subarray(i * E, (i + 1) * E);
    if (!same(got)) return mismatchReport(params, iteration, 'out', i, got, want);
  }
  if (hasTotal(params)) {
    expectedTotal(params, want);
    const got = words32(inputs.total, E, 'total').subarray(0, E);
    if (!same(got)) return mismatchReport(params, iteration, 'total', 0, got, want);
  }
  return { ok: true };
}

export const checkImplementation: KernelImplementation = {
  cpu: ({ params, iteration, inputs }) => checkCpu(params, iteration, inputs),
  gpu: {
    wgsl: { check: WGSL_CHECK },
    dispatches: (p) => [linear('check', (knownCount(p) + (hasTotal(p) ? 1 : 0)) * (2 + knownWords(p))), { module: 'check', workgroups: [1, 1, 1] }],
    async prepare(device, params) {
      const check = await createPipeline(device, SCAN_CHECK, 'check', WGSL_CHECK, 'check');
      const fetch = await createPipeline(device, SCAN_CHECK, 'check', WGSL_CHECK, 'fetch');
      const N = knownCount(params);
      const E = 2 + knownWords(params);
      const elements = N + (hasTotal(params) ? 1 : 0);
      const uni = uniformBuffer(device, uniformWords(params), `${SCAN_CHECK}/u`);
      const bytes = Math.ceil(((1 + E) * 4) / 16) * 16;
      const result = device.createBuffer({
        size: bytes,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
        label: `${SCAN_CHECK}/result`,
      });
      const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${SCAN_CHECK}/result-read` });
      return {
        encode(encoder, f) {
          // Without a total port, `out` is bound in its place (read-only twice; never read there).
          const buffers = [uni, f.inputs.out, hasTotal(params) ? f.inputs.total : f.inputs.out, result];
          encoder.clearBuffer(result);
          dispatch(encoder, check, bindGroup(device, check, buffers), elements * E, `${SCAN_CHECK}/check`);
          const pass = encoder.beginComputePass({ label: `${SCAN_CHECK}/fetch` });
          pass.setPipeline(fetch);
          pass.setBindGroup(0, bindGroup(device, fetch, buffers));
          pass.dispatchWorkgroups(1);
          pass.end();
          encoder.copyBufferToBuffer(result, 0, staging, 0, bytes);
        },
        async report(f) {
          await staging.mapAsync(GPUMapMode.READ);
          const r = new Uint32Array(staging.getMappedRange().slice(0));
          staging.unmap();
          if (r[0] === 0) return { ok: true };
          const i = elements - r[0];
          const got = r.slice(1, 1 + E);
          const want = new Uint32Array(E);
          if (i === N) expectedTotal(params, want);
          else expectedOut(params, i, want);
          return mismatchReport(params, f.iteration, i === N ? 'total' : 'out', i === N ? 0 : i, got, want);
        },
        destroy() {
          uni.destroy();
          result.destroy();
          staging.destroy();
        },
      };
    },
  },
};
