import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineBinaryKernel, type BinaryKernelDefinition } from './define-binary.js';
import { KernelDefinitionError, formatKernelProblem, kernelManifest, portsFor, specFromManifest } from './definition.js';
import { GpuRunner, runCpu } from './gpu/harness.js';
import { createTestDevice, type TestDevice } from './gpu/node-device.js';
import { KernelError, type Params } from './types.js';

// An operator written as a package would: affine maps x -> m x + c mod 2^32 on `n` lanes,
// composed as (f (+) g)(x) = g(f(x)) (apply f first), each lane's constant offset by a
// context port `shift` (what a replicated frames input looks like to the operator).
const AFFINE_WGSL = /* wgsl */ `
fn op_apply(lane: u32, lanes: u32) {
  for (var i = lane; i < OP_W / 2u; i += lanes) {
    // g(f(x)) = mg (mf x + cf) + cg + shift[i]
    op_out[2u * i] = op_b[2u * i] * op_a[2u * i];
    op_out[2u * i + 1u] = op_b[2u * i] * op_a[2u * i + 1u] + op_b[2u * i + 1u] + shift[i];
  }
}`;
const affine: BinaryKernelDefinition = {
  id: 'test.affine',
  version: '1.0.0',
  description: 'Composes per-lane affine maps mod 2^32 (apply the left first), each constant offset by shift[lane].',
  params: { n: { type: 'int', default: 4, min: 1, max: 64, description: 'lanes' } },
  words: (p) => 2 * Number(p.n),
  binary: {
    associativity: 'none',
    commutative: false,
    identity: (p) => Array.from({ length: 2 * Number(p.n) }, (_, i) => (i % 2 === 0 ? 1 : 0)),
    context: [
      { name: 'shift', description: "added to each lane's constant per application", type: (p) => ({ kind: 'vector', element: 'u32', shape: [Number(p.n)] }) },
    ],
  },
  apply: {
    cpu: (a, b, out, params, context) => {
      const shift = context.shift as Uint32Array;
      for (let i = 0; i < Number(params.n); i++) {
        out[2 * i] = Math.imul(b[2 * i], a[2 * i]);
        out[2 * i + 1] = Math.imul(b[2 * i], a[2 * i + 1]) + b[2 * i + 1] + shift[i];
      }
    },
    wgsl: AFFINE_WGSL,
  },
  cost: (p) => ({ flops: 4 * Number(p.n), bytes: 24 * Number(p.n) }),
};

/** The problems a definition is refused with, as the CLI prints them. */
function refused(def: unknown): string[] {
  try {
    defineBinaryKernel(def as BinaryKernelDefinition);
  } catch (e) {
    if (e instanceof KernelDefinitionError) return e.problems.map(formatKernelProblem);
    throw e;
  }
  throw new Error('was accepted');
}

