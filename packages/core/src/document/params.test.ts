import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { formatDiagnostic } from '../diagnostics.js';
import { lowerDocument } from './lower.js';
import { paramTable } from './params.js';
import type { DocumentParams, ProjectDocument } from './types.js';
import { analyze } from './validate.js';

// p -> a -> c on one host, sized by params.
function doc(
  params: DocumentParams,
  sizes: { width?: unknown; height?: unknown; nb_loop?: unknown } = { width: 'W', height: 'H', nb_loop: '2 * N' },
): ProjectDocument {
  const size = { width: sizes.width, height: sizes.height } as Record<string, number | string>;
  return {
    format: 'pipeloom/v2',
    name: 'params',
    params,
    app: {
      nodes: [
        { id: 'p', kernel: 'matrix.produce', params: { ...size } },
        { id: 'a', kernel: 'matrix.increment', params: { ...size, nb_loop: sizes.nb_loop as number } },
        { id: 'c', kernel: 'matrix.consume', params: { ...size, increments: '4' } },
      ],
      edges: [
        { from: { node: 'p', port: 'out' }, to: { node: 'a', port: 'in' } },
        { from: { node: 'a', port: 'out' }, to: { node: 'c', port: 'in' } },
      ],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 1 }], pes: [], links: [] },
    mapping: { p: 'cpu@h0', a: 'gpu0@h0', c: 'cpu@h0' },
    options: { overlap: true, iterations: 4 },
  };
}

const problems = (d: unknown, params?: Record<string, number>) => analyze(d, { params }).diagnostics.map(formatDiagnostic);

const piic = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

