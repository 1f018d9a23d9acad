import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile, type Diagnostic } from '../index.js';

// Every diagnostic names the element as the user wrote it: its path walks the document as
// written (or names a key missing from an element that is there), and its words name no
// firing of a lowered node (`b#3`) unless they say it is a firing. Over the bad-document corpus
// and the examples with one field replaced.

const corpus = fileURLToPath(new URL('../../corpus/bad', import.meta.url));
const examplesDir = fileURLToPath(new URL('../../../../examples', import.meta.url));
const read = (file: string): unknown => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
};
const corpusDocs = readdirSync(corpus)
  .filter((f) => f.endsWith('.json') && !f.startsWith('expected'))
  .map((f) => ({ name: f, doc: read(`${corpus}/${f}`) }))
  .filter((c) => c.doc !== undefined);
const examples = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f, doc: read(`${examplesDir}/${f}`) }));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * Whether `path` (`app.nodes[2].params.width`, `mapping.s2/add`) walks `doc`: each key an own
 * key of the object there (the longest that fits: ids may hold dots), each index in range; the
 * last key may be missing from an object that is there (a missing field is named by its path).
 */
function resolves(doc: unknown, path: string): boolean {
  let at: unknown = doc;
  let rest = path;
  while (rest) {
    if (rest.startsWith('[')) {
      const m = /^\[(\d+)\]/.exec(rest);
      if (!m || !Array.isArray(at) || Number(m[1]) >= at.length) return false;
      at = at[Number(m[1])];
      rest = rest.slice(m[0].length);
      continue;
    }
    if (rest.startsWith('.')) rest = rest.slice(1);
    if (!isObject(at) || Array.isArray(at)) return false;
    const key = Object.keys(at)
      .filter((k) => rest === k || rest.startsWith(`${k}.`) || rest.startsWith(`${k}[`))
      .sort((a, b) => b.length - a.length)[0];
    if (key === undefined) return !/[.[]/.test(rest);
    at = at[key];
    rest = rest.slice(key.length);
  }
  return true;
}

/** Words naming a lowered node's firing (`b#3`) that the document does not hold and the message does not call a firing. */
function firingNames(d: Diagnostic, written: string): string[] {
  const text = `${d.message} ${d.hint ?? ''}`;
  if (/firing/.test(text)) return [];
  return [...text.matchAll(/[^\s"'(>]+#\d+/g)].map((m) => m[0]).filter((name) => !written.includes(name));
}

function check(doc: unknown, what: string): void {
  const r = compile(doc);
  if (r.ok) return;
  const written = JSON.stringify(doc);
  for (const d of r.diagnostics) {
    expect(resolves(doc, d.path), `${what}: ${d.path}: ${d.message} (the path is not in the document as written)`).toBe(true);
    expect(firingNames(d, written), `${what}: ${d.path}: ${d.message}`).toEqual([]);
  }
}

describe('diagnostics name the document as written', () => {
  it('resolves paths as the documents hold them', () => {
    const doc = { app: { nodes: [{ id: 'a', params: { w: 1 } }], edges: [{ init: 1 }] }, mapping: { 's2/add': 'cpu@h0', 'x.y': 'cpu@h0' } };
    expect(resolves(doc, 'app.nodes[0].params.w')).toBe(true);
    expect(resolves(doc, 'app.nodes[0].params.h')).toBe(true); // a missing field of a node that is there
    expect(resolves(doc, 'mapping.s2/add')).toBe(true);
    expect(resolves(doc, 'mapping.x.y')).toBe(true);
    expect(resolves(doc, 'app.nodes[1]')).toBe(false);
    expect(resolves(doc, 'app.edges[0].init.value')).toBe(false); // a lowered key: init is a number as written
    expect(resolves(doc, 'defs.seg.nodes[0]')).toBe(false);
  });

  for (const c of corpusDocs) it(`corpus ${c.name}`, () => check(c.doc, c.name));

  it('every example with one field replaced', () => {
    const paths = (v: unknown, prefix: (string | number)[] = []): (string | number)[][] =>
      !isObject(v) ? [prefix] : [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, Array.isArray(v) ? Number(k) : k]))];
    // Plausible mistakes first (a wrong number, an expression over a name that is not there), then anything.
    const value = fc.oneof(
      fc.integer({ min: -2, max: 40 }),
      fc.constantFrom('B * Q', 'N + 1', 'W / 0', 'cpu@h9', 'gpu0@h0', 'out', 'in', 'x#1', 0.5, null),
      fc.jsonValue(),
    );
    fc.assert(
      fc.property(fc.nat(), fc.nat(), value, (pickDoc, pickPath, v) => {
        const e = examples[pickDoc % examples.length];
        const doc = structuredClone(e.doc) as Record<string | number, unknown>;
        const all = paths(doc).filter((p) => p.length > 0);
        const path = all[pickPath % all.length];
        let at = doc;
        for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
        at[path[path.length - 1]] = v;
        check(doc, `${e.name} with ${path.join('.')} = ${JSON.stringify(v)}`);
      }),
      { numRuns: 300, seed: 11 },
    );
  }, 300_000);
});