describe('defineBinaryKernel', () => {
  it("derives one kernel with mode and count, context ports after the mode's inputs, the operator in its manifest", () => {
    const k = defineBinaryKernel(affine);
    expect(Object.keys(k.params)).toEqual(['n', 'mode', 'count']);
    expect(k.binary).toEqual({ associativity: 'none', commutative: false, identity: true, context: ['shift'] });
    const m = kernelManifest(k);
    expect(JSON.parse(JSON.stringify(m))).toEqual(m);
    expect(m.binary).toEqual({ associativity: 'none', commutative: false, identity: true, context: ['shift'], words: 8 });
    expect(portsFor(k, { n: 2, mode: 'propagate', count: 5 }).inputs.map((p) => `${p.name}:${p.type({ n: 2 }).shape.join('x')}`)).toEqual([
      'prefix:1x6',
      'block:5x6',
      'shift:2',
    ]);
    // A designer that only has the manifest gets the same ports per mode (at the default params).
    const remote = specFromManifest(m);
    expect(remote.binary).toEqual(k.binary);
    expect(portsFor(remote, { mode: 'apply' }).inputs.map((p) => p.name)).toEqual(['a', 'b', 'shift']);
    expect(portsFor(remote, { mode: 'reduce', count: 3 }).outputs.map((p) => p.type({}).shape)).toEqual([[1, 10]]);
  });

  it('names the kernel and the field of each missing or wrong part', () => {
    const { words: _w, apply: _a, cost: _c, ...bare } = affine;
    expect(refused({ ...bare, id: 'test.bare' })).toEqual([
      'kernel "test.bare" cost: is not a function (give cost: (params) => ({ flops, bytes }) of one application)',
      'kernel "test.bare" words: is not a function (give words: (params) => W, the payload words of one element (0 .. 1000))',
      'kernel "test.bare" apply: is missing (give apply: { cpu: (a, b, out, params, context) => void, wgsl: "fn op_apply(lane: u32, lanes: u32) { ... }" })',
    ]);
    expect(refused({ ...affine, binary: undefined })[0]).toBe(
      'kernel "test.affine" binary: is missing (give binary: { associativity: "exact" | "approximate" | "none", commutative: false, identity?: (params) => [...] })',
    );
    expect(refused({ ...affine, id: 'Affine', version: '1' })).toEqual([
      'kernel "Affine" id: "Affine" is not a namespaced id (use <package>.<name> in lower case, e.g. "acme.sobel")',
      'kernel "Affine" version: "1" is not a semver version (use MAJOR.MINOR.PATCH, e.g. "1.0.0")',
    ]);
    expect(refused({ ...affine, params: { ...affine.params, mode: { type: 'int', default: 1, description: 'x' } } })).toEqual([
      expect.stringMatching(/^kernel "test.affine" params.mode: "mode" is reserved/),
    ]);
    expect(
      refused({ ...affine, apply: { cpu: 3, wgsl: '@group(0) @binding(0) var<storage, read> x: array<u32>;\nfn op_apply(lane: u32, lanes: u32) {}' } }),
    ).toEqual([
      'kernel "test.affine" apply.cpu: is not a function (give cpu: (a, b, out, params, context) => void, writing a (+) b\'s payload into out)',
      expect.stringMatching(/^kernel "test.affine" apply.wgsl: declares a binding \("x", line 1\)/),
    ]);
    expect(refused({ ...affine, apply: { ...affine.apply, wgsl: 'fn apply(a: u32) {}' } })).toEqual([
      expect.stringMatching(/apply.wgsl: declares no fn op_apply\(lane: u32, lanes: u32\)/),
    ]);
    expect(refused({ ...affine, binary: { ...affine.binary, context: [{ name: 'in', type: () => ({ kind: 'v', element: 'u32', shape: [1] }) }] } })).toEqual([
      expect.stringMatching(/binary.context\[0\].name: "in" is reserved/),
    ]);
  });

  it('checks associativity: one of exact, approximate (with its tolerance), none (serial only, no tolerance)', () => {
    expect(refused({ ...affine, binary: { ...affine.binary, associativity: 'mostly' } })).toEqual([
      'kernel "test.affine" binary.associativity: "mostly" is not exact, approximate or none (exact: every bracketing gives the same bits; approximate: within binary.tolerance of serial; none: only the serial network may run it)',
    ]);
    expect(refused({ ...affine, binary: { ...affine.binary, associativity: 'approximate' } })).toEqual([
      expect.stringMatching(/^kernel "test.affine" binary.tolerance: undefined is not a positive number/),
    ]);
    expect(refused({ ...affine, binary: { ...affine.binary, tolerance: 0.5 } })).toEqual([
      'kernel "test.affine" binary.tolerance: is given, but associativity is "none" (a non-associative operator runs serially only: drop the tolerance, or declare associativity "approximate")',
    ]);
    expect(refused({ ...affine, binary: { ...affine.binary, commutative: 'no' } })).toEqual([
      expect.stringMatching(/binary.commutative: "no" is not true or false/),
    ]);
    expect(defineBinaryKernel({ ...affine, binary: { ...affine.binary, associativity: 'approximate', tolerance: 0.25 } }).binary).toMatchObject({
      associativity: 'approximate',
      tolerance: 0.25,
    });
  });

  it("probes words and the identity at the defaults and the params' bounds", () => {
    expect(refused({ ...affine, words: (p: Params) => (Number(p.n) > 32 ? 5000 : 2 * Number(p.n)) })).toEqual([
      'kernel "test.affine" words: gives 5000 for params {"n":64}, not an integer 0 .. 1000 (return the payload words of one element; at most 1000 (four copies fit a workgroup\'s 16 KiB))',
    ]);
    expect(refused({ ...affine, words: () => 2.5 })[0]).toMatch(/words: gives 2.5 for params \{"n":4\}, not an integer/);
    expect(
      refused({
        ...affine,
        words: () => {
          throw new Error('no n');
        },
      }),
    ).toEqual(['kernel "test.affine" words: throws for params {"n":4}: no n']);
    expect(refused({ ...affine, binary: { ...affine.binary, identity: () => [1, 0] } })).toEqual([
      expect.stringMatching(/^kernel "test.affine" binary.identity: gives 2 values for params \{"n":4\}; needs 8 u32 words/),
    ]);
    expect(refused({ ...affine, binary: { ...affine.binary, identity: (p: Params) => Array(2 * Number(p.n)).fill(-1) } })[0]).toMatch(
      /binary.identity: gives 8 values .* needs 8 u32 words/,
    );
  });

  it('exclusive without an identity is refused when that mode is used, as a param naming the operator', () => {
    const { identity: _i, ...noIdentity } = affine.binary;
    const k = defineBinaryKernel({ ...affine, binary: noIdentity });
    expect(k.binary?.identity).toBe(false);
    expect(() => portsFor(k, { n: 4, mode: 'exclusive', count: 3 })).toThrow(
      'param mode: operator "test.affine" declares no identity, so it cannot give an exclusive scan (use mode "scan", or give the operator binary.identity)',
    );
    expect(() => runCpu(k, { mode: 'exclusive', count: 3 }, {})).toThrow(/declares no identity/);
    expect(portsFor(k, { n: 4, mode: 'scan', count: 3 }).outputs.map((p) => p.name)).toEqual(['out', 'total']);
  });
});

