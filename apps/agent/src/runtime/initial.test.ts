import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BufferId, PeId, HostId, PeProgram } from '@pipeloom/core';
import { gpuFor } from '../devices/discover.js';
import { allocateHost, PeMemory, type BufferInfo } from './memory.js';
import { fillGpu, fillHost, initialRefusal } from './initial.js';

// Delays' initial tokens, filled by hand-built programs (the compiler's side is tested in
// core): constants in each element type, ranges at a view's offset, a source kernel's token on
// its CPU twin, into host slots and into GPU slots through writeBuffer, and the refusals.

const b = (s: string) => s as BufferId;
/** Two buffers sharing one colour's storage (bn_1 at offset 24, a view), two slots; bn_2 of u8 alone. */
function program(kind: 'cpu' | 'gpu', initial: PeProgram['initial']): PeProgram {
  return {
    pe: (kind === 'cpu' ? 'cpu@h0' : 'gpu0@h0') as PeId,
    host: 'h0' as HostId,
    kind,
    allocations: [
      { color: 0, bytes: 56, depth: 2, buffers: [b('bn_0'), b('bn_1')], offsets: [0, 24] },
      { color: 1, bytes: 7, depth: 3, buffers: [b('bn_2')] },
    ],
    phases: [],
    initial,
  };
}
const buffers: BufferInfo = { bn_0: { element: 'f32', bytes: 24 }, bn_1: { element: 'f32', bytes: 32 }, bn_2: { element: 'u8', bytes: 7 } };
/** matrix.produce 4 x 2 makes 32 bytes: bn_1's size. */
const seed = { kernel: 'matrix.produce', params: { width: 4, height: 2 }, port: 'out' };
const fills: PeProgram['initial'] = [
  { buffer: b('bn_0'), slot: 1, value: 1.5 },
  { buffer: b('bn_1'), slot: 0, token: 3, ...seed },
  { buffer: b('bn_1'), slot: 1, offset: 8, bytes: 8, value: -2 },
  { buffer: b('bn_2'), slot: 2, offset: 1, bytes: 5, value: 200 },
];
const f32 = (bytes: Uint8Array) => Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
/** What every slot holds after the fills, storage by storage. */
const expected = {
  colour0: [
    [...Array(6).fill(0), 3, 3, 3, 3, 3, 3, 3, 3],
    [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 0, 0, -2, -2, 0, 0, 0, 0],
  ],
  colour1: [new Array(8).fill(0), new Array(8).fill(0), [0, 200, 200, 200, 200, 200, 0, 0]],
};

/** Range fills (a delay's initial iterations): every slot of bn_2 a constant; bn_1's two slots a source's tokens 5 and 6. */
const ranges: PeProgram['initial'] = [
  { buffer: b('bn_2'), slot: 0, count: 3, value: 9 },
  { buffer: b('bn_1'), slot: 0, count: 2, token: 5, ...seed },
];
const expectedRanges = {
  colour0: [
    [...Array(6).fill(0), ...Array(8).fill(5)],
    [...Array(6).fill(0), ...Array(8).fill(6)],
  ],
  colour1: [
    [...Array(7).fill(9), 0],
    [...Array(7).fill(9), 0],
    [...Array(7).fill(9), 0],
  ],
};

describe('initial tokens in host slots', () => {
  it("fills a range of slots: a constant in each, a source kernel's tokens counted on slot by slot", () => {
    const p = program('cpu', ranges);
    const { storage } = allocateHost([p]);
    fillHost('h0', [p], storage, buffers);
    expect(storage.bn_0.slots.map((s) => f32(new Uint8Array(s)))).toEqual(expectedRanges.colour0);
    expect(storage.bn_2.slots.map((s) => Array.from(new Uint8Array(s)))).toEqual(expectedRanges.colour1);
  });

  it('fills constants, a range of a view and a source kernel token, once, in the storage the PE threads share', () => {
    const p = program('cpu', fills);
    const { storage } = allocateHost([p]);
    fillHost('h0', [p], storage, buffers);
    expect(storage.bn_0.slots.map((s) => f32(new Uint8Array(s)))).toEqual(expected.colour0);
    expect(storage.bn_1.slots).toBe(storage.bn_0.slots);
    expect(storage.bn_2.slots.map((s) => Array.from(new Uint8Array(s)))).toEqual(expected.colour1);
  });

  it('leaves GPU programs to their threads', () => {
    const cpu = program('cpu', []);
    const { storage } = allocateHost([cpu]);
    fillHost('h0', [cpu, program('gpu', fills)], storage, buffers);
    expect(storage.bn_0.slots.every((s) => new Uint8Array(s).every((x) => x === 0))).toBe(true);
  });
});

