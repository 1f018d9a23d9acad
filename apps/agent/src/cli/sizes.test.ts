import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DOCUMENT_BYTES } from '@pipeloom/core';
import { pipeloomInProcessWithEnv as pipeloomWithEnv, root } from '../testing/fixtures.js';

// Input files are bounded before they are read: a document, a calibration or a PREESM file
// larger than the limit is refused naming the file, its size, the limit and the way to raise it.
// The limit is lowered through the environment so that the files stay small. Each command runs
// in this process (main(argv)) with the variable set while it runs.

const dir = mkdtempSync(join(tmpdir(), 'pipeloom-sizes-'));
const piic = readFileSync(join(root, 'examples/piic.json'), 'utf8');
const noStack = /\n\s+at .+:\d+:\d+/;
const SLAM = join(root, 'apps/agent/src/import/preesm/fixtures/Archi/8CoreX86TwoMemories.slam');
const FILTER = readFileSync(join(root, 'apps/agent/src/import/preesm/fixtures/Algo/filter.pi'), 'utf8');

describe('a document larger than the limit', () => {
  it('is refused before it is read: exit 2, naming the file, its size, the limit and the fix', async () => {
    const file = join(dir, 'piic.json');
    writeFileSync(file, piic);
    const size = Buffer.byteLength(piic);
    const limit = String(size - 1);
    for (const command of ['compile', 'predict']) {
      const r = await pipeloomWithEnv({ PIPELOOM_MAX_DOCUMENT_BYTES: limit }, command, file);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(`pipeloom ${command}: ${file} is ${size} bytes`);
      expect(r.stderr).toContain(`more than the limit of ${limit} bytes`);
      expect(r.stderr).toContain('raise the limit with PIPELOOM_MAX_DOCUMENT_BYTES=<bytes>');
      expect(r.stderr).not.toMatch(noStack);
    }
    // At the limit it is read as always.
    const ok = await pipeloomWithEnv({ PIPELOOM_MAX_DOCUMENT_BYTES: String(size) }, 'compile', file);
    expect(ok.status, ok.stderr).toBe(0);
  });

  it('a file whose size says nothing (a device) is read only one byte past the limit', async () => {
    const r = await pipeloomWithEnv({ PIPELOOM_MAX_DOCUMENT_BYTES: '4096' }, 'compile', '/dev/zero');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('/dev/zero has more than 4096 bytes, more than the limit of 4096 bytes');
  });

  it("a malformed limit is a usage mistake (exit 1); the default is core's", async () => {
    const r = await pipeloomWithEnv({ PIPELOOM_MAX_DOCUMENT_BYTES: '12MB' }, 'compile', join(root, 'examples/piic.json'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('PIPELOOM_MAX_DOCUMENT_BYTES must be a whole number of bytes, not "12MB"');
    expect(MAX_DOCUMENT_BYTES).toBe(64 * 1024 * 1024);
  });
});

describe('a hostile PREESM file', () => {
  it('larger than the limit: refused unread, naming the file and the limit', async () => {
    const pi = join(dir, 'big.pi');
    writeFileSync(pi, FILTER.replace('<data key="name">filter</data>', `<data key="name">filter</data><data key="note">${'&amp;'.repeat(20_000)}</data>`));
    const r = await pipeloomWithEnv({ PIPELOOM_MAX_DOCUMENT_BYTES: '50000' }, 'import', 'preesm', pi, SLAM, '-o', join(dir, 'big.json'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /error: .*big\.pi: algorithm: is \d+ bytes \([\d.]+ KiB\), more than the limit of 50000 bytes \(48.8 KiB\) \(split it, or raise the limit with PIPELOOM_MAX_DOCUMENT_BYTES=<bytes>\)/,
    );
    expect(r.stderr).not.toMatch(noStack);
  });

  it('of more than a million entity references: refused at the first one too many, with its line', async () => {
    const pi = join(dir, 'entities.pi');
    writeFileSync(pi, FILTER.replace('<data key="name">filter</data>', `<data key="name">filter</data>\n<data key="note">${'&amp;'.repeat(1_000_001)}</data>`));
    const r = await pipeloomWithEnv({}, 'import', 'preesm', pi, SLAM, '-o', join(dir, 'entities.json'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/error: .*entities\.pi:12: algorithm: malformed XML: more than 1000000 entity references/);
    expect(r.stderr).not.toMatch(noStack);
  });
});
