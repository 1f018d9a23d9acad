import { KernelError, type FiringReport, type Kernel, type Params } from '../types.js';
import { implement } from '../implement.js';
import { binCount, mlemSpecs, shareAngles, voxelCount } from './spec.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, storageBuffer, uniformBuffer, uploadBuffer } from '../gpu/pipeline.js';
import { backproject, phantom, poisson, project, ratio, trigTable, update } from './projector.js';

// MLEM's kernels (Eq. 1: lambda <- lambda / s * P^T (n / P lambda)). The projector and its
// transpose are in projector.ts (CPU) and below (WGSL, the same expressions): WGSL has no float
// atomics, so P^T is a gather per voxel, never a scatter per ray.

export { shareAngles } from './spec.js';
export { backproject, phantom, poisson, project, ratio, trigTable, update, type Floats, type Sphere } from './projector.js';

/** The share's angles, refusing a share outside its split (core's validation names the node first; this is the kernel's own guard). */
export function anglesOf(p: Params): number[] {
  const angles = Number(p.angles);
  const shares = Number(p.shares ?? 1);
  const share = Number(p.share ?? 0);
  if (shares > angles)
    throw new KernelError('mlem.projbp', `shares ${shares} > angles ${angles}: a share needs at least one angle (lower shares to ${angles} or fewer)`);
  if (share >= shares) throw new KernelError('mlem.projbp', `share ${share} is not below shares ${shares} (shares are 0..${shares - 1})`);
  return shareAngles(angles, shares, share);
}

// Thread (i, z, t): P lambda for the share's i-th angle into proj.
// Sample s of bin t (projector.ts sampleAt): shared by the projector and the back-projector, so
// the back-projector's weights are the projector's float operations exactly.
const WGSL_SAMPLE = /* wgsl */ `
struct Sample { x0: i32, y0: i32, fx: f32, fy: f32 }
fn sample_at(t: f32, s: f32, c: f32, cs: f32, sn: f32) -> Sample {
  let X = c + (t - c) * cs - (s - c) * sn;
  let Y = c + (t - c) * sn + (s - c) * cs;
  let xf = floor(X);
  let yf = floor(Y);
  return Sample(i32(xf), i32(yf), X - xf, Y - yf);
}`;

const WGSL_PROJECT = /* wgsl */ `
struct U { n: u32, m: u32, c: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> trig: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> vol: array<f32>;
@group(0) @binding(3) var<storage, read_write> proj: array<f32>;
${LINEAR_ID}
${WGSL_SAMPLE}
fn tap(z: u32, x: i32, y: i32) -> f32 {
  let n = i32(u.n);
  if (x < 0 || x >= n || y < 0 || y >= n) { return 0.0; }
  return vol[(z * u.n + u32(y)) * u.n + u32(x)];
}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = linear_id(gid, nwg);
  if (id >= u.m * u.n * u.n) { return; }
  let t = id % u.n;
  let z = (id / u.n) % u.n;
  let i = id / (u.n * u.n);
  let cs = trig[i].x;
  let sn = trig[i].y;
  let c = u.c;
  var acc = 0.0f;
  for (var s = 0u; s < u.n; s++) {
    let p = sample_at(f32(t), f32(s), c, cs, sn);
    let x0 = p.x0;
    let y0 = p.y0;
    let fx = p.fx;
    let fy = p.fy;
    acc += (1.0 - fx) * (1.0 - fy) * tap(z, x0, y0);
    acc += fx * (1.0 - fy) * tap(z, x0 + 1, y0);
    acc += (1.0 - fx) * fy * tap(z, x0, y0 + 1);
    acc += fx * fy * tap(z, x0 + 1, y0 + 1);
  }
  proj[id] = acc;
}`;

// Thread (i, z, t): proj <- n / proj where proj > 0, else 0 (n: the full sinogram; angle first + i * step).
const WGSL_RATIO = /* wgsl */ `
struct U { n: u32, m: u32, first: u32, step: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> counts: array<f32>;
@group(0) @binding(2) var<storage, read_write> proj: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = linear_id(gid, nwg);
  let bins = u.n * u.n;
  if (id >= u.m * bins) { return; }
  let a = u.first + (id / bins) * u.step;
  let p = proj[id];
  proj[id] = select(0.0, counts[a * bins + id % bins] / p, p > 0.0);
}`;