describe('a package operator with a context port on the WebGPU adapter', () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  it('every mode reads the context; WGSL and twin bit-equal; a bad operator WGSL is a KernelError naming the kernel', async () => {
    const k = defineBinaryKernel(affine);
    const n = 3;
    const W = 2 * n;
    const m = 9;
    const shift = Uint32Array.from([5, 0xfffffff0, 77]);
    const input = new Uint32Array(m * (2 + W));
    for (let j = 0; j < m; j++) {
      input.set([20 + j, 20 + j], j * (2 + W));
      for (let w = 0; w < W; w++) input[j * (2 + W) + 2 + w] = (Math.imul(j + 3, 2654435761) + w * 40503) >>> 0;
    }
    const prefix = Uint32Array.from([0, 19, 3, 4, 5, 6, 7, 8]);
    const cases: [Params, Record<string, Uint32Array>][] = [
      [{ mode: 'apply' }, { a: prefix, b: input.slice(0, 2 + W), shift }],
      [{ mode: 'scan' }, { in: input, shift }],
      [{ mode: 'reduce' }, { in: input, shift }],
      [{ mode: 'exclusive' }, { in: input, shift }],
    ];
    const scanned = runCpu(k, { n, mode: 'scan', count: m }, { in: input, shift }).outputs.out as Uint32Array;
    cases.push([{ mode: 'propagate' }, { prefix, block: scanned, shift }]);
    for (const [p, inputs] of cases) {
      const params = { n, count: m, ...p };
      const run = await GpuRunner.create(t.device, k, params);
      const gpu = await run.fire(inputs);
      run.destroy();
      const cpu = runCpu(k, params, inputs);
      expect(gpu.report, String(p.mode)).toEqual({ ok: true });
      for (const [port, v] of Object.entries(cpu.outputs)) expect(Array.from(gpu.outputs[port]), `${p.mode} ${port}`).toEqual(Array.from(v));
    }
    // The shift matters: without it the twin gives another total.
    const plain = runCpu(k, { n, mode: 'reduce', count: m }, { in: input, shift: new Uint32Array(n) }).outputs.total;
    expect(Array.from(plain)).not.toEqual(Array.from(runCpu(k, { n, mode: 'reduce', count: m }, { in: input, shift }).outputs.total));

    const broken = defineBinaryKernel({ ...affine, apply: { ...affine.apply, wgsl: AFFINE_WGSL.replace('+ shift[i];', '+ nope[i];') } });
    const err = await GpuRunner.create(t.device, broken, { n, mode: 'scan', count: m }).catch((e) => e);
    expect(err).toBeInstanceOf(KernelError);
    expect(err.message).toMatch(/^kernel "test.affine": WGSL module "scan" does not compile: .*nope/);
  }, 60_000);
});

