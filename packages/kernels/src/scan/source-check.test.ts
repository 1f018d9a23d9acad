import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { GpuRunner, runCpu, type TypedArray } from '../gpu/harness.js';
import { createTestDevice, type TestDevice } from '../gpu/node-device.js';
import { portsFor } from '../definition.js';
import type { Params } from '../types.js';
import { MULMOD_PRIME } from './spec.js';
import { prefixEntries } from './known.js';

// scan.source and scan.check: the known answer (independently, in BigInt), the twins through a
// real scan of the operator, and the WGSL equal to the twins on the llvmpipe adapter.

const P = BigInt(MULMOD_PRIME);
const u32 = (t: TypedArray) => t as Uint32Array;

/** The operator's own scan (mode scan, or exclusive) of scan.source's elements: out and total. */
function scanned(params: Params, output: 'inclusive' | 'exclusive') {
  const src = runCpu(getKernel('scan.source'), params, {}).outputs.out;
  const op = String(params.operator);
  const r = runCpu(
    getKernel(op),
    { ...(op === 'mat.mulmod' ? { k: params.k } : {}), mode: output === 'exclusive' ? 'exclusive' : 'scan', count: params.count },
    { in: src },
  );
  return { source: u32(src), out: u32(r.outputs.out), total: u32(r.outputs.total) };
}

const CASES: Params[] = [
  { operator: 'scan.range', count: 1 },
  { operator: 'scan.range', count: 77 },
  { operator: 'mat.mulmod', k: 3, count: 64 },
  { operator: 'mat.mulmod', k: 3, count: 1 },
  { operator: 'mat.mulmod', k: 16, count: 37 },
];

