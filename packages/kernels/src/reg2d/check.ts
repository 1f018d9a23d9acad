import { bindGroup, createPipeline, dispatch, linear, LINEAR_ID, uniformBuffer, uploadBuffer, WORKGROUP } from '../gpu/pipeline.js';
import { implement } from '../implement.js';
import { KernelError, type FiringReport, type GpuExecutor, type Kernel, type KernelImplementation, type Params } from '../types.js';
import { cornerShift, driftWalk, IDENTITY, trueTransform, type Rigid } from './series.js';
import { REG2D_CHECK, reg2dCheckSpecs } from './spec.js';

// reg2d.check: a registration scan against the series' known drift (the scan's "within 0.5 px
// of ground truth"), so a reg2d scan runs end to end with a verdict, as scan.check gives one
// for the exact operators. Every element's range must be the scan's ([0, i]; exclusive: the
// empty range [1, 0], then [0, i - 1]) and its transform within `within` px (the largest corner
// shift) of the truth phi_{0, hi + 1}. The truth is the seeded walk reg2d.frames draws, so the
// check needs the series' seed, drift and rotation, not its frames. The WGSL computes each
// element's range verdict and corner shift on the device (the truth uploaded once per params);
// the report is made on the host from them, as the twin makes it. With `serial`, the elements
// are also compared with the serial scan's (an approximate operator's correctness: any bracketing
// within its tolerance of serial); on a GPU PE that comparison is made on the host from the
// read-back elements: a fifth storage binding would pass the four of compatibility-mode devices.

/** Words of one element: [lo, hi, theta, tx, ty]. */
const E = 5;
const count = (p: Params) => Number(p.count);
const hasTotal = (p: Params) => p.total === true;
const exclusive = (p: Params) => String(p.output) === 'exclusive';
const hasSerial = (p: Params) => p.serial === true;
const rigid = (e: ArrayLike<number>): Rigid => ({ theta: float(e[2]), tx: float(e[3]), ty: float(e[4]) });

/** Element i's expected range (i = N: the total). */
function rangeOf(p: Params, i: number): [number, number] {
  const N = count(p);
  if (i === N) return [0, N - 1];
  if (!exclusive(p)) return [0, i];
  return i === 0 ? [1, 0] : [0, i - 1];
}

