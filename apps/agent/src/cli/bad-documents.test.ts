import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { badCorpus } from '@pipeloom/core/testing';
import { pipeloomInProcess } from '../testing/fixtures.js';

// The CLI side of the bad-document corpus: each mistake exits 2 with the diagnostic on stderr
// naming the element, and never a stack trace (a throw comes back with its stack on stderr).
// Each command runs in this process (main(argv)): the exit code is main's; cli/conventions.test.ts
// checks that a process exits with it.
const dir = fileURLToPath(new URL('../../../../packages/core/corpus/bad', import.meta.url));
const cases = badCorpus(dir);

describe('pipeloom compile on the bad-document corpus', () => {
  it('exits 2 for every bad document, naming the element, with no stack trace', async () => {
    const results = await Promise.all(cases.map((c) => pipeloomInProcess('compile', c.file)));
    results.forEach((r, i) => {
      const c = cases[i];
      expect(r.status, `${c.name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, c.name).toContain(c.path ? `${c.path}: ` : c.includes);
      expect(r.stderr, c.name).toContain(c.includes);
      expect(r.stderr, c.name).not.toMatch(/\n\s+at .+:\d+:\d+/);
    });
  }, 180_000);

  it('pipeloom run refuses a bad document the same way, before starting any agent', async () => {
    const c = cases.find((x) => x.name === 'unmapped-node')!;
    const r = await pipeloomInProcess('run', c.file, '--iterations', '2');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(c.includes);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });
});
