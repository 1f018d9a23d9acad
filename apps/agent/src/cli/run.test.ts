import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { piic } from '../testing/fixtures.js';

const root = join(import.meta.dirname, '../../../..');

// The measured times it predicts from are core's (run/analysis.test.ts).
describe('the run\'s calibrated prediction', () => {
  it('pipeloom run prints both predictions and the runtime\'s overhead', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-calibrated-')), 'piic.json');
    writeFileSync(file, JSON.stringify(piic({ iterations: 6 })));
    const r = spawnSync(process.execPath, [join(root, 'apps/agent/bin/pipeloom.js'), 'run', file, '--overlap'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/predicted \(document rates\), measured\/predicted \d+\.\d\d/);
    expect(r.stdout).toMatch(/predicted \(measured kernel and transfer times\), measured\/predicted \d+\.\d\d: the runtime's overhead/);
  });
});
