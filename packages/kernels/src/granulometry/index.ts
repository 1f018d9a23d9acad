import { KernelError, type FiringReport, type GpuExecutor, type Kernel, type Params } from '../types.js';
import { implement } from '../implement.js';
import { granulometrySpecs, voxels } from './spec.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, storageBuffer, uniformBuffer, uploadBuffer } from '../gpu/pipeline.js';
import { fillBalls, placeBalls } from './volume.js';
import { countOnes, openings, patternSpectrum, predominantSize, type Dims } from './morphology.js';

// Granulometry (paper section 5.2, Figs 16-19). Data between the openings stages is one
// buffer, the granulometry state: `levels` u32 counts (count[n] = voxels left after the
// opening of size n, count[0] = the volume itself) followed by the volume eroded `last` times.
// That is all a later stage needs to go on with openings last+1.. (the Fig 19 split over GPUs).

const dimsOf = (p: Params): Dims => ({ depth: Number(p.depth), height: Number(p.height), width: Number(p.width) });

function checkRange(p: Params): { first: number; last: number; levels: number } {
  const first = Number(p.first);
  const last = Number(p.last);
  const levels = Number(p.levels);
  if (!(first >= 1 && first <= last && last < levels))
    throw new KernelError('granulometry.openings', `needs 1 <= first <= last < levels (got first ${first}, last ${last}, levels ${levels})`);
  return { first, last, levels };
}

const WGSL_BALLS = /* wgsl */ `
struct U { d: u32, h: u32, w: u32, count: u32, r2: i32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> centers: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read_write> out_: array<u32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.d * u.h * u.w) { return; }
  let p = vec3<i32>(i32(i % u.w), i32((i / u.w) % u.h), i32(i / (u.w * u.h)));
  var v = 0u;
  for (var k = 0u; k < u.count; k++) {
    let q = p - centers[k].xyz;
    if (dot(q, q) <= u.r2) { v = 1u; }
  }
  out_[i] = v;
}`;

const WGSL_MORPH = /* wgsl */ `
struct U { d: u32, h: u32, w: u32, src_off: u32, op: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;
${LINEAR_ID}
fn at(s: u32) -> bool { return src[s] != 0u; }
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  if (i >= u.d * u.h * u.w) { return; }
  let x = i % u.w;
  let y = (i / u.w) % u.h;
  let z = i / (u.w * u.h);
  let s = u.src_off + i;
  let plane = u.w * u.h;
  var v = at(s);
  if (u.op == 0u) {
    let inner = x > 0u && x < u.w - 1u && y > 0u && y < u.h - 1u && z > 0u && z < u.d - 1u;
    if (v && inner) {
      v = at(s - 1u) && at(s + 1u) && at(s - u.w) && at(s + u.w) && at(s - plane) && at(s + plane);
    } else {
      v = false;
    }
  } else if (!v) {
    v = (x > 0u && at(s - 1u)) || (x < u.w - 1u && at(s + 1u)) || (y > 0u && at(s - u.w)) || (y < u.h - 1u && at(s + u.w)) || (z > 0u && at(s - plane)) || (z < u.d - 1u && at(s + plane));
  }
  dst[i] = select(0u, 1u, v);
}`;

// Counts non-zero voxels into header[index]: per-workgroup sums, one global atomic each.
const WGSL_COUNT = /* wgsl */ `
struct U { n: u32, index: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> header: array<atomic<u32>>;
var<workgroup> local: atomic<u32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  if (lid == 0u) { atomicStore(&local, 0u); }
  workgroupBarrier();
  let i = linear_id(gid, nwg);
  if (i < u.n) {
    if (src[i] != 0u) { atomicAdd(&local, 1u); }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let c = atomicLoad(&local);
    if (c > 0u) { atomicAdd(&header[u.index], c); }
  }
}`;

const WGSL_CURVE = /* wgsl */ `
struct U { levels: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = linear_id(gid, nwg);
  if (n >= u.levels) { return; }
  let c = state[n];
  out_[n] = f32(c);
  var next = 0u;
  if (n + 1u < u.levels) { next = state[n + 1u]; }
  out_[u.levels + n] = f32(c) - f32(next);
}`;

function curveReport(out: Float32Array, levels: number): FiringReport {
  const curve = Array.from(out.subarray(0, levels));
  const spectrum = Array.from(out.subarray(levels, 2 * levels));
  return { ok: true, values: { predominant_size: predominantSize(spectrum), curve, spectrum } };
}

