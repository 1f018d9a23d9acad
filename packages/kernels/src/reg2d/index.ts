import { binaryKernel } from '../define-binary.js';
import { implement } from '../implement.js';
import { LINEAR_ID, WORKGROUP, bindGroup, createPipeline, dispatch, linear, packWords, uniformBuffer, uploadBuffer } from '../gpu/pipeline.js';
import { KernelError, type GpuExecutor, type Kernel, type KernelSpec, type Params } from '../types.js';
import { refine, registrationWgsl, type Series } from './register.js';
import { LEVELS, composeRigid, driftWalk, makeSeries, pyramidLayout, scaledFrame, writePyramid, type Rigid, type SeriesParams } from './series.js';
import { REG2D_FRAME, REG2D_PYRAMIDS, reg2dBinarySpecs, reg2dPlainSpecs } from './spec.js';
import { reg2dCheckKernels } from './check.js';

// reg2d's implementations: the series source (CPU; on a GPU PE the twin's series is uploaded
// once per params), the pair registration (twin, and WGSL: a workgroup per pair) and the
// compose operator (twin, and WGSL around the generated scan modules). register.ts holds the
// descent both sides run.

export { COMPOSE_TOLERANCE, REG2D_CHECK, framesType } from './spec.js';
export {
  IDENTITY,
  applyRigid,
  composeRigid,
  cornerShift,
  driftWalk,
  frameImage,
  makeSeries,
  pyramidLayout,
  writePyramid,
  trueTransform,
  type Rigid,
  type SeriesParams,
} from './series.js';
export { refine } from './register.js';

export const seriesParams = (p: Params): SeriesParams => ({
  width: Number(p.width),
  height: Number(p.height),
  seed: Number(p.seed),
  drift: Number(p.drift),
  rotation: Number(p.rotation),
  noise: Number(p.noise),
  lowContrast: Number(p.low_contrast),
});

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bits = (x: number) => ((f32[0] = x), u32[0]);
const float = (w: number) => ((u32[0] = w), f32[0]);

/** A payload (theta, tx, ty as f32 bits) as a transform, and back. */
export const rigidOf = (w: ArrayLike<number>, at = 0): Rigid => ({ theta: float(w[at]), tx: float(w[at + 1]), ty: float(w[at + 2]) });
export const wordsOf = (r: Rigid): number[] => [bits(r.theta), bits(r.tx), bits(r.ty)];

const series = (p: Params, frames: ArrayBufferView): Series => ({
  frames: new Float32Array(frames.buffer, frames.byteOffset, Math.floor(frames.byteLength / 4)),
  width: Number(p.width),
  height: Number(p.height),
});

/** The frames a pair or composition reads must be in the series: a KernelError naming the range and the fix. */
function checkFrames(id: string, p: Params, last: number, what: string): void {
  if (last >= Number(p.frames))
    throw new KernelError(id, `${what} needs frame ${last}, but the series has ${p.frames} frames (0 .. ${Number(p.frames) - 1}); give frames >= ${last + 1}`);
}

// ---- reg2d.pair on the GPU: one workgroup of 64 lanes per pair ----

/** A pair's iterations word when its workgroup ran out of the device's loop budget. */
const CUT = 0xffffffff;

function pairSource(p: Params): string {
  return `@group(0) @binding(0) var<storage, read> frames: array<f32>;
@group(0) @binding(1) var<storage, read_write> rp_out: array<u32>;
@group(0) @binding(2) var<storage, read_write> rp_iters: array<u32>;
const RP_FIRST: u32 = ${Number(p.first)}u;
${registrationWgsl(Number(p.width), Number(p.height), Number(p.eps), Number(p.iterations))}
var<workgroup> rp_two: u32;
var<workgroup> rp_cut: u32;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lane: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let j = wg.x;
  if (lane == 0u) { rg_fa = RP_FIRST + j; rg_fb = RP_FIRST + j + 1u; rg_p = vec3<f32>(0.0); rp_two = 2u; rp_cut = 0u; }
  rg_refine(lane, RG_LANES);
  // The device's loop budget (llvmpipe: 65535 iterations per invocation, all loops together)
  // ran out if a loop of rp_two (2, set at run time) iterations runs fewer: the descent's
  // loops may have ended early, so the pair is marked (${CUT}) rather than given.
  var k = 0u;
  for (var i = 0u; i < rp_two; i++) { k++; }
  if (k != rp_two) { rp_cut = 1u; }
  let cut = workgroupUniformLoad(&rp_cut) != 0u;
  if (lane == 0u) {
    rp_out[j * 5u] = RP_FIRST + j;
    rp_out[j * 5u + 1u] = RP_FIRST + j;
    rp_out[j * 5u + 2u] = bitcast<u32>(rg_p.x);
    rp_out[j * 5u + 3u] = bitcast<u32>(rg_p.y);
    rp_out[j * 5u + 4u] = bitcast<u32>(rg_p.z);
    rp_iters[j] = select(rg_iters, ${CUT}u, cut);
  }
}
`;
}

