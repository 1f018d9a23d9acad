import { describe, expect, it } from 'vitest';
import { scanPlan, simulateScan, TraceColumns, type Calibration, type TraceEvent } from '@pipeloom/core';
import { CALIBRATION_FORMAT } from '@pipeloom/core/internal';
import { findKernel, withDefaults } from '@pipeloom/kernels';
import { calibratedPerApplication, hintPerApplication, runFires, scanTimeline, stageOf, workerOf } from './lanes.js';
import { emptyDocument } from '../document/documents.js';

/** A fire on worker w's PE (cpu@h<w>); other nodes on cpu@h9 unless placed. */
const fire = (
  node: string,
  iteration: number,
  start: number,
  end: number,
  pe = `cpu@h${/\.w(\d+)$/.exec(node)?.[1] ?? (node.includes('barrier') ? 0 : 9)}`,
): TraceEvent => ({ host: pe.split('@')[1], pe, thread: 'main', kind: 'fire', name: node, node, iteration, cycle: iteration, start, end });

// Kogge-Stone, N = 8 on p = 2: w0 scans 0..3 (3 applications), w1 scans 4..7 (3), the network's
// one application on w1 (ks.r1.w1) and w1's second stage (3). Worker 0 is slow: its local scan
// takes 5 ms, so ks.r1.w1 waits for it. Iterations at scales 1, 2 and 1.5 (spans 9, 18, 13.5 ms):
// the median is iteration 2.
const plan = scanPlan(8, 2, 'kogge-stone', 'scan-then-propagate', 'inclusive');
function trace(extra: (it: number, t: number, k: number) => TraceEvent[] = () => []): TraceColumns {
  const c = new TraceColumns();
  [1, 2, 1.5].forEach((k, it) => {
    const t = it * 100_000;
    const ms = (a: number) => t + a * 1000 * k;
    c.append([
      fire('src', it, t - 50, t),
      fire('scan1/local.w0', it, ms(0), ms(5)),
      fire('scan1/local.w1', it, ms(0), ms(3)),
      fire('scan1/ks.r1.w1', it, ms(5), ms(6)),
      fire('scan1/prop.w1', it, ms(6), ms(9)),
      fire('scan2/local.w7', it, t, t + 50_000, 'cpu@h9'),
      ...extra(it, t, k),
    ]);
  });
  return c;
}

