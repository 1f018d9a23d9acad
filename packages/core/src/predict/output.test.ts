import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { pinnedDocuments } from '../testing/pinned.js';
import { predict } from './predict.js';

// predict()'s whole output but the IGs (compile/output.test.ts pins those), pinned as a digest
// per document and barrier setting: cycle times, phases and bottlenecks, busy time per PE and
// link, and the predicted timeline. A change meant to leave it alone must keep every digest; a
// change meant to alter it updates the snapshot (`npx vitest run -u`) and says why.

const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

describe('predict output', () => {
  it('is the same as recorded, document by document, without and with a barrier cost', () => {
    const got: Record<string, string> = {};
    registerExampleKernels();
    for (const [name, doc] of pinnedDocuments({ random: 30, layered: 1 })) {
      // Barrier mode's digests predate the sync modes: `sync` and `bottleneck` are left out of them.
      for (const barrier of [0, 1e-4]) {
        const r = predict(doc, { barrier, timelineEvents: 5000, sync: 'barrier' });
        const strip = <T extends { ig: unknown; sync: unknown; bottleneck: unknown }>(p: T) => ({
          ...p,
          ig: undefined,
          sync: undefined,
          bottleneck: undefined,
        });
        got[`${name} barrier ${barrier}`] = digest(
          r.ok ? { ...r, prediction: { ...r.prediction, overlap: strip(r.prediction.overlap!), noOverlap: strip(r.prediction.noOverlap!) } } : r,
        );
      }
      const r = predict(doc, { timelineEvents: 5000, sync: 'self-timed' });
      const strip = <T extends { ig: unknown }>(p: T) => ({ ...p, ig: undefined });
      got[`${name} self-timed`] = digest(
        r.ok ? { ...r, prediction: { ...r.prediction, overlap: strip(r.prediction.overlap!), noOverlap: strip(r.prediction.noOverlap!) } } : r,
      );
    }
    expect(got).toMatchSnapshot();
  });
});
