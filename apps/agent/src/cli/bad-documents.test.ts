import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { badCorpus } from '@pipeloom/core/testing';

// The CLI side of the bad-document corpus: each mistake exits 2 with the diagnostic on stderr
// naming the element, and never a stack trace. Real `pipeloom` processes.
const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/pipeloom.js', import.meta.url));
const dir = fileURLToPath(new URL('../../../../packages/core/corpus/bad', import.meta.url));
const cases = badCorpus(dir);

async function pipeloom(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], { timeout: 60_000 });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Runs at most `n` at once: 2 cores in CI. */
async function limited<T, R>(items: T[], n: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  }));
  return out;
}

describe('pipeloom compile on the bad-document corpus', () => {
  it('exits 2 for every bad document, naming the element, with no stack trace', async () => {
    const results = await limited(cases, 3, (c) => pipeloom(['compile', c.file]));
    results.forEach((r, i) => {
      const c = cases[i];
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(2);
      expect(r.stderr, c.name).toContain(c.path ? `${c.path}: ` : c.includes);
      expect(r.stderr, c.name).toContain(c.includes);
      expect(r.stderr, c.name).not.toMatch(/\n\s+at .+:\d+:\d+/);
    });
  }, 180_000);

  it('pipeloom run refuses a bad document the same way, before starting any agent', async () => {
    const c = cases.find((x) => x.name === 'unmapped-node')!;
    const r = await pipeloom(['run', c.file, '--iterations', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(c.includes);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });
});