// Thread per voxel: P^T proj over the share's angles, gathering the samples whose taps reach it.
const WGSL_BACKPROJECT = /* wgsl */ `
struct U { n: u32, m: u32, c: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> trig: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> proj: array<f32>;
@group(0) @binding(3) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
${WGSL_SAMPLE}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let id = linear_id(gid, nwg);
  if (id >= u.n * u.n * u.n) { return; }
  let x = i32(id % u.n);
  let y = i32((id / u.n) % u.n);
  let z = id / (u.n * u.n);
  let c = u.c;
  let last = i32(u.n) - 1;
  var acc = 0.0f;
  for (var i = 0u; i < u.m; i++) {
    let cs = trig[i].x;
    let sn = trig[i].y;
    let row = (i * u.n + z) * u.n;
    let tc = c + (f32(x) - c) * cs + (f32(y) - c) * sn;
    let sc = c - (f32(x) - c) * sn + (f32(y) - c) * cs;
    let w = abs(cs) + abs(sn) + 0.01;
    let t0 = max(0, i32(ceil(tc - w)));
    let t1 = min(last, i32(floor(tc + w)));
    let s0 = max(0, i32(ceil(sc - w)));
    let s1 = min(last, i32(floor(sc + w)));
    for (var t = t0; t <= t1; t++) {
      let r = proj[row + u32(t)];
      for (var s = s0; s <= s1; s++) {
        let p = sample_at(f32(t), f32(s), c, cs, sn);
        let x0 = p.x0;
        let y0 = p.y0;
        let fx = p.fx;
        let fy = p.fy;
        let wx = select(select(0.0, fx, x == x0 + 1), 1.0 - fx, x == x0);
        let wy = select(select(0.0, fy, y == y0 + 1), 1.0 - fy, y == y0);
        acc += wx * wy * r;
      }
    }
  }
  out_[id] = acc;
}`;

const WGSL_UPDATE = /* wgsl */ `
struct U { n: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> est: array<f32>;
@group(0) @binding(2) var<storage, read> bp: array<f32>;
@group(0) @binding(3) var<storage, read> sens: array<f32>;
@group(0) @binding(4) var<storage, read_write> out_: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let b = linear_id(gid, nwg);
  if (b >= u.n) { return; }
  let s = sens[b];
  out_[b] = select(0.0, est[b] / s * bp[b], s > 0.0);
}`;

/**
 * P, the ratio and P^T on a device for one share: the passes `mlem.projbp` records, kept apart
 * so tests can run P and P^T alone (the adjoint test). `scratch` holds the share's bins.
 */
export class GpuProjector {
  private constructor(
    private readonly device: GPUDevice,
    readonly n: number,
    readonly list: number[],
    private readonly pipes: { project: GPUComputePipeline; ratio: GPUComputePipeline; backproject: GPUComputePipeline },
    private readonly trig: GPUBuffer,
    private readonly uniforms: { geometry: GPUBuffer; ratio: GPUBuffer },
    readonly scratch: GPUBuffer,
  ) {}

  static async create(device: GPUDevice, params: Params): Promise<GpuProjector> {
    const n = Number(params.size);
    const list = anglesOf(params);
    const [project, ratioPipe, back] = await Promise.all([
      createPipeline(device, 'mlem.projbp', 'project', WGSL_PROJECT),
      createPipeline(device, 'mlem.projbp', 'ratio', WGSL_RATIO),
      createPipeline(device, 'mlem.projbp', 'backproject', WGSL_BACKPROJECT),
    ]);
    const m = list.length;
    const trig = uploadBuffer(device, trigTable(Number(params.angles), list), 'mlem.projbp.trig');
    const geometry = uniformBuffer(
      device,
      packWords([
        ['u', n],
        ['u', m],
        ['f', (n - 1) / 2],
      ]),
      'mlem.projbp.geometry',
    );
    const step = Number(params.shares ?? 1);
    const ratioU = uniformBuffer(
      device,
      packWords([
        ['u', n],
        ['u', m],
        ['u', list[0] ?? 0],
        ['u', step],
      ]),
      'mlem.projbp.ratio',
    );
    const scratch = storageBuffer(device, m * n * n * 4, 'mlem.projbp.scratch');
    return new GpuProjector(device, n, list, { project, ratio: ratioPipe, backproject: back }, trig, { geometry, ratio: ratioU }, scratch);
  }

