import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { failingClause, parseRequires, WEBGPU_FEATURES, type PeCapabilities } from './requires.js';

const llvmpipe: PeCapabilities = {
  kind: 'gpu',
  memory: 8 * 2 ** 30,
  device: 'llvmpipe-llvm-15',
  backend: 'opengl',
  featureLevel: 'compatibility',
  features: ['indirect-first-instance', 'texture-compression-bc'],
  limits: { maxStorageBufferBindingSize: 134217728, maxBufferSize: 2147483648 },
  software: true,
  softwareWhy: 'its adapter info names llvmpipe, a software rasteriser',
};
const cpu: PeCapabilities = { kind: 'cpu', cores: 2, memory: 12 * 2 ** 30, vendor: 'x64' };

const parse = (...texts: string[]) => parseRequires(texts, 'app.nodes[0].requires');
const messages = (...texts: string[]) => parse(...texts).diagnostics.map(formatDiagnostic);

describe('requires: clauses KEY OP VALUE', () => {
  it('parses every key, numbers with byte units, and matches them against a PE', () => {
    const r = parse(
      'kind=gpu',
      'software = false',
      'limit.maxStorageBufferBindingSize>=128MiB',
      'featureLevel>=compatibility',
      'feature=texture-compression-bc',
      'memory>=4GiB',
      'backend!=vulkan',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.clauses.map((c) => [c.key, c.op, c.value])).toContainEqual(['limit', '>=', 134217728]);
    expect(failingClause(llvmpipe, r.clauses)?.text).toBe('software = false');
    expect(failingClause({ ...llvmpipe, software: false }, r.clauses)).toBeUndefined();
    expect(failingClause(cpu, r.clauses)?.text).toBe('kind=gpu');
    // A CPU reports no adapter: it meets an adapter clause only as "!=".
    expect(failingClause(cpu, parse('backend!=vulkan', 'cores>=2', 'feature!=shader-f16').clauses)).toBeUndefined();
    expect(failingClause(cpu, parse('featureLevel>=compatibility').clauses)?.key).toBe('featureLevel');
    // featureLevel orders compatibility < core.
    expect(failingClause(llvmpipe, parse('featureLevel>=core').clauses)?.text).toBe('featureLevel>=core');
    expect(failingClause({ ...llvmpipe, featureLevel: 'core' }, parse('featureLevel>compatibility').clauses)).toBeUndefined();
  });

  it('names each mistake with the fix: unknown key, limit or feature (nearest), ordering on text, unparsable values, contradictions', () => {
    expect(messages('knd=gpu')).toEqual([
      'app.nodes[0].requires[0]: unknown key "knd" (did you mean "kind"?) (keys: kind, software, backend, vendor, featureLevel, feature, limit.<name>, cores, memory)',
    ]);
    expect(messages('limit.maxStorageBufferBindingSiz>=1')[0]).toContain(
      'unknown limit "maxStorageBufferBindingSiz" (did you mean "maxStorageBufferBindingSize"?)',
    );
    expect(messages('feature=shader-f61')[0]).toContain('unknown feature "shader-f61" (did you mean "shader-f16"?)');
    expect(messages('vendor>=nvidia')[0]).toBe(
      'app.nodes[0].requires[0]: "vendor>=nvidia": vendor is text, so it takes = or != only, not >= (write vendor=... or vendor!=...)',
    );
    expect(messages('cores>=many')[0]).toContain('"cores>=many": "many" is not a number');
    expect(messages('software=maybe')[0]).toContain('software is true or false, not "maybe"');
    expect(messages('kind=tpu')[0]).toContain('kind is cpu or gpu, not "tpu"');
    expect(messages('gpu')[0]).toContain('"gpu" is not a clause KEY OP VALUE');
    expect(messages('kind=cpu', 'feature=shader-f16')).toEqual([
      'app.nodes[0].requires: the clauses "kind=cpu" and "feature=shader-f16" cannot both hold (remove one of them)',
    ]);
    expect(messages('cores>=8', 'cores<4')[0]).toContain('"cores>=8" and "cores<4" cannot both hold');
    expect(messages('kind=gpu', 'kind!=gpu')[0]).toContain('cannot both hold');
    expect(messages('memory>4GiB', 'memory<=4GiB')[0]).toContain('cannot both hold');
    expect(messages('memory>=4GiB', 'memory<=4GiB')).toEqual([]);
  });

  // Random PEs and random well-formed clause lists: a list called contradictory is met by no PE,
  // and the matcher agrees with each clause taken alone.
  const capsArb = fc
    .record({
      kind: fc.constantFrom('cpu' as const, 'gpu' as const),
      cores: fc.option(fc.integer({ min: 1, max: 16 }), { nil: undefined }),
      memory: fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
      backend: fc.option(fc.constantFrom('opengl', 'vulkan'), { nil: undefined }),
      featureLevel: fc.option(fc.constantFrom('compatibility' as const, 'core' as const), { nil: undefined }),
      features: fc.option(fc.subarray(['shader-f16', 'timestamp-query', 'subgroups']), { nil: undefined }),
      software: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((c): PeCapabilities => (c.kind === 'cpu' ? { kind: 'cpu', cores: c.cores, memory: c.memory } : c));
  // (A CPU reports no adapter: no backend, feature level, features or software flag.)
  const clauseArb = fc.oneof(
    fc
      .tuple(fc.constantFrom('cores', 'memory'), fc.constantFrom('=', '!=', '>=', '<=', '>', '<'), fc.integer({ min: 1, max: 16 }))
      .map(([k, o, v]) => `${k}${o}${v}`),
    fc.tuple(fc.constantFrom('kind=', 'kind!='), fc.constantFrom('cpu', 'gpu')).map(([k, v]) => k + v),
    fc.tuple(fc.constantFrom('backend=', 'backend!='), fc.constantFrom('opengl', 'vulkan')).map(([k, v]) => k + v),
    fc.tuple(fc.constantFrom('software=', 'software!='), fc.boolean()).map(([k, v]) => `${k}${v}`),
    fc
      .tuple(fc.constantFrom('featureLevel'), fc.constantFrom('=', '!=', '>=', '<=', '>', '<'), fc.constantFrom('compatibility', 'core'))
      .map(([k, o, v]) => `${k}${o}${v}`),
    fc.tuple(fc.constantFrom('feature=', 'feature!='), fc.constantFrom('shader-f16', 'timestamp-query', 'subgroups')).map(([k, v]) => k + v),
  );

  it('a list it calls contradictory is met by no PE; a list is met iff each clause is', () => {
    fc.assert(
      fc.property(fc.array(clauseArb, { maxLength: 5 }), fc.array(capsArb, { minLength: 1, maxLength: 12 }), (texts, pes) => {
        const r = parse(...texts);
        const contradictory = r.diagnostics.some((d) => d.message.includes('cannot both hold'));
        expect(r.diagnostics.filter((d) => !d.message.includes('cannot both hold'))).toEqual([]);
        const clauses = contradictory ? parseRequires(texts, 'x').clauses : r.clauses;
        for (const pe of pes) {
          const meets = failingClause(pe, clauses) === undefined;
          expect(meets).toBe(clauses.every((c) => failingClause(pe, [c]) === undefined));
          if (contradictory) expect(meets, `${texts.join(', ')} on ${JSON.stringify(pe)}`).toBe(false);
        }
      }),
      { numRuns: 400 },
    );
  });

  it("every feature name a clause may use is WebGPU's, and unknown ones never parse", () => {
    for (const f of WEBGPU_FEATURES) expect(parse(`feature=${f}`).diagnostics).toEqual([]);
  });
});