const bindingCheck = (id: string, device: GPUDevice, p: Params) => {
  const bytes = Number(p.frames) * pyramidLayout(Number(p.width), Number(p.height)).words * 4;
  if (bytes > device.limits.maxStorageBufferBindingSize)
    throw new KernelError(
      id,
      `the frames context is ${bytes} bytes; this device binds at most ${device.limits.maxStorageBufferBindingSize} (use fewer or smaller frames)`,
    );
};

/**
 * reg2d.pyramids on the device: writePyramid's steps, one invocation per frame (a frame is a
 * few thousand pixels; the series a few dozen frames): level 0 the image, each level below the
 * 2 x 2 means of the one above, then each level shifted and scaled to mean 0, sd 1.
 */
const PYRAMIDS_WGSL = /* wgsl */ `
struct U { frames: u32, width: u32, height: u32, words: u32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> images: array<f32>;
@group(0) @binding(2) var<storage, read_write> pyr: array<f32>;
${LINEAR_ID}
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = linear_id(gid, nwg);
  if (k >= u.frames) { return; }
  let at = k * u.words;
  let n0 = u.width * u.height;
  for (var i = 0u; i < n0; i++) { pyr[at + i] = images[k * n0 + i]; }
  var off = 0u;
  var pw = u.width;
  var ph = u.height;
  for (var l = 1u; l < ${LEVELS}u; l++) {
    let w = pw / 2u;
    let h = ph / 2u;
    let dst = off + pw * ph;
    for (var y = 0u; y < h; y++) {
      for (var x = 0u; x < w; x++) {
        let i = at + off + 2u * y * pw + 2u * x;
        pyr[at + dst + y * w + x] = (pyr[i] + pyr[i + 1u] + pyr[i + pw] + pyr[i + pw + 1u]) / 4.0;
      }
    }
    off = dst;
    pw = w;
    ph = h;
  }
  off = 0u;
  pw = u.width;
  ph = u.height;
  for (var l = 0u; l < ${LEVELS}u; l++) {
    let n = pw * ph;
    let base = at + off;
    var mean = 0.0;
    for (var i = 0u; i < n; i++) { mean += pyr[base + i]; }
    mean /= f32(n);
    var v = 0.0;
    for (var i = 0u; i < n; i++) { let d = pyr[base + i] - mean; v += d * d; }
    var sd = sqrt(v / f32(n));
    if (sd == 0.0) { sd = 1.0; }
    for (var i = 0u; i < n; i++) { pyr[base + i] = (pyr[base + i] - mean) / sd; }
    off += n;
    pw = pw / 2u;
    ph = ph / 2u;
  }
}`;

