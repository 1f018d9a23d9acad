import { describe, expect, it } from 'vitest';
import { scanModel, TraceColumns, type TraceEvent } from '@pipeloom/core';
import { measuredScan } from './measured.js';

const fire = (node: string, pe: string, iteration: number, start: number, end: number): TraceEvent => ({
  host: 'h0',
  pe,
  thread: 'main',
  kind: 'fire',
  name: node,
  node,
  iteration,
  cycle: iteration,
  start,
  end,
});

describe('measured scan speedup', () => {
  it("a run whose fires follow the model at unit cost measures the model's speedup; other nodes are left out", () => {
    // Kogge-Stone, N = 8 on p = 2: each worker scans 4 (3 applications); w1 adds w0's total to
    // its first 3 (its last is the network's one application, before it on the same PE): span
    // 3 + 1 + 3 with the worker serialised (the model's speedup), work 10. (Overlapping fires on
    // one PE, a GPU batch's, count from when the one before ended: the next test.)
    const m = scanModel(8, 2, 'kogge-stone');
    expect([m.work, m.span.serialised]).toEqual([10, 7]);
    const c = new TraceColumns();
    for (const it of [0, 1, 2]) {
      const t = it * 100;
      c.append([
        fire('src', 'cpu@h0', it, t - 5, t),
        fire('scan1/local.w0', 'cpu@h0', it, t, t + 3),
        fire('scan1/local.w1', 'cpu@h1', it, t, t + 3),
        fire('scan1/ks.r1.w1', 'cpu@h1', it, t + 3, t + 4),
        fire('scan1/prop.w1', 'cpu@h1', it, t + 4, t + 7),
        fire('scan2/local.w5', 'cpu@h1', it, t, t + 50),
      ]);
    }
    const r = measuredScan(c, 'scan1', 8, (p) => scanModel(8, p, 'kogge-stone').work)!;
    expect(r.p).toBe(2);
    expect(r.iterations).toBe(3);
    expect(r.speedup).toBeCloseTo(m.speedup, 10);
  });

  it("a GPU PE's fires submitted together and read back together count the batch's time once", () => {
    // N = 8 on p = 2; w0 on the CPU scans its block in 3 ms; w1 on the GPU submits its local
    // scan, network application and second stage at 0, 0.1 and 0.2 ms, all read back at 6 ms:
    // own times 6, 0 and 0 (counted in full they would be 6 + 5.9 + 5.8). Busy 9 ms over the
    // model's 10 applications: c = 0.9 ms; span 6 ms; speedup 7 x 0.9 / 6 = 1.05.
    const c = new TraceColumns();
    c.append([
      fire('scan1/local.w0', 'cpu@h0', 0, 0, 3000),
      fire('scan1/local.w1', 'gpu0@h0', 0, 0, 6000),
      fire('scan1/ks.r1.w1', 'gpu0@h0', 0, 100, 6000),
      fire('scan1/prop.w1', 'gpu0@h0', 0, 200, 6000),
    ]);
    const r = measuredScan(c, 'scan1', 8, () => 10)!;
    expect(r.speedup).toBeCloseTo((7 * 0.9) / 6, 10);
  });

  it('no fires of the scan: no point', () => {
    const c = new TraceColumns();
    c.append([fire('src', 'cpu@h0', 0, 0, 1)]);
    expect(measuredScan(c, 'scan1', 8, () => 10)).toBeNull();
  });
});
