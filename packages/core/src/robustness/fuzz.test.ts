import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile, parseDocument, predict, validate } from '../index.js';
import { randomDocument } from '../testing/generate.js';

// Feeds validation and compile at least 10,000 generated documents: mutations of valid random
// documents (fields dropped, retyped, set to NaN / Infinity / negative / huge, ids swapped,
// edges rewired) and raw JSON-like values. Nothing may throw, and each document must be handled
// quickly (a hang shows up as the test's timeout).

const junk = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(-1),
  fc.constant(0),
  fc.constant(1e300),
  fc.constant(2 ** 31),
  fc.constant(''),
  fc.constant('__proto__'),
  fc.constant('constructor'),
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
);

type Json = unknown;

/** Picks a path into the value by the generated choices and replaces or deletes what is there. */
function mutate(doc: Json, choices: number[], replacement: unknown, del: boolean): Json {
  const root = structuredClone(doc) as Record<string, unknown>;
  let cur: unknown = root;
  for (let i = 0; i < choices.length; i++) {
    if (cur === null || typeof cur !== 'object') break;
    const keys = Object.keys(cur as object);
    if (keys.length === 0) break;
    const key = keys[choices[i] % keys.length];
    const child = (cur as Record<string, unknown>)[key];
    const last = i === choices.length - 1 || child === null || typeof child !== 'object';
    if (last) {
      if (del && !Array.isArray(cur)) delete (cur as Record<string, unknown>)[key];
      else (cur as Record<string, unknown>)[key] = replacement;
      break;
    }
    cur = child;
  }
  return root;
}

function mustNotThrow(input: unknown) {
  const diagnostics = validate(input);
  expect(Array.isArray(diagnostics)).toBe(true);
  for (const overlap of [true, false]) {
    const r = compile(input, { overlap });
    if (!r.ok) expect(r.diagnostics.some((d) => d.severity === 'error')).toBe(true);
  }
  // A document that compiles must also predict; one that does not gets diagnostics.
  const p = predict(input);
  if (!p.ok) expect(p.diagnostics.length).toBeGreaterThan(0);
}

describe('fuzzing validation and compile', () => {
  it('5,000 mutated documents: no crash, no hang, errors are diagnostics', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        junk,
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        (seed, choices, replacement, del, times) => {
          let doc: Json = randomDocument(seed, { nodes: 6, hosts: 2, maxGpus: 2, overlap: seed % 2 === 0 });
          for (let t = 0; t < times; t++)
            doc = mutate(
              doc,
              choices.map((c) => c + t),
              replacement,
              del,
            );
          mustNotThrow(doc);
        },
      ),
      { numRuns: 5_000, seed: 7 },
    );
  });

  it('5,000 arbitrary JSON values and texts: parseDocument and compile never throw', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.string({ maxLength: 64 }).map((s) => ({ text: s })),
        ),
        (v) => {
          const text = typeof v === 'object' && v !== null && 'text' in (v as object) ? (v as { text: string }).text : (JSON.stringify(v) ?? 'null');
          const parsed = parseDocument(text);
          if (parsed.ok) mustNotThrow(parsed.doc);
          else expect(parsed.diagnostics.length).toBeGreaterThan(0);
          mustNotThrow(v);
        },
      ),
      { numRuns: 5_000, seed: 11 },
    );
  });
});
