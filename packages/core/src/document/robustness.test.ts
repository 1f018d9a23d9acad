import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { predict } from '../predict/predict.js';
import { randomDocument } from '../testing/generate.js';
import { MAX_DOCUMENT_BYTES, parseDocument } from './parse.js';

// User mistakes are diagnostics, never exceptions: anything at all, and valid documents with
// one field replaced by anything, compile to ok or to diagnostics.

const paths = (v: unknown, prefix: (string | number)[] = []): (string | number)[][] => {
  if (typeof v !== 'object' || v === null) return [prefix];
  return [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, Array.isArray(v) ? Number(k) : k]))];
};

describe('robustness', () => {
  it('compile never throws on arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const r = compile(v);
        expect(r.ok).toBe(false);
        expect(r.diagnostics.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('compile and predict never throw when one field of a valid document is replaced', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.nat(), fc.jsonValue(), (seed, pick, value) => {
        const doc = randomDocument(seed, { nodes: 5, hosts: 2, maxGpus: 2, overlap: seed % 2 === 0 }) as unknown as Record<string, unknown>;
        const all = paths(doc).filter((p) => p.length > 0);
        const path = all[pick % all.length];
        let at = doc as Record<string | number, unknown>;
        for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
        at[path[path.length - 1]] = value;
        const r = compile(doc);
        if (!r.ok) expect(r.diagnostics.length).toBeGreaterThan(0);
        predict(doc);
      }),
      { numRuns: 500 },
    );
  });

  it('parseDocument never throws on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(parseDocument(s).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('a document larger than the limit', () => {
  it('is refused unparsed, with its length, the limit and the fix', () => {
    const text = JSON.stringify({ format: 'pipeloom/v2', name: 'small', app: { nodes: [], edges: [] }, arch: { hosts: [], pes: [] }, mapping: {} });
    const r = parseDocument(text, { maxBytes: text.length - 1 });
    expect(r.ok).toBe(false);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0].path).toBe('document');
    expect(r.diagnostics[0].message).toBe(`the document has ${text.length} characters, more than the limit of ${text.length - 1} bytes (${text.length - 1} B)`);
    expect(r.diagnostics[0].hint).toContain('PIPELOOM_MAX_DOCUMENT_BYTES');
    expect(parseDocument(text, { maxBytes: text.length }).ok).toBe(true);
    expect(MAX_DOCUMENT_BYTES).toBe(64 * 1024 * 1024);
  });
});
