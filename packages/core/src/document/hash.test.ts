import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProjectDocument } from './types.js';
import { canonicalJson, documentHash, fnv1a64 } from './hash.js';

const piic = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

describe('document hash', () => {
  it('is FNV-1a 64 (the published test vectors)', () => {
    expect(fnv1a64('')).toBe('cbf29ce484222325');
    expect(fnv1a64('a')).toBe('af63dc4c8601ec8c');
    expect(fnv1a64('foobar')).toBe('85944171f73967e8');
  });

  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: undefined } })).toBe('{"a":{"d":[2,{"e":0,"f":1}]},"b":1}');
  });

  it('is the same for the same document written in another key order, and changes with a parameter', () => {
    const a = piic();
    const reordered = JSON.parse(canonicalJson(a)) as ProjectDocument;
    expect(documentHash(reordered)).toBe(documentHash(a));
    expect(documentHash(a)).toMatch(/^[0-9a-f]{16}$/);
    const b = piic();
    b.app.nodes[0].params = { ...b.app.nodes[0].params, width: 17 };
    expect(documentHash(b)).not.toBe(documentHash(a));
  });
});
