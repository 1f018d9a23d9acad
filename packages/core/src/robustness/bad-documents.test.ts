import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compile, parseDocument, type Diagnostic } from '../index.js';
import { badCorpus } from '../testing/corpus.js';

const dir = fileURLToPath(new URL('../../corpus/bad', import.meta.url));
const cases = badCorpus(dir);

function diagnose(text: string): Diagnostic[] {
  const parsed = parseDocument(text);
  if (!parsed.ok) return parsed.diagnostics;
  const compiled = compile(parsed.doc);
  expect(compiled.ok).toBe(false);
  return compiled.diagnostics;
}

describe('every bad document in the corpus gets an error naming the element', () => {
  it('covers the mistakes the issue lists', () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'malformed-json',
        'unknown-kernel',
        'cycle',
        'unmapped-node',
        'no-architecture-path',
        'type-mismatch',
        'buffer-exceeds-memory',
        'nan-param',
        'negative-param',
        'absurd-size',
        'duplicate-node-id',
      ]),
    );
  });

  for (const c of cases) {
    it(`${c.name}: ${c.path || '(document)'} ${c.includes}`, () => {
      const errors = diagnose(readFileSync(c.file, 'utf8')).filter((d) => d.severity === 'error');
      expect(errors.length).toBeGreaterThan(0);
      expect(
        errors.some((d) => d.path === c.path && d.message.includes(c.includes)),
        JSON.stringify(errors, null, 1),
      ).toBe(true);
      // A fix is always suggested, except where the message itself is the fix.
      for (const d of errors) expect(d.message).not.toMatch(/\n\s+at /);
    });
  }
});
