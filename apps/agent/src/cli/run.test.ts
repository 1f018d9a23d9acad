import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { piic, pipeloomInProcess } from '../testing/fixtures.js';
import { versus } from './run.js';

// The measured times it predicts from are core's (run/analysis.test.ts).
describe("the run's calibrated prediction", () => {
  it("pipeloom run prints both predictions and the runtime's overhead", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-calibrated-')), 'piic.json');
    writeFileSync(file, JSON.stringify(piic({ iterations: 6 })));
    const r = await pipeloomInProcess('run', file, '--overlap');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/predicted \(document rates\): measured (\d+\.\d\dx|\d+x) (slower|faster) than predicted|as predicted/);
    expect(r.stdout).toMatch(
      /predicted from this run's own firing and transfer times: measured (\d+(\.\d\d)?x (slower than predicted \(the runtime's overhead|faster than predicted \(firings and copies overlapped)|as predicted)/,
    );
    expect(r.stdout).not.toMatch(/measured\/predicted/);
  });

  it('says how a measured cycle compares with a predicted one in words, whichever is longer', () => {
    expect(versus(0.014, 0.001)).toBe('measured 14x slower than predicted');
    expect(versus(0.00162, 0.001)).toBe('measured 1.62x slower than predicted');
    expect(versus(0.0007, 0.001)).toBe('measured 1.43x faster than predicted');
    expect(versus(0.001, 0.07)).toBe('measured 70x faster than predicted');
    expect(versus(0.001, 0.001)).toBe('measured as predicted');
  });
});

describe('pipeloom run --slow', () => {
  it('is refused in a static run, saying it is for task-bag runs, before any agent starts', async () => {
    const r = await pipeloomInProcess('run', 'examples/split-join.json', '--slow', 'cpu@h0=2');
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('pipeloom run: --slow applies to task-bag runs only (--mode taskbag); this run is static, where it would be ignored\n');
  });
});
