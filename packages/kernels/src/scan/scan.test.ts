import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu, type TypedArray } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { kernelManifest, portsFor } from '../definition.js';
import { KernelError, type Params } from '../types.js';
import { MULMOD_PRIME } from './index.js';

// The built-in scan operators in every mode, CPU twin and WGSL on the llvmpipe adapter.
// Elements are [lo, hi, payload...]; the empty range [1, 0] is the symbolic identity.

const P = BigInt(MULMOD_PRIME);
const EMPTY: [number, number] = [1, 0];

/** Elements from [lo, hi] ranges and payloads (W words each) as one u32 token. */
function token(ranges: [number, number][], payloads: number[][], W: number): Uint32Array {
  const out = new Uint32Array(ranges.length * (2 + W));
  ranges.forEach(([lo, hi], j) => {
    out[j * (2 + W)] = lo;
    out[j * (2 + W) + 1] = hi;
    out.set(payloads[j] ?? [], j * (2 + W) + 2);
  });
  return out;
}

/** The [lo, hi] of each element of a token. */
function rangesOf(t: TypedArray, W: number): [number, number][] {
  const out: [number, number][] = [];
  for (let j = 0; j < t.length / (2 + W); j++) out.push([t[j * (2 + W)], t[j * (2 + W) + 1]]);
  return out;
}

const payloadOf = (t: TypedArray, W: number, j: number) => Array.from(t.subarray(j * (2 + W) + 2, (j + 1) * (2 + W)));

/** x_j of the known answer, embedded in the top-left of a k x k identity (k >= 3). */
function knownX(j: number, k: number): number[] {
  const m: number[] = Array.from({ length: k * k }, (_, e) => (Math.floor(e / k) === e % k ? 1 : 0));
  m[0 * k + 1] = 1;
  m[1 * k + 2] = j % MULMOD_PRIME;
  return m;
}

/** The known prefix of x_1 ... x_n (x_n ... x_1 when swapped): [[1, n, C], [0, 1, n(n+1)/2], [0, 0, 1]], C = (n^3 - n)/3 (or /6) mod P. */
function knownPrefix(n: number, k: number, swapped = false): number[] {
  const m = knownX(0, k);
  const N = BigInt(n);
  m[1] = Number(N % P);
  m[2] = Number(((N ** 3n - N) / (swapped ? 6n : 3n)) % P);
  m[k + 2] = Number(((N * (N + 1n)) / 2n) % P);
  return m;
}

/** Seeded random residues (and a few words past P, which the operator reduces first). */
function randomMatrices(n: number, k: number, seed: number): number[][] {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0), s);
  return Array.from({ length: n }, () => Array.from({ length: k * k }, () => (next() % 10 === 0 ? next() : next() % MULMOD_PRIME)));
}

const single = (j: number): [number, number] => [j, j];