describe('initial tokens in GPU slots', () => {
  let device: GPUDevice;
  beforeAll(async () => {
    const adapter = await (await gpuFor('opengl')).requestAdapter({ featureLevel: 'compatibility' } as GPURequestAdapterOptions);
    device = await adapter!.requestDevice();
  });
  afterAll(() => device?.destroy());

  async function read(buffer: GPUBuffer): Promise<Uint8Array> {
    const staging = device.createBuffer({ size: buffer.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
    device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = new Uint8Array(staging.getMappedRange().slice(0));
    staging.destroy();
    return out;
  }

  it('writes the same bytes as the host fill, unaligned u8 ranges included, with 4-byte-aligned writes', async () => {
    const p = program('gpu', fills);
    const memory = new PeMemory(p, buffers, device);
    expect(await memory.created).toBeNull();
    await fillGpu('h0', p, memory, buffers, device);
    const colour0 = memory.get('bn_0');
    const colour1 = memory.get('bn_2');
    if (colour0.kind !== 'gpu' || colour1.kind !== 'gpu') throw new Error('not on the GPU');
    expect(await Promise.all(colour0.buffers.map(async (x) => f32(await read(x))))).toEqual(expected.colour0);
    expect(await Promise.all(colour1.buffers.map(async (x) => Array.from(await read(x))))).toEqual(expected.colour1);
    memory.free();
  });

  it('fills a range of slots like the host fill', async () => {
    const p = program('gpu', ranges);
    const memory = new PeMemory(p, buffers, device);
    expect(await memory.created).toBeNull();
    await fillGpu('h0', p, memory, buffers, device);
    const colour0 = memory.get('bn_0');
    const colour1 = memory.get('bn_2');
    if (colour0.kind !== 'gpu' || colour1.kind !== 'gpu') throw new Error('not on the GPU');
    expect(await Promise.all(colour0.buffers.map(async (x) => f32(await read(x))))).toEqual(expectedRanges.colour0);
    expect(await Promise.all(colour1.buffers.map(async (x) => Array.from(await read(x))))).toEqual(expectedRanges.colour1);
    memory.free();
  });

  it('refuses, naming buffer and PE, a fill whose source kernel is missing (checked again where it fills)', async () => {
    const p = program('gpu', [{ buffer: b('bn_1'), slot: 0, kernel: 'acme.nothing' }]);
    const memory = new PeMemory(p, buffers, device);
    await expect(fillGpu('h0', p, memory, buffers, device)).rejects.toThrow(
      'initial of buffer bn_1 (slot 0) on gpu0@h0: agent h0 has no kernel "acme.nothing"',
    );
    memory.free();
  });
});

describe('initial tokens this agent cannot make refuse the deploy', () => {
  const refusal = (fill: Record<string, unknown>, versions?: Record<string, string>) =>
    initialRefusal('h0', [program('cpu', [{ buffer: b('bn_1'), slot: 1, token: 0, ...fill } as never])], buffers, versions);

  it('names the token, the buffer, the slot, the PE and what is wrong', () => {
    expect(refusal(seed)).toBeUndefined();
    expect(refusal({ value: 0 })).toBeUndefined();
    expect(refusal({ ...seed, port: undefined })).toBeUndefined();
    expect(refusal({ kernel: 'acme.nothing' })).toBe(
      'initial token 0 of buffer bn_1 (slot 1) on cpu@h0: agent h0 has no kernel "acme.nothing": start it with --kernels naming the package that defines it',
    );
    expect(refusal({ ...seed, kernel: 'matrix.add' })).toBe(
      'initial token 0 of buffer bn_1 (slot 1) on cpu@h0: kernel "matrix.add" has inputs (a, b); an initial token comes from a source kernel, one without inputs',
    );
    expect(refusal({ ...seed, port: 'result' })).toBe(
      'initial token 0 of buffer bn_1 (slot 1) on cpu@h0: kernel "matrix.produce" has no output "result" (it has out)',
    );
    expect(refusal({ ...seed, params: { width: 5, height: 2 } })).toBe(
      'initial token 0 of buffer bn_1 (slot 1) on cpu@h0: kernel "matrix.produce" gives 40 bytes on port out; the fill holds 32',
    );
    expect(refusal({ ...seed, offset: 8 })).toBe(
      'initial token 0 of buffer bn_1 (slot 1) on cpu@h0: kernel "matrix.produce" gives 32 bytes on port out; the fill holds 24',
    );
    expect(refusal({ kernel: 'custom.wgsl' })).toMatch(/^initial token 0 of buffer bn_1 \(slot 1\) on cpu@h0: kernel "custom.wgsl" has no CPU twin/);
    expect(refusal(seed, { 'matrix.produce': '2.0.0' })).toMatch(
      /^initial token 0 of buffer bn_1 \(slot 1\) on cpu@h0: agent h0 has kernel "matrix.produce" 1\.\d+\.\d+, but the document was compiled against 2.0.0/,
    );
  });

  it('throws the same where it fills, never crashing the agent', () => {
    const p = program('cpu', [{ buffer: b('bn_1'), slot: 0, kernel: 'matrix.add' }]);
    const { storage } = allocateHost([p]);
    expect(() => fillHost('h0', [p], storage, buffers)).toThrow('initial of buffer bn_1 (slot 0) on cpu@h0: kernel "matrix.add" has inputs (a, b)');
  });
});
