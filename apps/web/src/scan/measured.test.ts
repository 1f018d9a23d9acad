import { describe, expect, it } from 'vitest';
import { scanModel, TraceColumns, type TraceEvent } from '@pipeloom/core';
import { measuredScan } from './measured.js';

const fire = (node: string, pe: string, iteration: number, start: number, end: number): TraceEvent => ({ host: 'h0', pe, thread: 'main', kind: 'fire', name: node, node, iteration, cycle: iteration, start, end });

describe('measured scan speedup', () => {
  it('a run whose fires follow the model at unit cost measures the model\'s speedup; other nodes are left out', () => {
    // Kogge-Stone, N = 8 on p = 2: each worker scans 4 (3 applications); w1 adds w0's total to
    // its first 3 (its last is the network's one application, beside it): depth 3 + 3, work 10.
    const m = scanModel(8, 2, 'kogge-stone');
    expect([m.work, m.span.depth]).toEqual([10, 6]);
    const c = new TraceColumns();
    for (const it of [0, 1, 2]) {
      const t = it * 100;
      c.append([
        fire('src', 'cpu@h0', it, t - 5, t),
        fire('scan1/local.w0', 'cpu@h0', it, t, t + 3),
        fire('scan1/local.w1', 'cpu@h1', it, t, t + 3),
        fire('scan1/ks.r1.w1', 'cpu@h1', it, t + 3, t + 4),
        fire('scan1/prop.w1', 'cpu@h1', it, t + 3, t + 6),
        fire('scan2/local.w5', 'cpu@h1', it, t, t + 50),
      ]);
    }
    const r = measuredScan(c, 'scan1', 8, (p) => scanModel(8, p, 'kogge-stone').work)!;
    expect(r.p).toBe(2);
    expect(r.iterations).toBe(3);
    expect(r.speedup).toBeCloseTo(m.speedup, 10);
  });

  it('no fires of the scan: no point', () => {
    const c = new TraceColumns();
    c.append([fire('src', 'cpu@h0', 0, 0, 1)]);
    expect(measuredScan(c, 'scan1', 8, () => 10)).toBeNull();
  });
});