describe('mat.mulmod and scan.range on the CPU twin', () => {
  it('the serial scan of x_1..x_n has the known prefix for k = 3 and 16, n = k and n = 1000; swapped operands give (n^3 - n)/6', () => {
    const op = getKernel('mat.mulmod');
    for (const k of [3, 16])
      for (const n of [k, 1000]) {
        const W = k * k;
        const xs = Array.from({ length: n }, (_, j) => knownX(j + 1, k));
        const ranges = xs.map((_, j) => single(j));
        const r = runCpu(op, { k, mode: 'scan', count: n }, { in: token(ranges, xs, W) });
        for (const i of [0, 1, n - 1]) expect(payloadOf(r.outputs.out, W, i), `k ${k} n ${n} prefix ${i + 1}`).toEqual(knownPrefix(i + 1, k));
        expect(rangesOf(r.outputs.out, W)).toEqual(ranges.map(([, hi]) => [0, hi]));
        expect(payloadOf(r.outputs.total, W, 0)).toEqual(knownPrefix(n, k));
        expect(rangesOf(r.outputs.total, W)).toEqual([[0, n - 1]]);
        // Element j holds x_{n-j}: the left-to-right product is x_n ... x_1.
        const swapped = runCpu(op, { k, mode: 'reduce', count: n }, { in: token(ranges, [...xs].reverse(), W) });
        expect(payloadOf(swapped.outputs.total, W, 0)).toEqual(knownPrefix(n, k, true));
      }
  });

  it('apply combines adjacent ranges, left times right, and refuses others naming both ranges', () => {
    const op = getKernel('mat.mulmod');
    const [a, b] = [knownX(1, 3), knownX(2, 3)];
    const r = runCpu(op, { k: 3, mode: 'apply' }, { a: token([[0, 4]], [a], 9), b: token([[5, 9]], [b], 9) });
    expect(rangesOf(r.outputs.out, 9)).toEqual([[0, 9]]);
    expect(payloadOf(r.outputs.out, 9, 0)).toEqual(knownPrefix(2, 3));
    const fire = () => runCpu(op, { k: 3, mode: 'apply' }, { a: token([[0, 4]], [a], 9), b: token([[6, 9]], [b], 9) });
    expect(fire).toThrow(KernelError);
    expect(fire).toThrow(
      'kernel "mat.mulmod": mode "apply", element 0 of "b": [0, 4] (+) [6, 9] is refused: the ranges are not adjacent (left.hi + 1 must equal right.lo)',
    );
    // Swapped operands are refused too: a network never swaps.
    expect(() => runCpu(op, { k: 3, mode: 'apply' }, { a: token([[5, 9]], [b], 9), b: token([[0, 4]], [a], 9) })).toThrow('[5, 9] (+) [0, 4] is refused');
  });

  it('scan refuses a block whose elements are not adjacent, naming the element and the ranges', () => {
    const fire = () =>
      runCpu(
        getKernel('scan.range'),
        { mode: 'scan', count: 4 },
        {
          in: token(
            [
              [0, 1],
              [2, 2],
              [4, 4],
              [5, 5],
            ],
            [],
            0,
          ),
        },
      );
    expect(fire).toThrow('kernel "scan.range": mode "scan", element 2 of "in": [0, 2] (+) [4, 4] is refused');
  });

  it('propagate with an identity prefix passes the block through; exclusive starts with the identity', () => {
    const op = getKernel('mat.mulmod');
    const xs = randomMatrices(5, 3, 7);
    const block = token(
      xs.map((_, j) => [10, 10 + j]),
      xs,
      9,
    );
    const through = runCpu(op, { k: 3, mode: 'propagate', count: 5 }, { prefix: token([EMPTY], [[9, 9, 9, 9, 9, 9, 9, 9, 9]], 9), block });
    expect(Array.from(through.outputs.out)).toEqual(Array.from(block));
    const input = token(
      xs.map((_, j) => single(10 + j)),
      xs,
      9,
    );
    const ex = runCpu(op, { k: 3, mode: 'exclusive', count: 5 }, { in: input });
    const inc = runCpu(op, { k: 3, mode: 'scan', count: 5 }, { in: input });
    expect(rangesOf(ex.outputs.out, 9)[0]).toEqual(EMPTY);
    expect(payloadOf(ex.outputs.out, 9, 0)).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    expect(Array.from(ex.outputs.out.subarray(11))).toEqual(Array.from(inc.outputs.out.subarray(0, 4 * 11)));
    expect(Array.from(ex.outputs.total)).toEqual(Array.from(inc.outputs.total));
  });

  it('carries the operator in its spec and manifest: modes change the ports, cost is applications x one', () => {
    const op = getKernel('mat.mulmod');
    expect(kernelManifest(op).binary).toEqual({ associativity: 'exact', commutative: false, identity: true, context: [], words: 9 });
    const names = (mode: string) => {
      const ports = portsFor(op, { k: 3, count: 8, mode });
      return [ports.inputs.map((p) => `${p.name}:${p.type({}).shape.join('x')}`), ports.outputs.map((p) => `${p.name}:${p.type({}).shape.join('x')}`)];
    };
    expect(names('apply')).toEqual([['a:1x11', 'b:1x11'], ['out:1x11']]);
    expect(names('scan')).toEqual([['in:8x11'], ['out:8x11', 'total:1x11']]);
    expect(names('reduce')).toEqual([['in:8x11'], ['total:1x11']]);
    expect(names('propagate')).toEqual([['prefix:1x11', 'block:8x11'], ['out:8x11']]);
    expect(names('exclusive')).toEqual([['in:8x11'], ['out:8x11', 'total:1x11']]);
    expect(portsFor(op, { k: 3, count: 8, mode: 'scan' }).inputs[0].type({})).toEqual({ kind: 'scan-element', element: 'u32', shape: [8, 11] });
    const one = op.cost({ k: 3, count: 8, mode: 'apply' });
    expect(op.cost({ k: 3, count: 8, mode: 'scan' })).toEqual({ flops: 7 * one.flops, bytes: 7 * one.bytes });
    expect(op.cost({ k: 3, count: 8, mode: 'propagate' })).toEqual({ flops: 8 * one.flops, bytes: 8 * one.bytes });
    expect(() => portsFor(op, { k: 3, count: 8, mode: 'sideways' })).toThrow('param mode: "sideways" is not one of apply, scan, reduce, propagate, exclusive');
  });

  it('fast-check: scan.range gives exact ranges in every mode for any block of m <= 300 elements from any start', () => {
    const op = getKernel('scan.range');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (m, start, before) => {
        const ranges = Array.from({ length: m }, (_, j): [number, number] => [start + j, start + j]);
        const input = token(ranges, [], 0);
        const inclusive = ranges.map(([, hi]): [number, number] => [start, hi]);
        expect(rangesOf(runCpu(op, { mode: 'scan', count: m }, { in: input }).outputs.out, 0)).toEqual(inclusive);
        expect(rangesOf(runCpu(op, { mode: 'reduce', count: m }, { in: input }).outputs.total, 0)).toEqual([[start, start + m - 1]]);
        const ex = runCpu(op, { mode: 'exclusive', count: m }, { in: input });
        expect(rangesOf(ex.outputs.out, 0)).toEqual([EMPTY, ...inclusive.slice(0, -1)]);
        expect(rangesOf(ex.outputs.total, 0)).toEqual([[start, start + m - 1]]);
        // The block's own inclusive scan after a prefix covering [start - before, start - 1] (or the identity).
        const prefix: [number, number] = before && start >= before ? [start - before, start - 1] : EMPTY;
        const block = token(inclusive, [], 0);
        const prop = runCpu(op, { mode: 'propagate', count: m }, { prefix: token([prefix], [], 0), block });
        expect(rangesOf(prop.outputs.out, 0)).toEqual(inclusive.map(([lo, hi]): [number, number] => [prefix[0] <= prefix[1] ? prefix[0] : lo, hi]));
      }),
      { numRuns: 200 },
    );
  });
});