const plain: Kernel[] = implement(reg2dPlainSpecs, {
  'reg2d.frames': {
    cpu: ({ params, outputs, state }) => {
      const key = JSON.stringify([seriesParams(params), params.frames]);
      let data = state.series as { key: string; data: Float32Array } | undefined;
      if (data?.key !== key) state.series = data = { key, data: makeSeries(seriesParams(params), Number(params.frames)).data };
      (outputs.frames as Float32Array).set(data.data);
    },
    // On a GPU PE the twin's series is made once per params and kept on the device; a firing
    // copies it out (no dispatch): every PE holds the same bits, so CPU and GPU workers agree.
    gpu: {
      wgsl: {},
      dispatches: () => [],
      async prepare(device, params) {
        bindingCheck('reg2d.frames', device, params);
        const data = makeSeries(seriesParams(params), Number(params.frames)).data;
        const kept = uploadBuffer(device, data, 'reg2d.frames');
        return {
          encode: (encoder, f) => encoder.copyBufferToBuffer(kept, 0, f.outputs.frames, 0, data.byteLength),
          destroy: () => kept.destroy(),
        };
      },
    },
  },
  [REG2D_FRAME]: {
    cpu: ({ params, outputs, iteration }) => {
      const k = iteration % Number(params.frames);
      const p = seriesParams(params);
      (outputs.image as Float32Array).set(scaledFrame(p, k, driftWalk(p, k + 1)[k]));
    },
    // Every frame made once per params on the host, as the twin makes it, and kept on the
    // device; a firing copies frame k out (no dispatch).
    gpu: {
      wgsl: {},
      dispatches: () => [],
      async prepare(device, params) {
        const p = seriesParams(params);
        const frames = Number(params.frames);
        const pixels = p.width * p.height;
        const drift = driftWalk(p, frames);
        const all = new Float32Array(frames * pixels);
        for (let k = 0; k < frames; k++) all.set(scaledFrame(p, k, drift[k]), k * pixels);
        const kept = uploadBuffer(device, all, REG2D_FRAME);
        return {
          encode: (encoder, f) => encoder.copyBufferToBuffer(kept, (f.iteration % frames) * pixels * 4, f.outputs.image, 0, pixels * 4),
          destroy: () => kept.destroy(),
        };
      },
    },
  },
  [REG2D_PYRAMIDS]: {
    cpu: ({ params, inputs, outputs }) => {
      const { width, height } = seriesParams(params);
      const { words } = pyramidLayout(width, height);
      const out = outputs.frames as Float32Array;
      for (let k = 0; k < Number(params.frames); k++) writePyramid(inputs[`in${k}`] as Float32Array, width, height, out, k * words);
    },
    // The images copied side by side into one buffer (copies bind nothing: a device binds only
    // a few storage buffers at once), then one invocation per frame builds its pyramid.
    gpu: {
      wgsl: { main: PYRAMIDS_WGSL },
      dispatches: (p) => [linear('main', Number(p.frames))],
      async prepare(device, params) {
        const { width, height } = seriesParams(params);
        const frames = Number(params.frames);
        bindingCheck(REG2D_PYRAMIDS, device, params);
        const pixels = width * height;
        const pipeline = await createPipeline(device, REG2D_PYRAMIDS, 'main', PYRAMIDS_WGSL);
        const stack = device.createBuffer({
          size: frames * pixels * 4,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
          label: `${REG2D_PYRAMIDS}/images`,
        });
        const uni = uniformBuffer(
          device,
          packWords([
            ['u', frames],
            ['u', width],
            ['u', height],
            ['u', pyramidLayout(width, height).words],
          ]),
          `${REG2D_PYRAMIDS}.uniforms`,
        );
        return {
          encode(encoder, f) {
            for (let k = 0; k < frames; k++) encoder.copyBufferToBuffer(f.inputs[`in${k}`], 0, stack, k * pixels * 4, pixels * 4);
            dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, stack, f.outputs.frames]), frames, REG2D_PYRAMIDS);
          },
          destroy() {
            stack.destroy();
            uni.destroy();
          },
        };
      },
    },
  },
  'reg2d.pair': {
    cpu: ({ params, inputs, outputs }) => {
      const first = Number(params.first);
      const count = Number(params.count);
      checkFrames('reg2d.pair', params, first + count, `pairs ${first} .. ${first + count - 1}`);
      const s = series(params, inputs.frames);
      const out = outputs.out as Uint32Array;
      let iterations = 0;
      for (let j = 0; j < count; j++) {
        const r = refine(s, first + j, first + j + 1, { theta: 0, tx: 0, ty: 0 }, Number(params.eps), Number(params.iterations));
        iterations += r.iterations;
        out.set([first + j, first + j, ...wordsOf(r.phi)], j * 5);
      }
      return { ok: true, values: { iterations } };
    },
    gpu: {
      wgsl: {
        main: pairSource(Object.fromEntries(Object.entries(reg2dPlainSpecs.find((k) => k.id === 'reg2d.pair')!.params).map(([n, q]) => [n, q.default]))),
      },
      dispatches: (p) => [{ module: 'main', workgroups: [Number(p.count), 1, 1] }],
      async prepare(device: GPUDevice, params: Params): Promise<GpuExecutor> {
        const id = 'reg2d.pair';
        const count = Number(params.count);
        checkFrames(id, params, Number(params.first) + count, `pairs ${params.first} .. ${Number(params.first) + count - 1}`);
        bindingCheck(id, device, params);
        const pipeline = await createPipeline(device, id, 'main', pairSource(params));
        const iters = device.createBuffer({ size: 4 * count, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, label: `${id}/iterations` });
        const staging = device.createBuffer({ size: 4 * count, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${id}/iterations-read` });
        return {
          encode(encoder, firing) {
            const pass = encoder.beginComputePass({ label: id });
            pass.setPipeline(pipeline);
            pass.setBindGroup(0, bindGroup(device, pipeline, [firing.inputs.frames, firing.outputs.out, iters]));
            pass.dispatchWorkgroups(count);
            pass.end();
            encoder.copyBufferToBuffer(iters, 0, staging, 0, 4 * count);
          },
          async report() {
            await staging.mapAsync(GPUMapMode.READ);
            const n = new Uint32Array(staging.getMappedRange().slice(0));
            staging.unmap();
            const cut = n.indexOf(CUT);
            if (cut >= 0)
              return {
                ok: false,
                message: `kernel "reg2d.pair": pair ${Number(params.first) + cut} (frames ${Number(params.first) + cut} and ${Number(params.first) + cut + 1}) ran out of the device's loop budget (llvmpipe ends an invocation's loops after 65535 iterations in all) and is not given: lower iterations (M = ${params.iterations}) or raise eps, or run reg2d.pair on a CPU PE`,
              };
            return { ok: true, values: { iterations: n.reduce((a, b) => a + b, 0) } };
          },
          destroy() {
            iters.destroy();
            staging.destroy();
          },
        };
      },
    },
  },
});

// ---- reg2d.compose ----

/** NaN bits: the WGSL's answer for a composition reaching past the series (the twin throws). */
const NAN = 0x7fc00000;

const composeWgsl = (p: Params) => /* wgsl */ `
const RC_FRAMES: u32 = ${Number(p.frames)}u;
${registrationWgsl(Number(p.width), Number(p.height), Number(p.eps), Number(p.iterations))}
fn op_apply(lane: u32, lanes: u32) {
  if (lane == 0u) {
    // [a, b - 1] (+) [b, c - 1]: frames a and c = right.hi + 1; the guess is phi_bc o phi_ab.
    let c = op_range.w + 1u;
    rg_fa = op_range.x;
    rg_fb = c;
    rg_go = select(0u, 1u, c < RC_FRAMES && c != 0u);
    let ab = vec3<f32>(bitcast<f32>(op_a[0]), bitcast<f32>(op_a[1]), bitcast<f32>(op_a[2]));
    let bc = vec3<f32>(bitcast<f32>(op_b[0]), bitcast<f32>(op_b[1]), bitcast<f32>(op_b[2]));
    let co = cos(bc.x);
    let si = sin(bc.x);
    rg_p = vec3<f32>(ab.x + bc.x, co * ab.y - si * ab.z + bc.y, si * ab.y + co * ab.z + bc.z);
  }
  if (workgroupUniformLoad(&rg_go) == 0u) {
    if (lane == 0u) { op_out[0] = ${NAN}u; op_out[1] = ${NAN}u; op_out[2] = ${NAN}u; }
    return;
  }
  rg_refine(lane, lanes);
  if (lane == 0u) {
    op_out[0] = bitcast<u32>(rg_p.x);
    op_out[1] = bitcast<u32>(rg_p.y);
    op_out[2] = bitcast<u32>(rg_p.z);
    op_count(0u, rg_iters);
  }
}`;

const composeSpec = (id: string): KernelSpec => reg2dBinarySpecs.find((s) => s.id === id)!;

const compose: Kernel = binaryKernel(composeSpec('reg2d.compose'), {
  counters: ['iterations'],
  // One application per dispatch: a descent's loops spend thousands of the loop budget an
  // invocation has on llvmpipe (65535), so a walk of many in one dispatch was cut short.
  dispatchElements: 1,
  cpu: (a, b, out, params, context, info) => {
    const fa = info.left[0];
    const fc = info.right[1] + 1;
    checkFrames('reg2d.compose', params, fc, `[${info.left[0]}, ${info.left[1]}] (+) [${info.right[0]}, ${info.right[1]}]`);
    const guess = composeRigid(rigidOf(a), rigidOf(b));
    const r = refine(series(params, context.frames), fa, fc, guess, Number(params.eps), Number(params.iterations));
    out.set(wordsOf(r.phi));
    info.count('iterations', r.iterations);
  },
  wgsl: composeWgsl,
});

export const reg2dKernels: Kernel[] = [...plain, compose, ...reg2dCheckKernels];