describe("an operator reading the operands' ranges and counting its applications", () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  // out = (left.lo, right.hi + 1): what reg2d.compose reads to know its frames; counts 1 per application.
  const spans = defineBinaryKernel({
    id: 'test.spans',
    version: '1.0.0',
    description: 'The span of frames an application covers',
    words: () => 2,
    binary: { associativity: 'exact', commutative: false },
    apply: {
      counters: ['applications', 'unused'],
      cpu: (a, b, out, _p, _c, info) => {
        out[0] = info.left[0];
        out[1] = info.right[1] + 1;
        info.count('applications', 1);
      },
      wgsl: 'fn op_apply(lane: u32, lanes: u32) { if (lane == 0u) { op_out[0] = op_range.x; op_out[1] = op_range.w + 1u; op_count(0u, 1u); } }',
    },
    cost: () => ({ flops: 1, bytes: 16 }),
  });

  it('gives the ranges to op_apply and sums the counters per firing in the report, on the twin and the WGSL alike', async () => {
    const m = 6;
    // Element 2 is empty (padding): it fires nothing, so 4 applications.
    const input = Uint32Array.from(
      Array.from({ length: m }, (_, j) => (j === 2 ? [1, 0, 0, 0] : [10 + j - (j > 2 ? 1 : 0), 10 + j - (j > 2 ? 1 : 0), 0, 0])).flat(),
    );
    const scanned = runCpu(spans, { mode: 'scan', count: m }, { in: input }).outputs.out as Uint32Array;
    // scan: 4 applications (the empty element fires none); propagate [0, 9] over the scanned block: 6.
    const cases: [string, Record<string, Uint32Array>, number][] = [
      ['scan', { in: input }, 4],
      ['propagate', { prefix: Uint32Array.from([0, 9, 0, 0]), block: scanned }, 6],
    ];
    for (const [mode, inputs, applications] of cases) {
      const cpu = runCpu(spans, { mode, count: m }, inputs);
      const run = await GpuRunner.create(t.device, spans, { mode, count: m });
      // Fired twice: the counters start from zero each firing.
      await run.fire(inputs);
      const gpu = await run.fire(inputs);
      run.destroy();
      expect(cpu.report, mode).toEqual({ ok: true, values: { applications, unused: 0 } });
      expect(gpu.report, mode).toEqual(cpu.report);
      expect(Array.from(gpu.outputs.out), mode).toEqual(Array.from(cpu.outputs.out));
    }
    expect(Array.from(runCpu(spans, { mode: 'reduce', count: m }, { in: input }).outputs.total)).toEqual([10, 14, 10, 15]);
    expect(() =>
      defineBinaryKernel({
        ...({} as BinaryKernelDefinition),
        id: 'test.bad',
        version: '1.0.0',
        description: 'x',
        words: () => 0,
        binary: { associativity: 'exact', commutative: false },
        cost: () => ({ flops: 0, bytes: 0 }),
        apply: { counters: ['a', 'a'], cpu: () => {}, wgsl: 'fn op_apply(lane: u32, lanes: u32) {}' },
      }),
    ).toThrow('apply.counters');
  }, 60_000);

  it("an f32 operator's non-finite result fails the firing naming both ranges, on the twin and the WGSL alike; u32 payloads are not checked", async () => {
    const NAN = 0x7fc00000;
    const def = (payload?: 'u32' | 'f32'): BinaryKernelDefinition => ({
      id: `test.nanat${payload ?? ''}`,
      version: '1.0.0',
      description: 'f32 sum; NaN when the right operand starts at element 8.',
      words: () => 1,
      binary: { associativity: 'exact', commutative: false, identity: () => [0], ...(payload ? { payload } : {}) },
      apply: {
        cpu: (a, b, out, _p, _c, info) => {
          new Float32Array(out.buffer, out.byteOffset, 1)[0] = new Float32Array(a.buffer, a.byteOffset, 1)[0] + new Float32Array(b.buffer, b.byteOffset, 1)[0];
          if (info.right[0] === 8) out[0] = NAN;
        },
        wgsl:
          'fn op_apply(lane: u32, lanes: u32) { if (lane == 0u) { op_out[0] = bitcast<u32>(bitcast<f32>(op_a[0]) + bitcast<f32>(op_b[0])); if (op_range.z == 8u) { op_out[0] = ' +
          NAN +
          'u; } } }',
      },
      cost: () => ({ flops: 1, bytes: 24 }),
    });
    const k = defineBinaryKernel(def('f32'));
    expect(kernelManifest(k).binary?.payload).toBe('f32');
    const one = 0x3f800000;
    const m = 10;
    const input = Uint32Array.from(Array.from({ length: m }, (_, j) => [j, j, one]).flat());
    const prefix = Uint32Array.from([0, 7, one]);
    const block = Uint32Array.from(Array.from({ length: 2 }, (_, j) => [8, 8 + j, one]).flat());
    const cases: [string, number, Record<string, Uint32Array>, string][] = [
      ['scan', m, { in: input }, 'mode "scan", element 8 of "in": [0, 7] (+) [8, 8] gave a non-finite result'],
      ['reduce', m, { in: input }, 'mode "reduce", element 8 of "in": [0, 7] (+) [8, 8] gave a non-finite result'],
      ['exclusive', m, { in: input }, 'mode "exclusive", element 8 of "in": [0, 7] (+) [8, 8] gave a non-finite result'],
      ['propagate', 2, { prefix, block }, 'of "block": [0, 7] (+) [8, '],
      ['apply', 1, { a: prefix, b: Uint32Array.from([8, 8, one]) }, 'mode "apply", element 0 of "b": [0, 7] (+) [8, 8] gave a non-finite result'],
    ];
    for (const [mode, count, inputs, message] of cases) {
      expect(() => runCpu(k, { mode, count }, inputs), mode).toThrow(message);
      const run = await GpuRunner.create(t.device, k, { mode, count });
      const gpu = await run.fire(inputs);
      run.destroy();
      expect(gpu.report?.ok, mode).toBe(false);
      expect(gpu.report?.message, mode).toContain(message);
    }
    // The same operator with a u32 payload (the default) is not checked: the NaN bits pass.
    for (const payload of [undefined, 'u32'] as const)
      expect(
        Array.from((runCpu(defineBinaryKernel(def(payload)), { mode: 'scan', count: m }, { in: input }).outputs.total as Uint32Array).subarray(0, 2)),
      ).toEqual([0, 9]);
    expect(refused({ ...def('f32'), binary: { ...def('f32').binary, payload: 'f64' } })).toEqual([expect.stringContaining('binary.payload')]);
  }, 60_000);
});