export const granulometryKernels: Kernel[] = implement(granulometrySpecs, {
  'granulometry.volume': {
    cpu: ({ params, outputs, state }) => {
      const d = dimsOf(params);
      const balls = (state.balls ??= placeBalls(d.depth, d.height, d.width, Number(params.radius), Number(params.spheres), Number(params.seed))) as ReturnType<
        typeof placeBalls
      >;
      fillBalls(outputs.out as Uint32Array, d.depth, d.height, d.width, Number(params.radius), balls);
    },
    gpu: {
      wgsl: { balls: WGSL_BALLS },
      dispatches: (p) => [linear('balls', voxels(p))],
      async prepare(device, params) {
        const pipeline = await createPipeline(device, 'granulometry.volume', 'balls', WGSL_BALLS);
        const d = dimsOf(params);
        const r = Number(params.radius);
        const balls = placeBalls(d.depth, d.height, d.width, r, Number(params.spheres), Number(params.seed));
        const centers = uploadBuffer(device, Int32Array.from(balls.length ? balls.flatMap((b) => [b.x, b.y, b.z, 0]) : [0, 0, 0, 0]));
        const uni = uniformBuffer(
          device,
          packWords([
            ['u', d.depth],
            ['u', d.height],
            ['u', d.width],
            ['u', balls.length],
            ['i', r * r],
          ]),
        );
        return {
          encode: (enc, f) => dispatch(enc, pipeline, bindGroup(device, pipeline, [uni, centers, f.outputs.out]), voxels(params), 'granulometry.volume'),
          destroy() {
            uni.destroy();
            centers.destroy();
          },
        };
      },
    },
  },
  'granulometry.openings': {
    cpu: ({ params, inputs, outputs }) => {
      const { first, last, levels } = checkRange(params);
      const dims = dimsOf(params);
      const out = outputs.out as Uint32Array;
      const src = inputs.in as Uint32Array;
      if (first === 1) {
        out.fill(0, 0, levels);
        out.set(src, levels);
        out[0] = countOnes(src, 0, src.length);
      } else {
        out.set(src);
        out.fill(0, first, levels);
      }
      openings(out, levels, first, last, dims);
    },
    gpu: {
      wgsl: { morph: WGSL_MORPH, count: WGSL_COUNT },
      dispatches: (p) => {
        const { first, last } = checkRange(p);
        const k = last - first + 1;
        // per opening n: one erosion, n dilations, one count; plus the raw volume's count
        const morphs = k + ((last * (last + 1)) / 2 - ((first - 1) * first) / 2);
        return [linear('morph', voxels(p), morphs), linear('count', voxels(p), k + (first === 1 ? 1 : 0))];
      },
      async prepare(device, params) {
        const { first, last, levels } = checkRange(params);
        const morphP = await createPipeline(device, 'granulometry.openings', 'morph', WGSL_MORPH);
        const countP = await createPipeline(device, 'granulometry.openings', 'count', WGSL_COUNT);
        const d = dimsOf(params);
        const n = voxels(params);
        const erodeU = uniformBuffer(
          device,
          packWords([
            ['u', d.depth],
            ['u', d.height],
            ['u', d.width],
            ['u', levels],
            ['u', 0],
          ]),
        );
        const dilateU = uniformBuffer(
          device,
          packWords([
            ['u', d.depth],
            ['u', d.height],
            ['u', d.width],
            ['u', 0],
            ['u', 1],
          ]),
        );
        const countU = new Map<number, GPUBuffer>();
        for (const k of [0, ...Array.from({ length: last - first + 1 }, (_, i) => first + i)])
          countU.set(
            k,
            uniformBuffer(
              device,
              packWords([
                ['u', n],
                ['u', k],
              ]),
            ),
          );
        const a = storageBuffer(device, n * 4, 'granulometry.openings/a');
        const b = storageBuffer(device, n * 4, 'granulometry.openings/b');
        const exec: GpuExecutor = {
          encode(enc, f) {
            const input = f.inputs.in;
            const out = f.outputs.out;
            if (first === 1) {
              enc.copyBufferToBuffer(input, 0, out, levels * 4, n * 4);
              enc.clearBuffer(out, 0, levels * 4);
              dispatch(enc, countP, bindGroup(device, countP, [countU.get(0)!, input, out]), n, 'count');
            } else {
              enc.copyBufferToBuffer(input, 0, out, 0, (levels + n) * 4);
              enc.clearBuffer(out, first * 4, (levels - first) * 4);
            }
            const erodeBG = bindGroup(device, morphP, [erodeU, out, a]);
            const ab = bindGroup(device, morphP, [dilateU, a, b]);
            const ba = bindGroup(device, morphP, [dilateU, b, a]);
            for (let k = first; k <= last; k++) {
              dispatch(enc, morphP, erodeBG, n, `erode ${k}`);
              enc.copyBufferToBuffer(a, 0, out, levels * 4, n * 4);
              for (let j = 0; j < k; j++) dispatch(enc, morphP, j % 2 === 0 ? ab : ba, n, `dilate ${k}.${j}`);
              const result = k % 2 === 1 ? b : a;
              dispatch(enc, countP, bindGroup(device, countP, [countU.get(k)!, result, out]), n, `count ${k}`);
            }
          },
          destroy() {
            for (const u of [erodeU, dilateU, a, b, ...countU.values()]) u.destroy();
          },
        };
        return exec;
      },
    },
  },
  'granulometry.curve': {
    cpu: ({ params, inputs, outputs }) => {
      const levels = Number(params.levels);
      const s = inputs.in as Uint32Array;
      const out = outputs.out as Float32Array;
      const spectrum = patternSpectrum(s.subarray(0, levels));
      for (let n = 0; n < levels; n++) {
        out[n] = s[n];
        out[levels + n] = spectrum[n];
      }
      return curveReport(out, levels);
    },
    gpu: {
      wgsl: { curve: WGSL_CURVE },
      dispatches: (p) => [linear('curve', Number(p.levels))],
      async prepare(device, params) {
        const pipeline = await createPipeline(device, 'granulometry.curve', 'curve', WGSL_CURVE);
        const levels = Number(params.levels);
        const uni = uniformBuffer(device, packWords([['u', levels]]));
        const staging = device.createBuffer({ size: levels * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        return {
          encode(enc, f) {
            dispatch(enc, pipeline, bindGroup(device, pipeline, [uni, f.inputs.in, f.outputs.out]), levels, 'granulometry.curve');
            enc.copyBufferToBuffer(f.outputs.out, 0, staging, 0, levels * 8);
          },
          async report() {
            await staging.mapAsync(GPUMapMode.READ);
            const out = new Float32Array(staging.getMappedRange().slice(0));
            staging.unmap();
            return curveReport(out, levels);
          },
          destroy() {
            uni.destroy();
            staging.destroy();
          },
        };
      },
    },
  },
});