  private get bins(): number {
    return this.list.length * this.n * this.n;
  }

  /** scratch <- P vol over the share's angles. */
  encodeProject(encoder: GPUCommandEncoder, vol: GPUBuffer): void {
    const p = this.pipes.project;
    dispatch(encoder, p, bindGroup(this.device, p, [this.uniforms.geometry, this.trig, vol, this.scratch]), this.bins, 'mlem.projbp/project');
  }

  /** scratch <- counts / scratch (0 where scratch is 0). */
  encodeRatio(encoder: GPUCommandEncoder, counts: GPUBuffer): void {
    const p = this.pipes.ratio;
    dispatch(encoder, p, bindGroup(this.device, p, [this.uniforms.ratio, counts, this.scratch]), this.bins, 'mlem.projbp/ratio');
  }

  /** out <- P^T scratch over the share's angles (every voxel written). */
  encodeBackproject(encoder: GPUCommandEncoder, out: GPUBuffer): void {
    const p = this.pipes.backproject;
    dispatch(encoder, p, bindGroup(this.device, p, [this.uniforms.geometry, this.trig, this.scratch, out]), this.n ** 3, 'mlem.projbp/backproject');
  }

  destroy(): void {
    for (const b of [this.trig, this.uniforms.geometry, this.uniforms.ratio, this.scratch]) b.destroy();
  }
}

// mlem.error, pass 1: each of `groups` workgroups sums, over a strided share of the voxels,
// (e - t)^2, t^2, e and t into partials[group]; pass 2: one thread adds the partials in order.
// (Workgroup memory instead of float atomics, which WGSL lacks.)
const ERROR_GROUPS = 256;
const WGSL_ERROR_PARTIAL = /* wgsl */ `
struct U { n: u32, groups: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> est: array<f32>;
@group(0) @binding(2) var<storage, read> truth: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;
var<workgroup> acc: array<vec4<f32>, ${WORKGROUP}>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  var s = vec4<f32>(0.0);
  for (var i = wid.x * ${WORKGROUP}u + lid; i < u.n; i += u.groups * ${WORKGROUP}u) {
    let d = est[i] - truth[i];
    s += vec4<f32>(d * d, truth[i] * truth[i], est[i], truth[i]);
  }
  acc[lid] = s;
  workgroupBarrier();
  if (lid == 0u) {
    var total = vec4<f32>(0.0);
    for (var k = 0u; k < ${WORKGROUP}u; k++) { total += acc[k]; }
    partials[wid.x] = total;
  }
}`;
const WGSL_ERROR_TOTAL = /* wgsl */ `
struct U { n: u32, groups: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read_write> partials: array<vec4<f32>>;
@compute @workgroup_size(1)
fn main() {
  var total = vec4<f32>(0.0);
  for (var g = 0u; g < u.groups; g++) { total += partials[g]; }
  partials[0] = total;
}`;

/**
 * mlem.error's report from the sums of (e - t)^2, t^2, e and t over n voxels: the relative
 * error, failed above the bound (`max_error`, or where it is 0 the error of a flat image at the
 * phantom's mean activity, which one MLEM step from a flat start already beats).
 */
export function errorReport(
  sums: { squaredError: number; squaredTruth: number; activity: number; truth: number },
  n: number,
  params: Params,
  iteration: number,
): FiringReport {
  const { squaredError, squaredTruth, activity, truth } = sums;
  const relative = (x: number) => (squaredTruth > 0 ? Math.sqrt(Math.max(0, x) / squaredTruth) : Math.sqrt(Math.max(0, x)));
  const error = relative(squaredError);
  const set = Number(params.max_error ?? 0);
  // ||mean - t||^2 = sum t^2 - (sum t)^2 / n.
  const bound = set > 0 ? set : relative(squaredTruth - (truth * truth) / n);
  const values = { error, activity, bound };
  // NaN (a lost estimate) fails too.
  if (error <= bound) return { ok: true, values };
  const whence = set > 0 ? 'max_error' : "the error of a flat image at the phantom's mean activity; set max_error to choose another";
  return {
    ok: false,
    values,
    message: `iteration ${iteration}: the reconstruction's relative error ${error.toPrecision(4)} is above the bound ${bound.toPrecision(4)} (${whence})`,
  };
}