describe("a device's loop budget (llvmpipe ends an invocation's loops after 65535 iterations in all)", () => {
  let t: TestDevice;
  beforeAll(async () => {
    t = await createTestDevice();
  });
  afterAll(() => t?.destroy());

  // x (+) y = x + y + [s = 0xdeadbeef] mod 2^32, s a sum over `spin` loop iterations: exact on
  // both sides, and each application spends `spin` of the WGSL's loop budget.
  const spinning = (spin: number, dispatchElements?: number) =>
    defineBinaryKernel({
      id: `test.spin${spin}x${dispatchElements ?? 0}`,
      version: '1.0.0',
      description: 'Adds, after a loop of spin iterations.',
      params: {},
      words: () => 1,
      binary: { associativity: 'exact', commutative: true },
      apply: {
        cpu: (a, b, out) => {
          let s = 0;
          for (let i = 0; i < spin; i++) s = (s + ((b[0] ^ i) >>> 0)) >>> 0;
          out[0] = (a[0] + b[0] + (s === 0xdeadbeef ? 1 : 0)) >>> 0;
        },
        wgsl: `fn op_apply(lane: u32, lanes: u32) {
  var s = 0u;
  for (var i = 0u; i < ${spin}u; i++) { s += op_b[0] ^ i; }
  if (lane == 0u) { op_out[0] = op_a[0] + op_b[0] + select(0u, 1u, s == 0xdeadbeefu); }
}`,
        dispatchElements,
      },
      cost: () => ({ flops: spin, bytes: 0 }),
    });
  const block = Uint32Array.from([0, 0, 5, 1, 1, 7, 2, 2, 11, 3, 3, 13]);

  it('a walk whose applications spend more than the budget in one dispatch fails its firing naming the budget; one application per dispatch walks it all, equal to the twin', async () => {
    const params: Params = { mode: 'scan', count: 4 };
    const one = await GpuRunner.create(t.device, spinning(40_000), params);
    try {
      const r = await one.fire({ in: block });
      expect(r.report?.ok).toBe(false);
      expect(r.report?.message).toMatch(
        /mode "scan": the dispatch stopped before its end \(\d of 4 elements done; the device cut it short: llvmpipe ends an invocation's loops after 65535 iterations in all/,
      );
    } finally {
      one.destroy();
    }
    const chunked = spinning(40_000, 1);
    const run = await GpuRunner.create(t.device, chunked, params);
    try {
      const r = await run.fire({ in: block });
      expect(r.report).toEqual({ ok: true });
      const cpu = runCpu(chunked, params, { in: block });
      expect(Array.from(r.outputs.out)).toEqual(Array.from(cpu.outputs.out));
      expect(Array.from(r.outputs.total)).toEqual([0, 3, 36]);
    } finally {
      run.destroy();
    }
  }, 120_000);

  it('one application past the budget fails its firing rather than giving what its cut loops left', async () => {
    for (const [mode, inputs] of [
      ['apply', { a: Uint32Array.from([0, 0, 5]), b: Uint32Array.from([1, 1, 7]) }],
      ['propagate', { prefix: Uint32Array.from([0, 0, 5]), block: Uint32Array.from([1, 1, 7, 1, 2, 18]) }],
    ] as const) {
      const run = await GpuRunner.create(t.device, spinning(70_000, 1), { mode, count: 2 });
      try {
        const r = await run.fire(inputs);
        expect(r.report?.ok, mode).toBe(false);
        expect(r.report?.message).toContain(`mode "${mode}": the dispatch stopped before its end (0 of ${mode === 'apply' ? 1 : 2} elements done`);
      } finally {
        run.destroy();
      }
    }
  }, 120_000);
});
