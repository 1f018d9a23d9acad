import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyChanges } from '../document/changes.js';
import { readDocument } from '../document/documents.js';
import { compileBoth } from '../worker/compile.js';
import { onlyStrategyChanged } from './compiler.js';

// Flipping the strategy reuses the compiled pair: the worker compiled both, so the client
// recompiles only for edits that change something else.

const piic = readDocument(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8')).doc!;

describe('strategy flips compile nothing', () => {
  it('options.overlap alone keeps the result; any other edit, or a strategy missing from the result, recompiles', async () => {
    const out = await compileBoth(piic);
    const flipped = applyChanges(piic, [{ type: 'options/update', patch: { overlap: false } }]).doc;
    expect(onlyStrategyChanged(piic, flipped, out)).toBe(true);
    expect(onlyStrategyChanged(flipped, piic, out)).toBe(true);
    const both = applyChanges(piic, [{ type: 'options/update', patch: { overlap: false, iterations: 7 } }]).doc;
    expect(onlyStrategyChanged(piic, both, out)).toBe(false);
    const renamed = applyChanges(flipped, [{ type: 'doc/update', patch: { name: 'other' } }]).doc;
    expect(onlyStrategyChanged(piic, renamed, out)).toBe(false);
    expect(onlyStrategyChanged(piic, piic, out)).toBe(false);
    expect(onlyStrategyChanged(piic, flipped, { ...out, noOverlap: null })).toBe(false);
    expect(onlyStrategyChanged(piic, flipped, null)).toBe(false);
  });
});
