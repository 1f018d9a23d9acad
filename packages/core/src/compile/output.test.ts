import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { pinnedDocuments } from '../testing/pinned.js';
import { compile } from './compile.js';
import { allPrograms, bufferNodes, colorGroups } from './decode.js';
import type { ImplementationGraph } from './types.js';

// compile()'s whole output, pinned: a digest of its JSON per document and strategy, for the
// examples, random documents of every size the property tests use, and layered graphs. A change
// meant to leave the output alone (a faster pass, a leaner model) must keep every digest; a
// change meant to alter it updates the snapshot (`npx vitest run -u`) and says why in its commit.

const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);
// The buffers and programs as objects (decoded from the IG's columns), in their places: the
// digests recorded before the IG became columns still hold.
// The memory reports likewise, each with its colours' buffer lists in the place they had.
const expanded = (r: ReturnType<typeof compile>) =>
  r.ok ? { ...r, ig: { ...r.ig, buffers: bufferNodes(r.ig), memory: memoryReports(r.ig), programs: allPrograms(r.ig) } } : r;

function memoryReports(ig: ImplementationGraph) {
  const groups = colorGroups(ig);
  return Object.fromEntries(
    ig.programs.pes.map(({ pe }, p) => {
      const { before, after, lowerBound, capacity } = ig.memory[pe];
      return [pe, { before, after, lowerBound, colors: groups[p], capacity }];
    }),
  );
}

describe('compile output', () => {
  it('is the same as recorded, document by document, with and without overlap', () => {
    const got: Record<string, string> = {};
    registerExampleKernels();
    for (const [name, doc] of pinnedDocuments({ random: 60, layered: 3 })) {
      for (const overlap of [true, false]) got[`${name} ${overlap ? 'overlap' : 'no overlap'}`] = digest(expanded(compile(doc, { overlap })));
    }
    expect(got).toMatchSnapshot();
  });
});
