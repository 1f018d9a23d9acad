import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowerDocument } from '@pipeloom/core';
import { readDocument } from './documents.js';
import { loweredPe, targetLabel, targetOf, targetTitle } from './targets.js';

// Reading mapping entries that are PE lists (a node with tasks); the store's changes to them
// are tested in store/targets.test.ts.

const mlem = () => readDocument(readFileSync(new URL('../../../../examples/mlem.json', import.meta.url), 'utf8')).doc!;

describe('reading an entry', () => {
  it('a list is a badge with a count and a title spelling it out; one PE is itself', () => {
    expect(targetLabel(['gpu0@h0', 'cpu@h0'])).toBe('gpu0@h0 +1');
    expect(targetTitle(['gpu0@h0', 'cpu@h0'])).toBe('shares on gpu0@h0, cpu@h0 in turn (share j on PE j mod 2); the sum on gpu0@h0');
    expect(targetLabel('cpu@h0')).toBe('cpu@h0');
    expect(targetLabel(undefined)).toBe('');
  });

  it('ticked PEs become no entry, one PE, or a list', () => {
    expect(targetOf([])).toBeNull();
    expect(targetOf(['cpu@h0'])).toBe('cpu@h0');
    expect(targetOf(['gpu0@h0', 'cpu@h0'])).toEqual(['gpu0@h0', 'cpu@h0']);
  });

  it('shares of a list-mapped node are placed as core lowers them: share j on L[j mod P], the combine on L[0]', () => {
    const doc = mlem();
    const low = lowerDocument(doc).lowered!;
    for (const n of low.doc.app.nodes) expect(loweredPe(doc.mapping, n.id)).toBe(low.doc.mapping[n.id]);
    expect(loweredPe(doc.mapping, 'projbp[3]')).toBe('cpu@h0');
    // An entry naming a share itself wins, as in core.
    expect(loweredPe({ ...doc.mapping, 'projbp[3]': 'gpu0@h0' }, 'projbp[3]')).toBe('gpu0@h0');
  });
});