describe("the scan timeline's lanes", () => {
  it("a node's stage and worker come from its key; a barrier relay runs on worker 0", () => {
    expect(['local.w3', 'ks.r2.w5', 'bk.r4.w1', 'prop.w0', 'barrier.r2'].map(stageOf)).toEqual(['local', 'network', 'network', 'prop', 'barrier']);
    expect(['local.w3', 'ks.r2.w5', 'prop.w12', 'barrier.r2', 'other'].map(workerOf)).toEqual([3, 5, 12, 0, undefined]);
  });

  it("the measured fires: the median iteration's, from its first fire, each on its worker; the mean cost over every iteration", () => {
    const r = runFires(trace(), 'scan1', plan)!;
    expect(r.iterations).toBe(3);
    expect(r.iteration).toBe(2);
    expect(r.count).toBe(12);
    // 12 + 24 + 18 ms of fires over 3 x 10 applications.
    expect(r.perApplication).toBeCloseTo(1.8e-3, 12);
    const byKey = Object.fromEntries(r.fires.map((f) => [f.key, [f.worker, +(f.start * 1e3).toFixed(6), +(f.end * 1e3).toFixed(6)]]));
    expect(byKey).toEqual({ 'local.w0': [0, 0, 7.5], 'local.w1': [1, 0, 4.5], 'ks.r1.w1': [1, 7.5, 9], 'prop.w1': [1, 9, 13.5] });
  });

  it('three bands on one axis: (a) the mean cost, (b) the replay, (c) the measured fires, each with its makespan', () => {
    const t = scanTimeline({ plan, execution: 'eager', run: runFires(trace(), 'scan1', plan) });
    expect(t.bands.map((b) => b.id)).toEqual(['mean', 'replay', 'measured']);
    const [a, b, c] = t.bands.map((x) => x.makespan * 1e3);
    // (a): 7 applications on w1's chain (local 3, network 1, second stage 3) at 1.8 ms.
    expect(a).toBeCloseTo(12.6, 9);
    // (b) replays the median iteration: ks.r1.w1 waits for w0's 7.5 ms; (c) is that iteration.
    expect(b).toBeCloseTo(13.5, 9);
    expect(c).toBeCloseTo(13.5, 9);
    expect(t.axis * 1e3).toBeCloseTo(13.5, 9);
    expect(t.bands[0].source).toMatch(/calibrated from the last run: 1\.80 ms per application \(12 fires over 3 iterations\)/);
    expect(t.notes).toEqual([]);
  });

  it("stages per node, waits and idle per lane; the critical path is simulateScan's, outlined", () => {
    const run = runFires(trace(), 'scan1', plan)!;
    const t = scanTimeline({ plan, execution: 'eager', run });
    const kinds = (band: number, w: number) => t.bands[band].lanes[w].slices.map((s) => `${s.kind}${s.key ? ` ${s.key}` : ''}${s.critical ? ' *' : ''}`);
    // (b): w0 is busy 7.5 ms, then idle; w1 waits for w0's total before the network node.
    expect(kinds(1, 0)).toEqual(['local local.w0 *', 'idle']);
    expect(kinds(1, 1)).toEqual(['local local.w1', 'wait', 'network ks.r1.w1 *', 'prop prop.w1 *']);
    expect(t.bands[1].criticalPath).toEqual(['local.w0', 'ks.r1.w1', 'prop.w1']);
    const seconds = Object.fromEntries(run.fires.map((f) => [f.key, [f.end - f.start]]));
    expect(t.bands[1].criticalPath).toEqual(simulateScan(plan, { kind: 'replay', per: 'firing', seconds }).criticalPath);
    // (a) at an even cost: w1's own chain is the longest; w0 idles after its block.
    expect(kinds(0, 1)).toEqual(['local local.w1 *', 'network ks.r1.w1 *', 'prop prop.w1 *']);
    expect(kinds(0, 0)).toEqual(['local local.w0', 'idle']);
    // (c): the measured lanes have the same stages and the same wait, nothing outlined.
    expect(kinds(2, 1)).toEqual(['local local.w1', 'wait', 'network ks.r1.w1', 'prop prop.w1']);
    const w1 = t.bands[2].lanes[1];
    expect([w1.busy, w1.wait, w1.idle].map((s) => +(s * 1e3).toFixed(6))).toEqual([10.5, 3, 0]);
  });

  it("rounds: a measured barrier relay is drawn on worker 0's lane in the barrier color's stage, and its mean time is the simulations' barrier", () => {
    const run = runFires(
      trace((it, t, k) => [fire('scan1/barrier.r1', it, t + 5000 * k, t + 5200 * k)]),
      'scan1',
      plan,
    )!;
    expect(run.barrier * 1e3).toBeCloseTo((0.2 + 0.4 + 0.3) / 3, 9);
    const t = scanTimeline({ plan, execution: 'rounds', run });
    expect(t.bands[2].lanes[0].slices.map((s) => s.kind)).toEqual(['local', 'barrier', 'idle']);
    // The replay's network level waits for the barrier after the level before (w0's 7.5 ms).
    expect(t.bands[1].makespan * 1e3).toBeCloseTo(7.5 + 0.3 + 1.5 + 4.5, 9);
  });

  it("other fires on a worker's PE during the iteration (another node, the next iteration) are drawn as such, not as its wait", () => {
    // w1's PE fires `check` from 3 to 4 ms (scale 1.5: 4.5 to 6) and the next iteration's local scan runs into the span.
    const c = trace((it, t, k) => [fire('check', it, t + 3000 * k, t + 4000 * k, 'cpu@h1')]);
    c.append([fire('scan1/local.w0', 3, 200_000 + 12_000, 200_000 + 20_000)]);
    const run = runFires(c, 'scan1', plan)!;
    expect(run.iteration).toBe(2);
    const t = scanTimeline({ plan, execution: 'eager', run });
    const lane = (w: number) => t.bands[2].lanes[w].slices.map((s) => `${s.kind} ${s.key} ${+(s.start * 1e3).toFixed(3)}..${+(s.end * 1e3).toFixed(3)}`);
    expect(lane(1)).toEqual(['local local.w1 0..4.5', 'other check (iteration 2) 4.5..6', 'wait  6..7.5', 'network ks.r1.w1 7.5..9', 'prop prop.w1 9..13.5']);
    expect(lane(0)).toEqual(['local local.w0 0..7.5', 'idle  7.5..12', 'other scan1/local.w0 (iteration 3) 12..13.5']);
    expect(t.bands[2].lanes[1].wait * 1e3).toBeCloseTo(1.5, 9);
    // The replay is of the scan's own nodes only.
    expect(t.bands[1].makespan * 1e3).toBeCloseTo(13.5, 9);
  });

  it('fires in flight together on a GPU PE count from the end of the one before: replayed and drawn in turn, their mean not counted twice', () => {
    // w1 on a GPU: its local scan, network application and second stage submitted at 3, 3.1 and
    // 3.2 ms, all read back at 9 ms; w0's block 0 to 3 ms.
    const c = new TraceColumns();
    c.append([
      fire('scan1/local.w0', 0, 0, 3000),
      fire('scan1/local.w1', 0, 3000, 9000, 'gpu0@h1'),
      fire('scan1/ks.r1.w1', 0, 3100, 9000, 'gpu0@h1'),
      fire('scan1/prop.w1', 0, 3200, 9000, 'gpu0@h1'),
    ]);
    const run = runFires(c, 'scan1', plan)!;
    // 3 ms + 6 ms of own time over 10 applications.
    expect(run.perApplication! * 1e3).toBeCloseTo(0.9, 9);
    const t = scanTimeline({ plan, execution: 'eager', run });
    const lane = t.bands[2].lanes[1].slices.map(
      (s) => `${s.kind} ${+(s.start * 1e3).toFixed(3)}..${+(s.end * 1e3).toFixed(3)}${s.queued !== undefined ? ` queued ${+(s.queued * 1e3).toFixed(3)}` : ''}`,
    );
    expect(lane).toEqual(['wait 0..3', 'local 3..9', 'network 9..9 queued 3.1', 'prop 9..9 queued 3.2']);
    // The replay: w1's 6 ms from 0 (its block is there at 0; in the run it came at 3 ms), the rest free.
    expect(t.bands[1].makespan * 1e3).toBeCloseTo(6, 9);
  });

  it("fires of another p (a worker the plan lacks) are not this plan's run", () => {
    const c = trace();
    c.append([fire('scan1/local.w5', 0, 0, 10)]);
    expect(runFires(c, 'scan1', plan)).toBeNull();
    expect(runFires(trace(), 'scan3', plan)).toBeNull();
  });

  it("without a run: (a) alone from the operator's cost hint, per worker PE, and a note on what a run adds", () => {
    const doc = emptyDocument();
    const mulmod = findKernel('mat.mulmod')!;
    const d = {
      ...doc,
      arch: {
        ...doc.arch,
        pes: [
          { id: 'cpu@h0', host: 'h0', kind: 'cpu' as const, memory: 1 << 30 },
          { id: 'gpu0@h0', host: 'h0', kind: 'gpu' as const, memory: 1 << 30, flops: 2e12 },
        ],
      },
    };
    const hint = hintPerApplication(mulmod, { k: 3 }, d, ['cpu@h0', 'gpu0@h0'], 2)!;
    const cost = mulmod.cost({ k: 3, mode: 'apply', count: 1 });
    expect(hint[0]).toBeCloseTo(cost.flops / 5e10 + cost.bytes / 2e10, 18);
    expect(hint[1]).toBeCloseTo(cost.flops / 2e12 + cost.bytes / 1.5e11, 18);
    const t = scanTimeline({ plan, execution: 'eager', hint, run: null });
    expect(t.bands.map((b) => b.id)).toEqual(['mean']);
    expect(t.bands[0].source).toContain("the operator's cost hint");
    expect(t.notes.join(' ')).toMatch(/No run of the document as it is yet: .*\(b\).*\(c\)/);
  });

  it("without a run, the project's calibration gives each worker's PE its cost per application (its firings of the operator with these params)", () => {
    const mulmod = findKernel('mat.mulmod')!;
    const firing = (pe: string, mode: string, count: number, seconds: number, nodes: number, k = 3) => ({
      kernel: 'mat.mulmod',
      params: withDefaults(mulmod, { k, mode, count }) as Record<string, unknown>,
      pe,
      seconds,
      nodes,
    });
    const cal: Calibration = {
      format: CALIBRATION_FORMAT,
      document: { name: 'scan', hash: 'x' },
      machine: { hostname: 'h', cpu: 'c', adapters: {} },
      date: '2026-11-27T22:00:00.000Z',
      iterations: 10,
      firings: [
        // cpu@h0: a scan of 4 (3 applications) in 3 ms, twice; cpu@h1: one application in 2 ms and a propagate of 3 in 6 ms.
        firing('cpu@h0', 'scan', 4, 3e-3, 2),
        firing('cpu@h1', 'apply', 1, 2e-3, 1),
        firing('cpu@h1', 'propagate', 3, 6e-3, 1),
        // Another k, another kernel: not this operator's cost.
        firing('cpu@h0', 'scan', 4, 1, 5, 4),
        { kernel: 'scan.source', params: {}, pe: 'cpu@h0', seconds: 1, nodes: 1 },
      ],
      transfers: [],
    };
    const c = calibratedPerApplication(cal, mulmod, { k: 3 }, ['cpu@h0', 'cpu@h1'], 2)!;
    expect(c.perApplication.map((x) => +(x * 1e3).toFixed(9))).toEqual([1, 2]);
    expect(c.firings).toBe(4);
    // A worker whose PE the calibration lacks: no calibrated cost.
    expect(calibratedPerApplication(cal, mulmod, { k: 3 }, ['cpu@h0', 'gpu0@h0'], 2)).toBeUndefined();
    const t = scanTimeline({ plan, execution: 'eager', hint: [1, 1], calibrated: { ...c, date: cal.date }, run: null });
    expect(t.bands[0].source).toBe("the project's calibration of 2026-11-27 22:00 UTC: 1.00 ms to 2.00 ms per application on the workers' PEs (4 firings)");
    // w1's chain: 7 applications at 2 ms.
    expect(t.bands[0].makespan * 1e3).toBeCloseTo(14, 9);
  });

  it('a scan of 64 workers simulates every lane', () => {
    const big = scanPlan(4096, 64, 'kogge-stone', 'scan-then-propagate', 'inclusive');
    const t = scanTimeline({ plan: big, execution: 'rounds', hint: Array(64).fill(1e-3), run: null });
    expect(t.bands[0].lanes).toHaveLength(64);
    expect(t.bands[0].lanes.every((l) => l.slices.some((s) => s.kind === 'local'))).toBe(true);
    expect(t.bands[0].criticalPath.length).toBeGreaterThan(2);
  });
});
