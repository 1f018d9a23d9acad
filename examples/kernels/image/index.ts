import { defineKernel, LINEAR_ID, type DataType, type Params } from '@pipeloom/kernels';
import { chroma, magnitude, readPlanes, sobel } from './planes.js';

// An example kernel package, written against @pipeloom/kernels' public API only: load it with
// `pipeloom agent --kernels examples/kernels/image` (or compile, predict, run, kernels).
// Every WGSL module binds its ports in order (inputs, outputs), then its uniforms.

const size = {
  width: { type: 'int', default: 320, min: 1, max: 4096, unit: 'pixels', description: 'Image width' },
  height: { type: 'int', default: 240, min: 1, max: 4096, unit: 'pixels', description: 'Image height' },
} as const;

const plane = (p: Params): DataType => ({ kind: 'image', element: 'f32', shape: [Number(p.height), Number(p.width)] });
const chromaPlane = (p: Params): DataType => ({ kind: 'image', element: 'f32', shape: [chroma(Number(p.height)), chroma(Number(p.width))] });
const px = (p: Params) => Number(p.width) * Number(p.height);

export const read = defineKernel({
  id: 'image.read',
  version: '1.0.0',
  title: 'Read YUV frame',
  category: 'Image',
  description: 'A synthetic YUV 4:2:0 video frame per iteration: full-size luma y, half-size chroma u and v (a stand-in for a camera or file reader).',
  params: { ...size },
  outputs: [
    { name: 'y', description: 'Luma, width x height', type: plane },
    { name: 'u', description: 'Chroma Cb, ceil(width/2) x ceil(height/2)', type: chromaPlane },
    { name: 'v', description: 'Chroma Cr, ceil(width/2) x ceil(height/2)', type: chromaPlane },
  ],
  cost: (p) => ({ flops: px(p) * 6, bytes: px(p) * 6 }),
  cpu: ({ params, iteration, outputs }) => {
    const planes = readPlanes(Number(params.width), Number(params.height), iteration);
    (outputs.y as Float32Array).set(planes.y);
    (outputs.u as Float32Array).set(planes.u);
    (outputs.v as Float32Array).set(planes.v);
  },
  gpu: {
    // Two entry points, two passes: luma over every pixel, chroma over the half-size planes.
    source: /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> y: array<f32>;
@group(0) @binding(1) var<storage, read_write> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> v: array<f32>;
@group(0) @binding(3) var<uniform> info: vec4<u32>; // width, height, iteration
${LINEAR_ID}
@compute @workgroup_size(64)
fn luma(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = linear_id(gid, nwg);
  if (k >= info.x * info.y) { return; }
  let i = k % info.x;
  let j = k / info.x;
  y[k] = f32(((i * 7u + j * 13u + info.z * 3u) & 255u) + ((i * j) & 15u)) / 256.0;
}
@compute @workgroup_size(64)
fn chroma(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let cw = (info.x + 1u) / 2u;
  let ch = (info.y + 1u) / 2u;
  let k = linear_id(gid, nwg);
  if (k >= cw * ch) { return; }
  let i = k % cw;
  let j = k / cw;
  u[k] = f32((i + 2u * j + info.z) & 63u) / 256.0;
  v[k] = f32((3u * i + j + 5u * info.z) & 63u) / 256.0;
}`,
    passes: [
      { entry: 'luma', threads: px },
      { entry: 'chroma', threads: (p) => chroma(Number(p.width)) * chroma(Number(p.height)) },
    ],
    uniforms: (p, iteration) => [
      ['u', Number(p.width)],
      ['u', Number(p.height)],
      ['u', iteration],
    ],
  },
});

export const sobelKernel = defineKernel({
  id: 'image.sobel',
  version: '1.0.0',
  title: 'Sobel gradients',
  category: 'Image',
  description: 'The 3x3 Sobel operator, border pixels repeated: horizontal gradient gx and vertical gradient gy.',
  params: { ...size },
  inputs: [{ name: 'in', description: 'A grey image', type: plane }],
  outputs: [
    { name: 'gx', description: 'd/dx', type: plane },
    { name: 'gy', description: 'd/dy', type: plane },
  ],
  cost: (p) => ({ flops: px(p) * 22, bytes: px(p) * 12 }),
  cpu: ({ params, inputs, outputs }) =>
    sobel(inputs.in as Float32Array, Number(params.width), Number(params.height), outputs.gx as Float32Array, outputs.gy as Float32Array),
  gpu: {
    source: /* wgsl */ `
@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> gx: array<f32>;
@group(0) @binding(2) var<storage, read_write> gy: array<f32>;
@group(0) @binding(3) var<uniform> info: vec4<u32>; // width, height
fn at(i: i32, j: i32) -> f32 {
  let x = clamp(i, 0, i32(info.x) - 1);
  let y = clamp(j, 0, i32(info.y) - 1);
  return src[u32(y) * info.x + u32(x)];
}
@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= info.x || gid.y >= info.y) { return; }
  let i = i32(gid.x);
  let j = i32(gid.y);
  let k = gid.y * info.x + gid.x;
  gx[k] = ((at(i + 1, j - 1) - at(i - 1, j - 1)) + 2.0 * (at(i + 1, j) - at(i - 1, j))) + (at(i + 1, j + 1) - at(i - 1, j + 1));
  gy[k] = ((at(i - 1, j + 1) - at(i - 1, j - 1)) + 2.0 * (at(i, j + 1) - at(i, j - 1))) + (at(i + 1, j + 1) - at(i + 1, j - 1));
}`,
    passes: [{ workgroups: (p) => [Math.ceil(Number(p.width) / 8), Math.ceil(Number(p.height) / 8), 1] }],
    uniforms: (p) => [
      ['u', Number(p.width)],
      ['u', Number(p.height)],
    ],
  },
});

export const magnitudeKernel = defineKernel({
  id: 'image.magnitude',
  version: '1.0.0',
  title: 'Gradient magnitude',
  category: 'Image',
  description: 'sqrt(gx^2 + gy^2) per pixel.',
  params: { ...size },
  inputs: [
    { name: 'gx', type: plane },
    { name: 'gy', type: plane },
  ],
  outputs: [{ name: 'out', type: plane }],
  cost: (p) => ({ flops: px(p) * 4, bytes: px(p) * 12 }),
  cpu: ({ inputs, outputs }) => magnitude(inputs.gx as Float32Array, inputs.gy as Float32Array, outputs.out as Float32Array),
  gpu: {
    source: /* wgsl */ `
@group(0) @binding(0) var<storage, read> gx: array<f32>;
@group(0) @binding(1) var<storage, read> gy: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> info: vec4<u32>; // pixels
${LINEAR_ID}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let k = linear_id(gid, nwg);
  if (k >= info.x) { return; }
  out[k] = sqrt(gx[k] * gx[k] + gy[k] * gy[k]);
}`,
    passes: [{ threads: px }],
    uniforms: (p) => [['u', px(p)]],
  },
});

/** Input i of the display: an image of its own size (`sizes`: "WxH,WxH,..."; default: the node's width x height). */
function inputSize(p: Params, i: number): [number, number] {
  const given = String(p.sizes ?? '')
    .split(',')
    [i]?.trim();
  const m = given ? /^(\d+)x(\d+)$/.exec(given) : null;
  if (given && !m) throw new Error(`sizes: "${given}" is not WxH`);
  return m ? [Number(m[1]), Number(m[2])] : [Number(p.width), Number(p.height)];
}

export const display = defineKernel({
  id: 'image.display',
  version: '1.0.0',
  title: 'Display',
  category: 'Image',
  description:
    "Shows several images side by side (a sink). With check 'sobel' it recomputes what a read -> sobel -> magnitude pipeline gives at each iteration and fails the run on a difference beyond tolerance: in0 = magnitude, in1 = u, in2 = v.",
  params: {
    ...size,
    inputs: { type: 'int', default: 3, min: 1, max: 8, unit: 'ports', description: 'Number of images shown (in0, in1, ...)' },
    sizes: { type: 'string', default: '', description: 'Size of each input, "WxH,WxH,..."; an input left out is width x height' },
    check: {
      type: 'enum',
      default: 'none',
      values: ['none', 'sobel'],
      description: "What to check the inputs against ('sobel': the read -> sobel -> magnitude pipeline's result)",
    },
    tolerance: { type: 'float', default: 1e-6, min: 0, description: 'Largest accepted |got - want| / max(1, |want|)' },
  },
  inputs: [
    {
      name: 'in',
      repeat: 'inputs',
      description: 'An image',
      type: (p, i = 0) => {
        const [w, h] = inputSize(p, i);
        return { kind: 'image', element: 'f32', shape: [h, w] };
      },
    },
  ],
  cost: (p) => ({ flops: px(p) * Number(p.inputs), bytes: px(p) * 4 * Number(p.inputs) }),
  cpu: ({ params, iteration, inputs }) => {
    if (params.check !== 'sobel') return;
    const w = Number(params.width);
    const h = Number(params.height);
    const planes = readPlanes(w, h, iteration);
    const gx = new Float32Array(w * h);
    const gy = new Float32Array(w * h);
    sobel(planes.y, w, h, gx, gy);
    const mag = new Float32Array(w * h);
    magnitude(gx, gy, mag);
    const tol = Number(params.tolerance);
    const wants: [string, Float32Array][] = [
      ['in0', mag],
      ['in1', planes.u],
      ['in2', planes.v],
    ];
    for (const [port, want] of wants) {
      const got = inputs[port] as Float32Array | undefined;
      if (!got) return { ok: false, message: `image.display: check 'sobel' needs ${port}` };
      for (let i = 0; i < want.length; i++) {
        const err = Math.abs(got[i] - want[i]) / Math.max(1, Math.abs(want[i]));
        if (!(err <= tol))
          return {
            ok: false,
            message: `iteration ${iteration}: ${port}[${i}] is ${got[i]}, expected ${want[i]} (tolerance ${tol})`,
            values: { iteration, index: i },
          };
      }
    }
    return { ok: true };
  },
});

export default [read, sobelKernel, magnitudeKernel, display];
