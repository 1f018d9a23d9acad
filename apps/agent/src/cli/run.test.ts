import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '@pipeloom/core';
import { piic } from '../testing/fixtures.js';
import { measuredTimes } from './run.js';

const root = join(import.meta.dirname, '../../../..');

const ev = (e: Partial<TraceEvent>): TraceEvent => ({ host: 'h0', pe: 'cpu@h0', thread: 'main', kind: 'fire', name: '', iteration: 0, cycle: 0, start: 0, end: 0, ...e }) as TraceEvent;

describe('the run\'s calibrated prediction', () => {
  it('takes each node\'s mean firing time and each transfer\'s mean time per cycle, both ends summed', () => {
    const t = measuredTimes([
      ev({ kind: 'fire', node: 'P', start: 0, end: 1000 }),
      ev({ kind: 'fire', node: 'P', cycle: 1, start: 0, end: 3000 }),
      // A host-to-host transfer: the sender's send and the receiver's copy, in two cycles.
      ev({ kind: 'transfer', buffer: 'b', from: 'a', cycle: 0, start: 0, end: 4000 }),
      ev({ kind: 'transfer', host: 'h1', buffer: 'b', from: 'a', cycle: 0, start: 5000, end: 6000 }),
      ev({ kind: 'transfer', buffer: 'b', from: 'a', cycle: 1, start: 0, end: 2000 }),
      ev({ kind: 'transfer', host: 'h1', buffer: 'b', from: 'a', cycle: 1, start: 3000, end: 4000 }),
      ev({ kind: 'wait', buffer: 'b', from: 'a', cycle: 1, start: 0, end: 9000 }),
      ev({ kind: 'barrier', cycle: 1, start: 0, end: 9000 }),
    ]);
    expect(t.nodeTimes).toEqual({ P: 2e-3 });
    expect(t.transferTimes['a->b']).toBeCloseTo(4e-3, 12);
  });

  it('pipeloom run prints both predictions and the runtime\'s overhead', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-calibrated-')), 'piic.json');
    writeFileSync(file, JSON.stringify(piic({ iterations: 6 })));
    const r = spawnSync(process.execPath, [join(root, 'apps/agent/bin/pipeloom.js'), 'run', file, '--overlap'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/predicted \(document rates\), measured\/predicted \d+\.\d\d/);
    expect(r.stdout).toMatch(/predicted \(measured kernel and transfer times\), measured\/predicted \d+\.\d\d: the runtime's overhead/);
  });
});