export interface PhantomData {
  key: string;
  truth: Float32Array;
  sinogram: Float32Array;
  sensitivity: Float32Array;
}

/**
 * The phantom's three outputs, computed once per params (a source fires every iteration and
 * re-emits them); the example's data files (examples/data) are these too.
 */
export function phantomData(p: Params): PhantomData {
  const n = Number(p.size);
  const angles = Number(p.angles);
  const all = shareAngles(angles, 1, 0);
  const trig = trigTable(angles, all);
  const { volume } = phantom(n, Number(p.spheres), Number(p.background), Number(p.seed));
  const sinogram = new Float32Array(binCount(p));
  project(n, trig, volume, sinogram);
  const total = Number(p.counts);
  if (total > 0) {
    const sum = sinogram.reduce((a, b) => a + b, 0);
    poisson(sinogram.slice(), sum > 0 ? total / sum : 0, Number(p.seed), sinogram);
  }
  const sensitivity = new Float32Array(voxelCount(p));
  backproject(n, trig, new Float32Array(binCount(p)).fill(1), sensitivity);
  return { key: JSON.stringify(p), truth: volume, sinogram, sensitivity };
}

export const mlemKernels: Kernel[] = implement(mlemSpecs, {
  'mlem.phantom': {
    cpu: ({ params, outputs, state }) => {
      let data = state.phantom as PhantomData | undefined;
      if (data?.key !== JSON.stringify(params)) state.phantom = data = phantomData(params);
      (outputs.truth as Float32Array).set(data.truth);
      (outputs.sinogram as Float32Array).set(data.sinogram);
      (outputs.sensitivity as Float32Array).set(data.sensitivity);
    },
    // The scanner's data, made on the host once per params as the twin makes it (the Poisson
    // draw is sequential) and kept on the device; a firing copies it out: no dispatch.
    gpu: {
      wgsl: {},
      dispatches: () => [],
      async prepare(device, params) {
        const data = phantomData(params);
        const kept = {
          truth: uploadBuffer(device, data.truth, 'mlem.phantom.truth'),
          sinogram: uploadBuffer(device, data.sinogram, 'mlem.phantom.sinogram'),
          sensitivity: uploadBuffer(device, data.sensitivity, 'mlem.phantom.sensitivity'),
        };
        return {
          encode(encoder, f) {
            for (const [port, buf] of Object.entries(kept)) encoder.copyBufferToBuffer(buf, 0, f.outputs[port], 0, data[port as keyof typeof kept].byteLength);
          },
          destroy: () => Object.values(kept).forEach((b) => b.destroy()),
        };
      },
    },
  },
  'mlem.projbp': {
    cpu: ({ params, inputs, outputs }) => {
      const n = Number(params.size);
      const list = anglesOf(params);
      const trig = trigTable(Number(params.angles), list);
      // f32 scratch, as on the GPU: the ratio is formed from the rounded projection.
      const scratch = new Float32Array(list.length * n * n);
      project(n, trig, inputs.estimate as Float32Array, scratch);
      ratio(n, list, inputs.sinogram as Float32Array, scratch);
      backproject(n, trig, scratch, outputs.backprojection as Float32Array);
    },
    gpu: {
      wgsl: { project: WGSL_PROJECT, ratio: WGSL_RATIO, backproject: WGSL_BACKPROJECT },
      dispatches: (p) => {
        const bins = anglesOf(p).length * Number(p.size) ** 2;
        return [linear('project', bins), linear('ratio', bins), linear('backproject', voxelCount(p))];
      },
      async prepare(device, params) {
        const g = await GpuProjector.create(device, params);
        return {
          encode(encoder, f) {
            g.encodeProject(encoder, f.inputs.estimate);
            g.encodeRatio(encoder, f.inputs.sinogram);
            g.encodeBackproject(encoder, f.outputs.backprojection);
          },
          destroy: () => g.destroy(),
        };
      },
    },
  },
  'mlem.error': {
    cpu: ({ inputs, params, iteration }) => {
      const e = inputs.estimate as Float32Array;
      const t = inputs.truth as Float32Array;
      let se = 0;
      let st = 0;
      let sum = 0;
      let sumT = 0;
      for (let i = 0; i < e.length; i++) {
        se += (e[i] - t[i]) ** 2;
        st += t[i] * t[i];
        sum += e[i];
        sumT += t[i];
      }
      return errorReport({ squaredError: se, squaredTruth: st, activity: sum, truth: sumT }, e.length, params, iteration);
    },
    gpu: {
      wgsl: { partial: WGSL_ERROR_PARTIAL, total: WGSL_ERROR_TOTAL },
      dispatches: (p) => [
        { module: 'partial', workgroups: [Math.min(ERROR_GROUPS, Math.ceil(voxelCount(p) / WORKGROUP)), 1, 1] },
        { module: 'total', workgroups: [1, 1, 1] },
      ],
      async prepare(device, params) {
        const n = voxelCount(params);
        const groups = Math.min(ERROR_GROUPS, Math.ceil(n / WORKGROUP));
        const [partial, total] = await Promise.all([
          createPipeline(device, 'mlem.error', 'partial', WGSL_ERROR_PARTIAL),
          createPipeline(device, 'mlem.error', 'total', WGSL_ERROR_TOTAL),
        ]);
        const uni = uniformBuffer(
          device,
          packWords([
            ['u', n],
            ['u', groups],
          ]),
          'mlem.error.uniforms',
        );
        const partials = storageBuffer(device, groups * 16, 'mlem.error.partials');
        const staging = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'mlem.error.staging' });
        return {
          encode(encoder, f) {
            let pass = encoder.beginComputePass({ label: 'mlem.error/partial' });
            pass.setPipeline(partial);
            pass.setBindGroup(0, bindGroup(device, partial, [uni, f.inputs.estimate, f.inputs.truth, partials]));
            pass.dispatchWorkgroups(groups);
            pass.end();
            pass = encoder.beginComputePass({ label: 'mlem.error/total' });
            pass.setPipeline(total);
            pass.setBindGroup(0, bindGroup(device, total, [uni, partials]));
            pass.dispatchWorkgroups(1);
            pass.end();
            encoder.copyBufferToBuffer(partials, 0, staging, 0, 16);
          },
          async report(f) {
            await staging.mapAsync(GPUMapMode.READ);
            const r = new Float32Array(staging.getMappedRange().slice(0));
            staging.unmap();
            return errorReport({ squaredError: r[0], squaredTruth: r[1], activity: r[2], truth: r[3] }, n, params, f.iteration);
          },
          destroy() {
            uni.destroy();
            partials.destroy();
            staging.destroy();
          },
        };
      },
    },
  },
  'mlem.update': {
    cpu: ({ inputs, outputs }) => {
      update(inputs.previous as Float32Array, inputs.backprojection as Float32Array, inputs.sensitivity as Float32Array, outputs.estimate as Float32Array);
    },
    gpu: {
      wgsl: { update: WGSL_UPDATE },
      dispatches: (p) => [linear('update', voxelCount(p))],
      async prepare(device, params) {
        const pipeline = await createPipeline(device, 'mlem.update', 'update', WGSL_UPDATE);
        const n = voxelCount(params);
        const uni = uniformBuffer(device, packWords([['u', n]]), 'mlem.update.uniforms');
        return {
          encode(encoder, f) {
            dispatch(
              encoder,
              pipeline,
              bindGroup(device, pipeline, [uni, f.inputs.previous, f.inputs.backprojection, f.inputs.sensitivity, f.outputs.estimate]),
              n,
              'mlem.update',
            );
          },
          destroy: () => uni.destroy(),
        };
      },
    },
  },
});