describe('document parameters', () => {
  it('examples/piic.json written with W, H and N compiles exactly as its literal version', () => {
    const written = piic();
    const literal: ProjectDocument = { ...piic(), params: undefined };
    const size = { width: 2048, height: 2048 };
    literal.app.nodes = [
      { id: 'P', kernel: 'matrix.produce', params: { ...size } },
      { id: 'I1', kernel: 'matrix.increment', params: { ...size, nb_loop: 100 } },
      { id: 'I2', kernel: 'matrix.increment', params: { ...size, nb_loop: 100 } },
      { id: 'C', kernel: 'matrix.consume', params: { ...size, increments: '100,100' } },
    ];
    expect(Object.keys(written.params ?? {})).toEqual(['W', 'H', 'N']);
    for (const overlap of [true, false]) {
      const a = compile(written, { overlap });
      const b = compile(literal, { overlap });
      expect(a.ok && b.ok).toBe(true);
      if (a.ok && b.ok) expect(a.ig).toEqual(b.ig);
    }
    // An override changes the compile: half the width, half the bytes of every buffer.
    const half = compile(written, { params: { W: 1024 } });
    const full = compile(written);
    expect(half.ok && full.ok).toBe(true);
    if (half.ok && full.ok) expect(Array.from(half.ig.buffers.bytes)).toEqual(Array.from(full.ig.buffers.bytes, (b) => b / 2));
  });

  it('replace the expressions of numeric node params by their values, in dependency order', () => {
    // H reads W, declared after it; N is a full definition.
    const { lowered, diagnostics } = lowerDocument(doc({ H: 'W / 2', W: 64, N: { value: 'min(W, 3)', min: 1, integer: true } }));
    expect(diagnostics).toEqual([]);
    expect(lowered!.params).toEqual({ H: 32, W: 64, N: 3 });
    expect(lowered!.doc.app.nodes.map((n) => n.params)).toEqual([
      { width: 64, height: 32 },
      { width: 64, height: 32, nb_loop: 6 },
      { width: 64, height: 32, increments: '4' },
    ]);
  });

  it('leave string params literal, and compile like the document written with numbers', () => {
    const withParams = compile(doc({ W: 16, H: 8, N: 2 }));
    const literal = compile(doc({}, { width: 16, height: 8, nb_loop: 4 }));
    expect(withParams.ok && literal.ok).toBe(true);
    if (withParams.ok && literal.ok) expect(withParams.ig).toEqual(literal.ig);
  });

  it('substitute rates and delays', () => {
    const d = doc({ W: 8, H: 8, N: 1, R: '1 + 0' });
    d.app.nodes[1].rates = { in: 'R' };
    d.app.edges[0].delay = 'R - 1';
    const { lowered, diagnostics } = lowerDocument(d);
    expect(diagnostics).toEqual([]);
    expect(lowered!.doc.app.nodes[1].rates).toEqual({ in: 1 });
    expect(lowered!.doc.app.edges[0].delay).toBe(0);
  });

  it('take overrides, checked against the definition', () => {
    const d = doc({ W: 8, H: 8, N: { value: 1, max: 10 } });
    const ig = (params: Record<string, number>) => {
      const r = lowerDocument(d, { params });
      return r.lowered?.doc.app.nodes[1].params?.nb_loop;
    };
    expect(ig({ N: 4 })).toBe(8);
    expect(problems(d, { N: 11 })).toEqual(['params.N: parameter "N" is 11, above its maximum 10 (use a value in -inf .. 10)']);
    expect(problems(d, { Nn: 3 })).toEqual(['params: the override Nn=3 names no parameter of the document (did you mean "N"?)']);
  });

  it('report an unknown parameter with the nearest name', () => {
    expect(problems(doc({ W: 8, H: 8, NN: 1 }))).toEqual([
      'app.nodes[1].params.nb_loop: node "a" param "nb_loop": expression "2 * N": unknown parameter "N" at column 5 (did you mean "NN"? Otherwise declare "N" in params)',
    ]);
    expect(problems(doc({ W: 8, H: 'Wdth', N: 1 }))).toEqual([
      'params.H: parameter "H": expression "Wdth": unknown parameter "Wdth" at column 1 (did you mean "W"? Otherwise declare "Wdth" in params)',
    ]);
    // The name that has no value, not the first name of the expression; not a name it already reads.
    expect(problems(doc({ W: 8, H: 8, B: 2, Qn: 3 }, { width: 'W', height: 'H', nb_loop: 'B * Q' }))).toEqual([
      'app.nodes[1].params.nb_loop: node "a" param "nb_loop": expression "B * Q": unknown parameter "Q" at column 5 (did you mean "Qn"? Otherwise declare "Q" in params)',
    ]);
  });

  it('report a cycle by its names, once, and nothing that reads it', () => {
    expect(problems(doc({ W: 'H * 2', H: 'N + W', N: 'H' }))).toEqual([
      'params.H: parameter cycle H -> N -> H (give one of these parameters a value that does not depend on the others)',
    ]);
    expect(problems(doc({ W: 'W', H: 8, N: 1 }))).toEqual([
      'params.W: parameter cycle W -> W (give one of these parameters a value that does not depend on the others)',
    ]);
  });

  it('report syntax errors with the column, division by zero, range and integer violations', () => {
    expect(problems(doc({ W: 8, H: 8, N: '2 * (W' }))).toEqual([
      'params.N: parameter "N": expression "2 * (W": expected ")" at column 7 (write numbers and parameter names joined by + - * / %, with parentheses, min(...) and max(...))',
    ]);
    expect(problems(doc({ W: 8, H: 8, N: 'W / (H - 8)' }))).toEqual([
      'params.N: parameter "N": expression "W / (H - 8)": division by zero at column 3 (change the parameters so the divisor is not 0)',
    ]);
    expect(problems(doc({ W: 8, H: 8, N: { value: 'W / 3', integer: true } }))).toEqual([
      'params.N: parameter "N" is 2.6666666666666665, not an integer (use a whole number)',
    ]);
    expect(problems(doc({ W: { value: 'H * 4', min: 1, max: 16 }, H: 8, N: 1 }))).toEqual([
      'params.W: parameter "W" is 32, above its maximum 16 (use a value in 1 .. 16)',
    ]);
    expect(problems(doc({ W: 8, H: 8, N: 1 }, { width: 'W', height: 'H', nb_loop: 'N %' }))[0]).toMatch(
      /^app.nodes\[1\].params.nb_loop: node "a" param "nb_loop": expression "N %": expected a number/,
    );
  });

  it('reject malformed definitions as diagnostics', () => {
    expect(problems(doc({ W: 8, H: 8, N: { value: 1, min: 'one' } as never }))).toEqual(['params.N.min: must be a finite number, not "one"']);
    expect(problems(doc({ W: 8, H: 8, N: true as never }))[0]).toMatch(/^params.N: must be a number, an expression/);
    expect(problems(doc({ W: 8, H: 8, 'N-1': 1, N: 1 }))[0]).toMatch(/^params.N-1: "N-1" is not a parameter name/);
  });

  it('give the parameter panel its rows', () => {
    const d = doc({ W: { value: 64, min: 8, max: 4096, description: 'width' }, H: 'W / 2', N: 'X', B: '1 / 0' });
    expect(paramTable(d)).toEqual([
      { name: 'W', written: 64, value: 64, min: 8, max: 4096 },
      { name: 'H', written: 'W / 2', value: 32 },
      { name: 'N', written: 'X', error: 'parameter "N": expression "X": unknown parameter "X" at column 1' },
      { name: 'B', written: '1 / 0', error: 'parameter "B": expression "1 / 0": division by zero at column 3' },
    ]);
    expect(
      paramTable(d, { W: 128 })
        .slice(0, 2)
        .map((r) => r.value),
    ).toEqual([128, 64]);
  });

  it('evaluate long dependency chains without recursion', () => {
    const params: DocumentParams = { P0: 1 };
    for (let i = 1; i < 20_000; i++) params[`P${i}`] = `P${i - 1} + 1`;
    Object.assign(params, { W: 'P19999 / 2500', H: 8, N: 1 });
    const r = lowerDocument(doc(params));
    expect(r.diagnostics).toEqual([]);
    expect(r.lowered!.params.W).toBe(8);
  });

  it('never throw on arbitrary params', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('W', 'H', 'N', 'M', 'min', '__proto__'),
          fc.oneof(fc.jsonValue(), fc.string({ maxLength: 12 }), fc.constantFrom('W', 'N + 1', 'H / 0', 'M * 2')),
        ),
        (params) => {
          const r = analyze(doc(params as DocumentParams));
          if (!r.model) expect(r.diagnostics.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