describe('the known answer', () => {
  it('prefixEntries(n) is M_1 ... M_n: n, (n^3 - n)/3 and n(n+1)/2 mod 65521, also for n past the modulus', () => {
    for (const n of [0, 1, 2, 3, 64, 1000, 65520, 65521, 65522, 65535, 65536]) {
      const N = BigInt(n);
      expect(prefixEntries(n), `n ${n}`).toEqual({ n01: Number(N % P), n02: Number(((N ** 3n - N) / 3n) % P), n12: Number(((N * (N + 1n)) / 2n) % P) });
    }
  });

  it('scan.source makes [i, i] and M_(i+1) embedded in the k x k identity', () => {
    const src = u32(runCpu(getKernel('scan.source'), { operator: 'mat.mulmod', k: 4, count: 3 }, {}).outputs.out);
    const E = 2 + 16;
    expect(Array.from(src.subarray(2 * E, 3 * E))).toEqual([2, 2, 1, 1, 0, 0, 0, 1, 3, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    expect(Array.from(u32(runCpu(getKernel('scan.source'), { operator: 'scan.range', count: 3 }, {}).outputs.out))).toEqual([0, 0, 1, 1, 2, 2]);
  });

  it('scan.check has a total input only when asked', () => {
    const names = (p: Params) => {
      const params = { operator: 'mat.mulmod', k: 3, count: 8, output: 'inclusive', ...p };
      return portsFor(getKernel('scan.check'), params).inputs.map((x) => `${x.name}:${x.type(params).shape.join('x')}`);
    };
    expect(names({ total: false })).toEqual(['out:8x11']);
    expect(names({ total: true })).toEqual(['out:8x11', 'total:1x11']);
    const range = { operator: 'scan.range', count: 8, total: true };
    expect(portsFor(getKernel('scan.check'), range).inputs.map((x) => x.type(range).shape.join('x'))).toEqual(['8x2', '1x2']);
  });
});

describe('scan.check on the CPU twin', () => {
  it("passes the operator's own serial scan, inclusive and exclusive, with its total", () => {
    for (const params of CASES)
      for (const output of ['inclusive', 'exclusive'] as const) {
        const { out, total } = scanned(params, output);
        const r = runCpu(getKernel('scan.check'), { ...params, output, total: true }, { out, total }, 5);
        expect(r.report, `${JSON.stringify(params)} ${output}`).toEqual({ ok: true });
      }
  });

  it('names the first bad element, what it holds and what it should: a payload, a range, the total, the exclusive identity', () => {
    const params = { operator: 'mat.mulmod', k: 3, count: 64 };
    const { out, total } = scanned(params, 'inclusive');
    const E = 11;
    const bad = out.slice();
    bad[5 * E + 2 + 2] = 69; // entry (0, 2) of y_5 = M_1 ... M_6: (216 - 6)/3 = 70
    bad[9 * E + 1] = 8;
    expect(runCpu(getKernel('scan.check'), { ...params, output: 'inclusive' }, { out: bad }, 2).report).toMatchObject({
      ok: false,
      message: 'iteration 2: out element 5 holds [0, 5] [[1, 6, 69], [0, 1, 21], [0, 0, 1]], expected [0, 5] [[1, 6, 70], [0, 1, 21], [0, 0, 1]]',
      values: { iteration: 2, port: 'out', index: 5 },
    });
    // (64^3 - 64)/3 = 87360 = 21839 mod 65521; 64 * 65 / 2 = 2080.
    const t = total.slice();
    t[1] = 62;
    expect(runCpu(getKernel('scan.check'), { ...params, output: 'inclusive', total: true }, { out, total: t }).report?.message).toBe(
      'iteration 0: total element 0 holds [0, 62] [[1, 64, 21839], [0, 1, 2080], [0, 0, 1]], expected [0, 63] [[1, 64, 21839], [0, 1, 2080], [0, 0, 1]]',
    );
    // An inclusive result checked as exclusive: element 0 should be the identity on the empty range.
    expect(runCpu(getKernel('scan.check'), { ...params, output: 'exclusive' }, { out }).report?.message).toBe(
      'iteration 0: out element 0 holds [0, 0] [[1, 1, 0], [0, 1, 1], [0, 0, 1]], expected [1, 0] [[1, 0, 0], [0, 1, 0], [0, 0, 1]]',
    );
    const ranges = scanned({ operator: 'scan.range', count: 10 }, 'exclusive').out.slice();
    ranges[2 * 2 + 1] = 7;
    expect(runCpu(getKernel('scan.check'), { operator: 'scan.range', count: 10, output: 'exclusive' }, { out: ranges }).report?.message).toBe(
      'iteration 0: out element 2 holds [0, 7], expected [0, 1]',
    );
  });

  it('a large payload is named by its first wrong entry', () => {
    const params = { operator: 'mat.mulmod', k: 16, count: 20 };
    const { out } = scanned(params, 'inclusive');
    const E = 2 + 256;
    out[3 * E + 2 + 16 + 2] = 0; // entry (1, 2) of y_3: 4 * 5 / 2 = 10
    expect(runCpu(getKernel('scan.check'), { ...params, output: 'inclusive' }, { out }).report?.message).toBe(
      'iteration 0: out element 3 holds [0, 3], expected [0, 3] (entry (1, 2) is 0, expected 10)',
    );
  });
});

describe('scan.source and scan.check: the WGSL equals the twin', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  async function fire(id: string, params: Params, inputs: Record<string, Uint32Array>, iteration = 0) {
    const run = await GpuRunner.create(t.device, getKernel(id), params);
    try {
      return await run.fire(inputs, iteration);
    } finally {
      run.destroy();
    }
  }

  it('scan.source is bit-equal to its twin', async () => {
    for (const params of CASES) {
      const gpu = await fire('scan.source', params, {});
      expect(Array.from(gpu.outputs.out), JSON.stringify(params)).toEqual(Array.from(runCpu(getKernel('scan.source'), params, {}).outputs.out));
    }
  }, 60_000);

  it('scan.check passes what the twin passes and reports each mismatch as the twin does', async () => {
    for (const params of CASES)
      for (const output of ['inclusive', 'exclusive'] as const) {
        const { out, total } = scanned(params, output);
        const p = { ...params, output, total: true };
        expect((await fire('scan.check', p, { out, total }, 3)).report, `${JSON.stringify(params)} ${output}`).toEqual({ ok: true });
        expect((await fire('scan.check', { ...params, output }, { out }, 3)).report).toEqual({ ok: true });
        const E = out.length / Number(params.count);
        // Two bad words: the first element's is reported; then a bad total alone.
        const N = Number(params.count);
        const bad = out.slice();
        bad[(N - 1) * E + E - 1] ^= 1;
        if (N > 2) bad[Math.floor(N / 2) * E] += 1;
        const badTotal = total.slice();
        badTotal[E - 1] ^= 2;
        for (const inputs of [
          { out: bad, total },
          { out, total: badTotal },
        ]) {
          const gpu = (await fire('scan.check', p, inputs, 3)).report;
          const cpu = runCpu(getKernel('scan.check'), p, inputs, 3).report;
          expect(cpu?.ok).toBe(false);
          expect(gpu, `${JSON.stringify(params)} ${output}`).toEqual(cpu);
        }
      }
  }, 120_000);
});
