import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipeloomInProcess as pipeloom, root } from '../testing/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-cli-'));

describe('pipeloom predict', () => {
  it("prints both strategies' cycle time and the speedup, and writes a Chrome trace", async () => {
    const trace = join(tmp, 'trace.json');
    const r = await pipeloom('predict', 'examples/piic.json', '--trace', trace, '--iterations', '12');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ {2}no overlap +\d/m);
    expect(r.stdout).toMatch(/^ {2}overlap +\d/m);
    expect(r.stdout).toMatch(/speedup of overlap: \d+\.\d\dx/);
    expect(r.stdout).toContain('set by link cpu@h0->cpu@h1');
    const t = JSON.parse(readFileSync(trace, 'utf8'));
    const fires = t.traceEvents.filter((e: { ph: string; cat?: string }) => e.ph === 'X' && e.cat === 'fire');
    // 12 iterations of 4 nodes.
    expect(fires).toHaveLength(48);
    expect(t.traceEvents.some((e: { ph: string }) => e.ph === 's')).toBe(true);
    expect(r.stderr).toContain(`wrote ${trace}`);
    expect(r.stderr).toMatch(/\(all \d+ cycles\)/);
    // What it is: the document (name, hash), the strategy and sync mode modelled, no calibration.
    expect(t.metadata).toEqual({
      source: 'predicted',
      document: { name: 'P-I-I-C on two hosts', hash: expect.stringMatching(/^[0-9a-f]{16}$/) },
      strategy: 'overlap',
      sync: 'self-timed',
      calibration: 'none',
    });
  });

  it('a loop whose delay covers its cycles round without overlap but not with: the other strategy is "not possible", with the delay it needs', async () => {
    const r = await pipeloom('predict', 'examples/accumulator.json', '--no-overlap', '--param', 'D=4', '--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.noOverlap.cycleTime).toBeGreaterThan(0);
    expect(j.overlap).toBeNull();
    expect(j.unavailable.overlap[0]).toMatch(
      /^app\.edges\[5\]\.delay: the loop L -> R -> L carries 4 iterations of initial tokens, but its data takes 8 cycles to go round .*raise the delay to 8/,
    );
    const text = await pipeloom('predict', 'examples/accumulator.json', '--no-overlap', '--param', 'D=4');
    expect(text.stdout).toMatch(/^ {2}overlap +not possible: the loop L -> R -> L/m);
    // With overlap asked for, the document cannot run: refused, exit 2.
    const own = await pipeloom('predict', 'examples/accumulator.json', '--overlap', '--param', 'D=4');
    expect(own.status).toBe(2);
    expect(own.stderr).toContain('raise the delay to 8');
  });

  it("a long run's trace says which cycles it covers (the first 200)", async () => {
    const trace = join(tmp, 'long.json');
    const r = await pipeloom('predict', 'examples/piic.json', '--trace', trace, '--iterations', '500');
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/\(cycles 0-199 of \d+\)/);
  });

  it('prints JSON with cycle times, phases and speedup', async () => {
    const r = await pipeloom('predict', 'examples/piic.json', '--format', 'json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.noOverlap.phases.map((p: { name: string }) => p.name)).toEqual(['cpu-cpu', 'pcie', 'fire']);
    expect(out.speedup).toBeCloseTo(out.noOverlap.cycleTime / out.overlap.cycleTime, 12);
  });

  it("models the document's sync mode (self-timed by default) in full and prints the other's cycles beside it; --sync picks", async () => {
    const r = await pipeloom('predict', 'examples/piic.json');
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/, self-timed$/);
    expect(r.stdout).toContain('barrier (the other sync mode):');
    const j = JSON.parse((await pipeloom('predict', 'examples/piic.json', '--sync', 'barrier', '--format', 'json')).stdout);
    expect(j.sync).toBe('barrier');
    expect(Object.keys(j.bySync).sort()).toEqual(['barrier', 'self-timed']);
    expect(j.bySync.barrier.noOverlap.cycleTime).toBe(j.noOverlap.cycleTime);
    // Without overlap, barriers add the phases up; self-timed, single buffers' writers and readers take turns.
    expect(j.bySync['self-timed'].noOverlap.cycleTime).toBeLessThan(j.bySync.barrier.noOverlap.cycleTime);
    const bad = await pipeloom('predict', 'examples/piic.json', '--sync', 'lockstep');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--sync must be one of self-timed, barrier');
  });

  it('exits 1 on a bad --iterations and 1 on a missing file', async () => {
    expect((await pipeloom('predict', 'examples/piic.json', '--iterations', '0')).status).toBe(1);
    const r = await pipeloom('predict');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('missing the project document');
  });
});
