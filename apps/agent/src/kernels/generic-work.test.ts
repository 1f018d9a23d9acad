import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeTime, analyze } from '@pipeloom/core';
import { describe, expect, it } from 'vitest';
import { example, pipeloomAsync, root } from '../testing/fixtures.js';

// generic.work, a stand-in for a kernel not written yet, runs like a real one: `pipeloom run`
// pads each of its GPU firings to its cost hint's time (device emulation for those nodes),
// without --emulate-devices.

const pipeloom = pipeloomAsync;

describe('generic.work in a run', () => {
  it('every firing lasts at least its cost hint, on a GPU PE and on a CPU PE, on two local hosts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipeloom-generic-'));
    try {
      const doc = example('generic-work');
      // Small ports, heavy firings: the padding, not the data, sets each firing's time.
      for (const n of doc.app.nodes) n.params = { ...n.params, bytes: 4096, ...(n.id === 'left' ? { flops: 3e10 } : n.id === 'read' ? { flops: 1e9 } : {}) };
      const file = join(dir, 'proto.json');
      const trace = join(dir, 'trace.json');
      writeFileSync(file, JSON.stringify(doc));
      const model = analyze(doc).model!;
      const want = nodeTime(model, 'left' as never) * 1e6;
      const wantCpu = nodeTime(model, 'read' as never) * 1e6;
      expect(want).toBeGreaterThan(5_000);
      expect(wantCpu).toBeGreaterThan(5_000);
      const r = await pipeloom('run', file, '--iterations', '4', '--trace', trace);
      expect(r.stdout).toContain('run complete');
      expect(r.status).toBe(0);
      const events = (JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { name: string; ph: string; dur?: number; cat?: string }[] }).traceEvents;
      const left = events.filter((e) => e.name === 'left' && e.ph === 'X' && e.dur !== undefined);
      expect(left.length).toBe(4);
      for (const e of left) expect(e.dur!).toBeGreaterThanOrEqual(want * 0.999);
      // 'read' is on cpu@h0.
      const read = events.filter((e) => e.name === 'read' && e.ph === 'X' && e.dur !== undefined);
      expect(read.length).toBe(4);
      for (const e of read) expect(e.dur!).toBeGreaterThanOrEqual(wantCpu * 0.999);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
