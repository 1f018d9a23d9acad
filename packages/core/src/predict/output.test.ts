import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { layeredDocument, randomDocument } from '../testing/generate.js';
import { predict } from './predict.js';

// predict()'s whole output but the IGs (compile/output.test.ts pins those), pinned as a digest
// per document and barrier setting: cycle times, phases and bottlenecks, busy time per PE and
// link, and the predicted timeline. A change meant to leave it alone must keep every digest; a
// change meant to alter it updates the snapshot (`npx vitest run -u`) and says why.

const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

function documents(): [string, unknown][] {
  const dir = new URL('../../../../examples/', import.meta.url);
  const docs: [string, unknown][] = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8'))]);
  for (let s = 0; s < 30; s++) docs.push([`random ${s}`, randomDocument(s, { nodes: 3 + (s % 25), hosts: 1 + (s % 4), maxGpus: s % 4, overlap: true })]);
  docs.push(['layered 0', layeredDocument(0, { nodes: 400, hosts: 4, gpus: 1 })]);
  return docs;
}

describe('predict output', () => {
  it('is the same as recorded, document by document, without and with a barrier cost', () => {
    const got: Record<string, string> = {};
    for (const [name, doc] of documents()) {
      for (const barrier of [0, 1e-4]) {
        const r = predict(doc, { barrier, timelineEvents: 5000 });
        const strip = <T extends { ig: unknown }>(p: T) => ({ ...p, ig: undefined });
        got[`${name} barrier ${barrier}`] = digest(r.ok ? { ...r, prediction: { ...r.prediction, overlap: strip(r.prediction.overlap), noOverlap: strip(r.prediction.noOverlap) } } : r);
      }
    }
    expect(got).toMatchSnapshot();
  });
});
