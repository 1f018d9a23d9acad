import { readdirSync, readFileSync } from 'node:fs';
import { layeredDocument, randomDocument } from './generate.js';

// For tests only (it reads examples/ with node:fs, as tests may): the documents whose output
// compile/output.test.ts and predict/output.test.ts pin, by name. sobel.json needs the example
// kernel package: callers register it first (examples/kernels/register.ts).

/** Every example, then `random` seeded random documents and `layered` layered ones, each named. */
export function pinnedDocuments(o: { random: number; layered: number }): [string, unknown][] {
  const dir = new URL('../../../../examples/', import.meta.url);
  const docs: [string, unknown][] = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8'))]);
  for (let s = 0; s < o.random; s++) docs.push([`random ${s}`, randomDocument(s, { nodes: 3 + (s % 25), hosts: 1 + (s % 4), maxGpus: s % 4, overlap: true })]);
  for (let s = 0; s < o.layered; s++) docs.push([`layered ${s}`, layeredDocument(s, { nodes: 400 + s * 300, hosts: 4 + s * 8, gpus: 1 + s })]);
  return docs;
}