/** The true transform of each element (then the total's): phi_{0, hi + 1}, the identity for the empty range. */
function truths(p: Params): Rigid[] {
  const N = count(p);
  const drift = driftWalk({ seed: Number(p.seed), drift: Number(p.drift), rotation: Number(p.rotation) }, N + 1);
  return Array.from({ length: N + 1 }, (_, i) => {
    const [lo, hi] = rangeOf(p, i);
    return lo > hi ? IDENTITY : trueTransform(drift, 0, hi + 1);
  });
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const float = (w: number) => ((u32[0] = w), f32[0]);

/** The report from each element's range verdict and shift: the first wrong range, else the first shift over `within`. */
function verdict(
  p: Params,
  iteration: number,
  elements: number,
  held: (i: number) => Uint32Array,
  shiftOf: (i: number) => number,
  serial?: Uint32Array,
): FiringReport {
  const N = count(p);
  const within = Number(p.within);
  const where = (i: number) => (i === N ? 'total' : `out element ${i}`);
  let worst = 0;
  let sum = 0;
  for (let i = 0; i < elements; i++) {
    const e = held(i);
    const [lo, hi] = rangeOf(p, i);
    if (e[0] !== lo || e[1] !== hi)
      return { ok: false, message: `iteration ${iteration}: ${where(i)} covers [${e[0]}, ${e[1]}], expected [${lo}, ${hi}]`, values: { iteration, index: i } };
    const s = shiftOf(i);
    if (!(s <= within)) {
      const phi = `(theta ${float(e[2]).toPrecision(4)}, tx ${float(e[3]).toPrecision(4)}, ty ${float(e[4]).toPrecision(4)})`;
      return {
        ok: false,
        message: `iteration ${iteration}: ${where(i)} [${lo}, ${hi}] holds ${phi}, ${Number.isFinite(s) ? `${s.toFixed(3)} px` : 'a non-finite transform'} from the truth; at most ${within} px accepted`,
        values: { iteration, index: i, shift: Number.isFinite(s) ? s : -1 },
      };
    }
    worst = Math.max(worst, s);
    sum += s;
  }
  if (!serial) return { ok: true, values: { maxShift: worst, meanShift: sum / Math.max(1, elements) } };
  let apart = 0;
  const tolerance = Number(p.tolerance);
  for (let i = 0; i < N; i++) {
    const e = held(i);
    const s = cornerShift(rigid(e), rigid(serial.subarray(i * E, (i + 1) * E)), Number(p.width), Number(p.height));
    if (!(s <= tolerance))
      return {
        ok: false,
        message: `iteration ${iteration}: out element ${i} [${e[0]}, ${e[1]}] is ${s.toFixed(3)} px from the serial scan's; at most ${tolerance} px (the operator's tolerance) accepted`,
        values: { iteration, index: i, serialShift: s },
      };
    apart = Math.max(apart, s);
  }
  return { ok: true, values: { maxShift: worst, meanShift: sum / Math.max(1, elements), maxSerialShift: apart } };
}

const words32 = (v: ArrayBufferView | undefined, need: number, port: string): Uint32Array => {
  if (!v) throw new KernelError(REG2D_CHECK, `input "${port}" is missing`);
  const u = new Uint32Array(v.buffer, v.byteOffset, Math.floor(v.byteLength / 4));
  if (u.length < need) throw new KernelError(REG2D_CHECK, `input "${port}" holds ${u.length} words; ${need} expected`);
  return u;
};

const WGSL = /* wgsl */ `
struct U { n: u32, flags: u32, width: f32, height: f32 }
@group(0) @binding(0) var<uniform> u: U;
@group(0) @binding(1) var<storage, read> out_: array<u32>;
@group(0) @binding(2) var<storage, read> total_: array<u32>;
@group(0) @binding(3) var<storage, read> truth: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;
${LINEAR_ID}

fn held(i: u32, t: u32) -> u32 {
  if (i == u.n) { return total_[t]; }
  return out_[i * 5u + t];
}

// phi(x) about the frame's centre, as series.ts applyRigid.
fn apply(p: vec3<f32>, x: vec2<f32>) -> vec2<f32> {
  let c = (vec2<f32>(u.width, u.height) - 1.0) * 0.5;
  let d = x - c;
  let co = cos(p.x);
  let si = sin(p.x);
  return vec2<f32>(co * d.x - si * d.y, si * d.x + co * d.y) + c + p.yz;
}

// result[i]: -1 for a wrong range, else the largest corner shift (NaN for a non-finite transform).
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = linear_id(gid, nwg);
  let m = u.n + select(0u, 1u, (u.flags & 2u) != 0u);
  if (i >= m) { return; }
  var lo = 0u;
  var hi = i;
  if (i == u.n) { hi = u.n - 1u; } else if ((u.flags & 1u) != 0u) {
    if (i == 0u) { lo = 1u; hi = 0u; } else { hi = i - 1u; }
  }
  if (held(i, 0u) != lo || held(i, 1u) != hi) { result[i] = -1.0; return; }
  let p = vec3<f32>(bitcast<f32>(held(i, 2u)), bitcast<f32>(held(i, 3u)), bitcast<f32>(held(i, 4u)));
  let q = vec3<f32>(truth[i * 3u], truth[i * 3u + 1u], truth[i * 3u + 2u]);
  var worst = 0.0;
  for (var k = 0u; k < 4u; k++) {
    let x = vec2<f32>(select(0.0, u.width - 1.0, (k & 1u) != 0u), select(0.0, u.height - 1.0, (k & 2u) != 0u));
    let s = length(apply(p, x) - apply(q, x));
    // max() may drop a NaN: keep it, so a non-finite transform fails.
    worst = select(max(worst, s), s, s != s);
    if (s != s) { break; }
  }
  result[i] = worst;
}`;

const implementation: KernelImplementation = {
  cpu: ({ params, iteration, inputs }) => {
    const N = count(params);
    const out = words32(inputs.out, N * E, 'out');
    const total = hasTotal(params) ? words32(inputs.total, E, 'total') : undefined;
    const truth = truths(params);
    const held = (i: number) => (i === N ? total!.subarray(0, E) : out.subarray(i * E, (i + 1) * E));
    const w = Number(params.width);
    const h = Number(params.height);
    const shift = (i: number) => cornerShift(rigid(held(i)), truth[i], w, h);
    return verdict(params, iteration, N + (total ? 1 : 0), held, shift, hasSerial(params) ? words32(inputs.serial, N * E, 'serial') : undefined);
  },
  gpu: {
    wgsl: { main: WGSL },
    dispatches: (p) => [linear('main', count(p) + 1)],
    async prepare(device, params): Promise<GpuExecutor> {
      const N = count(params);
      const elements = N + (hasTotal(params) ? 1 : 0);
      const pipeline = await createPipeline(device, REG2D_CHECK, 'main', WGSL);
      const head = new ArrayBuffer(16);
      new Uint32Array(head, 0, 2).set([N, (exclusive(params) ? 1 : 0) | (hasTotal(params) ? 2 : 0)]);
      new Float32Array(head, 8, 2).set([Number(params.width), Number(params.height)]);
      const uni = uniformBuffer(device, head, `${REG2D_CHECK}/u`);
      const truth = uploadBuffer(device, Float32Array.from(truths(params).flatMap((t) => [t.theta, t.tx, t.ty])), `${REG2D_CHECK}/truth`);
      const bytes = Math.ceil((4 * elements) / 16) * 16;
      const result = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, label: `${REG2D_CHECK}/result` });
      const resultRead = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${REG2D_CHECK}/result-read` });
      // The elements too, for the report's text (what a bad element holds).
      const words = Math.ceil((4 * E * elements) / 16) * 16;
      const heldRead = device.createBuffer({ size: words, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${REG2D_CHECK}/held-read` });
      const serialBytes = Math.ceil((4 * E * N) / 16) * 16;
      const serialRead = hasSerial(params)
        ? device.createBuffer({ size: serialBytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${REG2D_CHECK}/serial-read` })
        : undefined;
      return {
        encode(encoder, f) {
          // Without a total port, `out` is bound in its place (read-only twice; never read there).
          const total = hasTotal(params) ? f.inputs.total : f.inputs.out;
          dispatch(encoder, pipeline, bindGroup(device, pipeline, [uni, f.inputs.out, total, truth, result]), elements, REG2D_CHECK);
          encoder.copyBufferToBuffer(result, 0, resultRead, 0, bytes);
          encoder.copyBufferToBuffer(f.inputs.out, 0, heldRead, 0, 4 * E * N);
          if (hasTotal(params)) encoder.copyBufferToBuffer(f.inputs.total, 0, heldRead, 4 * E * N, 4 * E);
          if (serialRead) encoder.copyBufferToBuffer(f.inputs.serial, 0, serialRead, 0, 4 * E * N);
        },
        async report(f) {
          await Promise.all([resultRead.mapAsync(GPUMapMode.READ), heldRead.mapAsync(GPUMapMode.READ), serialRead?.mapAsync(GPUMapMode.READ)]);
          const shifts = new Float32Array(resultRead.getMappedRange().slice(0));
          const held = new Uint32Array(heldRead.getMappedRange().slice(0));
          const serial = serialRead && new Uint32Array(serialRead.getMappedRange().slice(0));
          resultRead.unmap();
          heldRead.unmap();
          serialRead?.unmap();
          return verdict(
            params,
            f.iteration,
            elements,
            (i) => held.subarray(i * E, (i + 1) * E),
            (i) => shifts[i],
            serial,
          );
        },
        destroy() {
          uni.destroy();
          truth.destroy();
          result.destroy();
          resultRead.destroy();
          heldRead.destroy();
          serialRead?.destroy();
        },
      };
    },
  },
};

export const reg2dCheckKernels: Kernel[] = implement(reg2dCheckSpecs, { [REG2D_CHECK]: implementation });