describe('mat.mulmod and scan.range: the WGSL equals the CPU twin', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  /** Fires on the GPU and the twin; the outputs bit-equal, the GPU report ok. */
  async function same(id: string, params: Params, inputs: Record<string, Uint32Array>) {
    const k = getKernel(id);
    const run = await GpuRunner.create(t.device, k, params);
    try {
      const gpu = await run.fire(inputs);
      const cpu = runCpu(k, params, inputs);
      expect(gpu.report, `${id} ${JSON.stringify(params)}`).toEqual({ ok: true });
      for (const [port, v] of Object.entries(cpu.outputs))
        expect(Array.from(gpu.outputs[port]), `${id} ${JSON.stringify(params)} ${port}`).toEqual(Array.from(v));
      return gpu.outputs;
    } finally {
      run.destroy();
    }
  }

  it('every mode, k = 3 and 16, with random matrices (some words past P) and empty ranges inside a block', async () => {
    for (const k of [3, 16]) {
      const W = k * k;
      const m = 37;
      const xs = randomMatrices(m, k, k);
      // Elements 5 and 6 are empty (padding): they fire nothing.
      const ranges = xs.map((_, j): [number, number] => (j === 5 || j === 6 ? EMPTY : [100 + j - (j > 6 ? 2 : 0), 100 + j - (j > 6 ? 2 : 0)]));
      const input = token(ranges, xs, W);
      await same('mat.mulmod', { k, mode: 'apply' }, { a: token([[3, 99]], [xs[0]], W), b: token([[100, 100]], [xs[1]], W) });
      const scanned = await same('mat.mulmod', { k, mode: 'scan', count: m }, { in: input });
      await same('mat.mulmod', { k, mode: 'reduce', count: m }, { in: input });
      await same('mat.mulmod', { k, mode: 'exclusive', count: m }, { in: input });
      const prefix = token([[0, 99]], [xs[2]], W);
      await same('mat.mulmod', { k, mode: 'propagate', count: m }, { prefix, block: scanned.out as Uint32Array });
      await same('mat.mulmod', { k, mode: 'propagate', count: m }, { prefix: token([EMPTY], [xs[3]], W), block: scanned.out as Uint32Array });
    }
  }, 120_000);

  it('the known answer on the GPU: k = 3 and 16, n = k and a larger n, and swapped operands', async () => {
    for (const [k, n] of [
      [3, 3],
      [3, 1000],
      [16, 16],
      [16, 200],
    ]) {
      const W = k * k;
      const xs = Array.from({ length: n }, (_, j) => knownX(j + 1, k));
      const ranges = xs.map((_, j) => single(j));
      const out = await same('mat.mulmod', { k, mode: 'scan', count: n }, { in: token(ranges, xs, W) });
      expect(payloadOf(out.total, W, 0), `k ${k} n ${n}`).toEqual(knownPrefix(n, k));
      const swapped = await same('mat.mulmod', { k, mode: 'reduce', count: n }, { in: token(ranges, [...xs].reverse(), W) });
      expect(payloadOf(swapped.total, W, 0)).toEqual(knownPrefix(n, k, true));
    }
  }, 120_000);

  it('scan.range in every mode, with an identity prefix in propagate', async () => {
    const m = 300;
    const ranges = Array.from({ length: m }, (_, j) => single(50 + j));
    const out = await same('scan.range', { mode: 'scan', count: m }, { in: token(ranges, [], 0) });
    expect(rangesOf(out.out, 0)[m - 1]).toEqual([50, 50 + m - 1]);
    await same('scan.range', { mode: 'reduce', count: m }, { in: token(ranges, [], 0) });
    const ex = await same('scan.range', { mode: 'exclusive', count: m }, { in: token(ranges, [], 0) });
    expect(rangesOf(ex.out, 0).slice(0, 2)).toEqual([EMPTY, [50, 50]]);
    const through = await same('scan.range', { mode: 'propagate', count: m }, { prefix: token([EMPTY], [], 0), block: out.out as Uint32Array });
    expect(Array.from(through.out)).toEqual(Array.from(out.out));
    const after = await same('scan.range', { mode: 'propagate', count: m }, { prefix: token([[0, 49]], [], 0), block: out.out as Uint32Array });
    expect(rangesOf(after.out, 0).every(([lo]) => lo === 0)).toBe(true);
  }, 60_000);

  it('a range violation is a failed report naming the mode, the element and both ranges, as the twin says', async () => {
    const cases: [string, Params, Record<string, Uint32Array>, string][] = [
      [
        'mat.mulmod',
        { k: 3, mode: 'apply' },
        { a: token([[0, 4]], [knownX(1, 3)], 9), b: token([[6, 9]], [knownX(2, 3)], 9) },
        'mode "apply", element 0 of "b": [0, 4] (+) [6, 9] is refused',
      ],
      [
        'scan.range',
        { mode: 'scan', count: 4 },
        {
          in: token(
            [
              [0, 1],
              [2, 2],
              [4, 4],
              [5, 5],
            ],
            [],
            0,
          ),
        },
        'mode "scan", element 2 of "in": [0, 2] (+) [4, 4] is refused',
      ],
      [
        'scan.range',
        { mode: 'reduce', count: 3 },
        {
          in: token(
            [
              [3, 3],
              [2, 2],
              [4, 4],
            ],
            [],
            0,
          ),
        },
        'mode "reduce", element 1 of "in": [3, 3] (+) [2, 2] is refused',
      ],
      [
        'scan.range',
        { mode: 'exclusive', count: 3 },
        {
          in: token(
            [
              [0, 0],
              [1, 1],
              [3, 3],
            ],
            [],
            0,
          ),
        },
        'mode "exclusive", element 2 of "in": [0, 1] (+) [3, 3] is refused',
      ],
      [
        'scan.range',
        { mode: 'propagate', count: 5 },
        {
          prefix: token([[0, 9]], [], 0),
          block: token(
            [
              [10, 10],
              [10, 11],
              [11, 12],
              [10, 13],
              [12, 14],
            ],
            [],
            0,
          ),
        },
        'mode "propagate", element 2 of "block": [0, 9] (+) [11, 12] is refused',
      ],
    ];
    for (const [id, params, inputs, message] of cases) {
      const k = getKernel(id);
      expect(() => runCpu(k, params, inputs)).toThrow(message);
      const run = await GpuRunner.create(t.device, k, params);
      const { report } = await run.fire(inputs);
      run.destroy();
      expect(report?.ok, message).toBe(false);
      expect(report?.message).toBe(`kernel "${id}": ${message}: the ranges are not adjacent (left.hi + 1 must equal right.lo)`);
    }
  }, 60_000);
});
