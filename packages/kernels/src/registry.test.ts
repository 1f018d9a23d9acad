import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataTypeBytes, getKernel, listKernels, withDefaults } from './registry.js';
import { portsFor } from './definition.js';
import { KernelError } from './types.js';
import { IO_READ, IO_WRITE } from './io/spec.js';
import { createPipeline, storageBuffer } from './gpu/pipeline.js';
import { createTestDevice, type TestDevice } from './gpu/node-device.js';

describe('the kernel registry', () => {
  it('rejects an unregistered id with a KernelError, not a crash', () => {
    expect(() => getKernel('matrix.nope')).toThrow(KernelError);
    expect(() => getKernel('matrix.nope')).toThrow('kernel "matrix.nope": is not registered');
  });

  it('gives every kernel ports, params with defaults, a cost, a CPU twin and WGSL (io: files, on the CPU only)', () => {
    for (const k of listKernels().map((s) => getKernel(s.id))) {
      expect(k.id).toMatch(/^[a-z][a-z0-9]*\.[a-z-]+$/);
      expect(k.title && k.category && k.description).toBeTruthy();
      if (k.id === IO_READ || k.id === IO_WRITE) expect(k.gpu, k.id).toBeUndefined();
      else expect(k.gpu, k.id).toBeDefined();
      const defaults = Object.fromEntries(Object.entries(k.params).map(([n, s]) => [n, s.default]));
      for (const port of [...k.inputs, ...k.outputs])
        expect(
          port.type(defaults).shape.every((d) => Number.isInteger(d) && d > 0),
          `${k.id}.${port.name}`,
        ).toBe(true);
      const c = k.cost(defaults);
      expect(c.bytes).toBeGreaterThan(0);
      expect(c.flops).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('WGSL compile errors', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('surface as a KernelError naming the kernel and the module', async () => {
    const broken = '@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }';
    const err = await createPipeline(t.device, 'granulometry.openings', 'erode', broken).catch((e) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err.kernel).toBe('granulometry.openings');
    expect(err.message).toMatch(/^kernel "granulometry.openings": WGSL module "erode" does not compile: .*undefined_thing/);
  });

  it('names the kernel for a module that parses but fails pipeline validation', async () => {
    const noEntry = '@compute @workgroup_size(1) fn other() {}';
    const err = await createPipeline(t.device, 'matrix.add', 'add', noEntry).catch((e) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err.message).toMatch(/^kernel "matrix.add": WGSL module "add" is invalid/);
  });

  it('refuses a module binding more storage buffers than the device allows, naming the kernel', async () => {
    const n = t.device.limits.maxStorageBuffersPerShaderStage + 1;
    const decls = Array.from({ length: n }, (_, i) => `@group(0) @binding(${i}) var<storage, read_write> b${i}: array<f32>;`).join('\n');
    const uses = Array.from({ length: n }, (_, i) => `b${i}[0] = 1.0;`).join(' ');
    const err = await createPipeline(t.device, 'saliency.fuse', 'fuse', `${decls}\n@compute @workgroup_size(1) fn main() { ${uses} }`).catch((e) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err.message).toMatch(new RegExp(`saliency.fuse.*binds ${n} storage buffers; this device allows ${n - 1}`));
  });

  it('every registered kernel prepares with its default params scaled down and records exactly the dispatches it declares', async () => {
    // The io kernels read and write files, on the CPU only (no WGSL: the test above says so).
    for (const k of listKernels()
      .map((s) => getKernel(s.id))
      .filter((k) => k.id !== IO_READ && k.id !== IO_WRITE)) {
      const small = withDefaults(
        k,
        Object.fromEntries(
          Object.entries(k.params).map(([n, s]) => [
            n,
            typeof s.default === 'number' && ['elements', 'pixels', 'voxels'].includes(s.unit ?? '') ? Math.min(Number(s.default), 32) : s.default,
          ]),
        ),
      );
      const exec = await k.gpu!.prepare(t.device, small);
      const buffers = (ports: typeof k.inputs) => Object.fromEntries(ports.map((p) => [p.name, storageBuffer(t.device, dataTypeBytes(p.type(small)))]));
      const ports = portsFor(k, small);
      const firing = { iteration: 0, inputs: buffers(ports.inputs), outputs: buffers(ports.outputs) };
      // record what encode does through a wrapped encoder: module (pipeline label) and workgroups
      const seen: string[] = [];
      const real = t.device.createCommandEncoder();
      const encoder = new Proxy(real, {
        get(target, prop) {
          if (prop === 'beginComputePass') {
            return (d?: GPUComputePassDescriptor) => {
              const pass = target.beginComputePass(d);
              let module = '';
              return new Proxy(pass, {
                get(pt, pp) {
                  if (pp === 'setPipeline') return (pl: GPUComputePipeline) => ((module = pl.label.split('/')[1]), pt.setPipeline(pl));
                  if (pp === 'dispatchWorkgroups') return (x: number, y = 1, z = 1) => (seen.push(`${module} ${x}x${y}x${z}`), pt.dispatchWorkgroups(x, y, z));
                  const v = Reflect.get(pt, pp);
                  return typeof v === 'function' ? v.bind(pt) : v;
                },
              });
            };
          }
          const v = Reflect.get(target, prop);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      exec.encode(encoder, firing);
      t.device.queue.submit([real.finish()]);
      await t.device.queue.onSubmittedWorkDone();
      const declared = (k.gpu!.dispatches?.(small) ?? []).flatMap((d) => Array(d.count ?? 1).fill(`${d.module} ${d.workgroups.join('x')}`));
      expect(seen.sort(), k.id).toEqual(declared.sort());
      for (const d of k.gpu!.dispatches?.(small) ?? []) {
        expect(Object.keys(k.gpu!.wgsl), k.id).toContain(d.module);
        expect(Math.max(...d.workgroups), k.id).toBeLessThanOrEqual(65535);
      }
      exec.destroy();
      for (const b of [...Object.values(firing.inputs), ...Object.values(firing.outputs)]) b.destroy();
    }
  });
});
