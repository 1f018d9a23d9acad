import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { TraceColumns } from '../trace/columns.js';
import type { TraceEvent } from '../trace/event.js';
import { analyseTrace, measuredTimes, TraceAccumulator, type AnalysisOptions } from './analysis.js';

const ev = (e: Partial<TraceEvent>): TraceEvent => ({
  host: 'h0',
  pe: 'cpu@h0',
  thread: 'main',
  kind: 'fire',
  name: 'x',
  iteration: 0,
  cycle: 0,
  start: 0,
  end: 0,
  ...e,
});

/**
 * A barrier-mode run of 7 cycles (fill 2, iterations 6, so cycle 6 is the drain) whose cycles
 * end at 300, 500, 600, 700, 800, 900, 950 µs: a slow first cycle, a 200 µs one, four steady
 * ones of 100 µs and a 50 µs drain. In every cycle starting at s and ending at e:
 *   cpu@h0 main:         fire [s, s+50], barrier [s+50, e]
 *   gpu0@h0 recv:cpu@h0: transfer [s, s+20]
 *   gpu0@h0 main:        wait [s, s+20], fire [s+20, s+40], barrier [s+40, e]
 */
function barrierRun(): TraceEvent[] {
  const ends = [300, 500, 600, 700, 800, 900, 950];
  const out: TraceEvent[] = [];
  ends.forEach((e, k) => {
    const s = k ? ends[k - 1] : 0;
    const c = { cycle: k, iteration: k };
    out.push(ev({ ...c, name: 'P', node: 'P', start: s, end: s + 50 }));
    out.push(ev({ ...c, kind: 'barrier', name: 'barrier fire', start: s + 50, end: e }));
    out.push(ev({ ...c, pe: 'gpu0@h0', thread: 'recv:cpu@h0', kind: 'transfer', name: 'bn_2', buffer: 'bn_2', from: 'bn_1', start: s, end: s + 20 }));
    out.push(ev({ ...c, pe: 'gpu0@h0', kind: 'wait', name: 'wait bn_2', start: s, end: s + 20 }));
    out.push(ev({ ...c, pe: 'gpu0@h0', name: 'I', node: 'I', start: s + 20, end: s + 40 }));
    out.push(ev({ ...c, pe: 'gpu0@h0', kind: 'barrier', name: 'barrier fire', start: s + 40, end: e }));
  });
  return out;
}

describe('trace analysis', () => {
  it('cycle time: the steady cycles only, fill and drain left out', () => {
    const a = analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6 });
    expect(a.cycles).toBe(7);
    expect(a.steady).toEqual({ from: 2, to: 5 });
    // (900 - 500) µs over cycles 2..5.
    expect(a.cycleTime).toBeCloseTo(100e-6, 12);
    expect(a.throughput).toBeCloseTo(10_000, 6);
    expect(a.cycleSpread).toEqual({ count: 4, p50: expect.closeTo(100e-6, 12), p95: expect.closeTo(100e-6, 12), max: expect.closeTo(100e-6, 12) });
    // Without the iterations the drain counts: (950 - 500) / 5.
    expect(analyseTrace(barrierRun(), { fillCycles: 2 }).cycleTime).toBeCloseTo(90e-6, 12);
    // A live trace whose cycles after 4 are still arriving: (800 - 500) / 3.
    expect(analyseTrace(barrierRun(), { fillCycles: 2, lastCycle: 4 }).cycleTime).toBeCloseTo(100e-6, 12);
  });

  it("with no steady cycle (iterations <= fill) the cycle time is the whole trace's mean", () => {
    const a = analyseTrace(barrierRun(), { fillCycles: 2, iterations: 2 });
    expect(a.steady).toBeNull();
    expect(a.cycleTime).toBeCloseTo(950e-6 / 7, 12);
  });

  it('per lane: busy, barrier and wait seconds and their shares of the span', () => {
    const a = analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6 });
    expect(a.span).toBeCloseTo(950e-6, 12);
    const lane = (pe: string, thread: string) => a.lanes.find((l) => l.pe === pe && l.thread === thread)!;
    expect(a.lanes.map((l) => `${l.pe} ${l.thread}`)).toEqual(['cpu@h0 main', 'gpu0@h0 main', 'gpu0@h0 recv:cpu@h0']);
    expect(lane('cpu@h0', 'main')).toMatchObject({
      busy: expect.closeTo(350e-6, 12),
      barrier: expect.closeTo(600e-6, 12),
      wait: 0,
      utilisation: expect.closeTo(350 / 950, 12),
    });
    expect(lane('gpu0@h0', 'main')).toMatchObject({
      busy: expect.closeTo(140e-6, 12),
      barrier: expect.closeTo(670e-6, 12),
      wait: expect.closeTo(140e-6, 12),
      waitShare: expect.closeTo(140 / 950, 12),
    });
    expect(lane('gpu0@h0', 'recv:cpu@h0').utilisation).toBeCloseTo(140 / 950, 12);
    // Of the 3 lanes x 950 µs: 630 busy, 1270 in barriers, 140 waiting.
    expect(a.busyShare).toBeCloseTo(630 / 2850, 12);
    expect(a.barrierShare).toBeCloseTo(1270 / 2850, 12);
    expect(a.waitShare).toBeCloseTo(140 / 2850, 12);
  });

  it("leaves counter samples out: the bag's lane is no lane of the run, and samples before or after the slices widen nothing", () => {
    const counters: TraceEvent[] = [-100, 0, 400, 2000].map((start, k) => ({
      host: 'coordinator',
      pe: 'bag',
      thread: 'bag',
      kind: 'counter',
      name: k % 2 ? 'in flight' : 'bag depth',
      value: k,
      start,
      end: start,
      iteration: -1,
      cycle: -1,
    }));
    const plain = analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6 });
    expect(analyseTrace([...counters, ...barrierRun()], { fillCycles: 2, iterations: 6 })).toStrictEqual(plain);
    // A sample numbered with a cycle is still no cycle's end.
    expect(analyseTrace([...barrierRun(), { ...counters[3], cycle: 3 }], { fillCycles: 2, iterations: 6 })).toStrictEqual(plain);
  });

  it('measured / predicted', () => {
    expect(analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6, predictedCycleTime: 50e-6 }).ratio).toBeCloseTo(2, 9);
    expect(analyseTrace(barrierRun()).ratio).toBeUndefined();
  });

  it('reads a column store and an event array alike', () => {
    const c = new TraceColumns();
    c.append(barrierRun());
    expect(analyseTrace(c, { fillCycles: 2, iterations: 6 })).toEqual(analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6 }));
  });

  it('counts concurrent transfers in one lane once', () => {
    const base = { pe: 'gpu0@h0', thread: 'recv:cpu@h0', kind: 'transfer' as const };
    const a = analyseTrace([
      ev({ ...base, name: 'bn_1', start: 0, end: 100 }),
      ev({ ...base, name: 'bn_2', start: 0, end: 100 }),
      ev({ ...base, name: 'bn_3', start: 50, end: 150 }),
    ]);
    expect(a.lanes[0].busy).toBeCloseTo(150e-6, 12);
    expect(a.lanes[0].utilisation).toBe(1);
  });

  it('is all zeros for no events', () => {
    const a = analyseTrace([]);
    expect(a).toMatchObject({ span: 0, cycles: 0, cycleTime: 0, throughput: 0, lanes: [], busyShare: 0 });
  });

  it('gives a predicted timeline its predicted cycle time, in both strategies', () => {
    const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));
    for (const barrier of [0, 20e-6]) {
      const r = predict(piic, { nodeTimes: { P: 0, C: 0, I1: 1e-2, I2: 1e-2 }, iterations: 20, barrier, sync: 'barrier' });
      if (!r.ok) throw new Error('does not predict');
      for (const s of [r.prediction.overlap!, r.prediction.noOverlap!]) {
        const a = analyseTrace(s.timeline, { fillCycles: s.fillCycles, iterations: s.iterations, predictedCycleTime: s.cycleTime });
        expect(a.cycleTime).toBeCloseTo(s.cycleTime, 9);
        expect(a.ratio).toBeCloseTo(1, 9);
        // GPU-bound: with overlap the incrementers' GPU is busy most of the time.
        const gpu = a.lanes.find((l) => l.pe === 'gpu0@h0' && l.thread === 'main')!;
        expect(gpu.utilisation).toBeGreaterThan(s.overlap ? 0.5 : 0.3);
        expect(gpu.utilisation).toBeLessThanOrEqual(1);
        if (barrier) expect(a.barrierShare).toBeGreaterThan(0);
      }
    }
  });
});

describe('live analysis (TraceAccumulator)', () => {
  // Events from a few lanes with random kinds, cycles (-1: outside any cycle), times and
  // durations: lanes' events arrive out of order and overlap, as batches from several agents do.
  const event = fc
    .record({
      host: fc.constantFrom('h0', 'h1'),
      pe: fc.constantFrom('cpu', 'gpu0'),
      thread: fc.constantFrom('main', 'recv:cpu@h1'),
      kind: fc.constantFrom('fire', 'transfer', 'wait', 'barrier'),
      cycle: fc.integer({ min: -1, max: 12 }),
      start: fc.oneof(fc.integer({ min: 0, max: 5000 }), fc.double({ min: 0, max: 5000, noNaN: true })),
      duration: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.double({ min: 0, max: 400, noNaN: true })),
    })
    .map(({ duration, ...e }) => ev({ ...e, name: e.kind, iteration: e.cycle, end: e.start + duration }));
  const options: fc.Arbitrary<AnalysisOptions> = fc.record(
    {
      fillCycles: fc.integer({ min: 0, max: 4 }),
      iterations: fc.integer({ min: 0, max: 14 }),
      lastCycle: fc.integer({ min: -1, max: 13 }),
      predictedCycleTime: fc.double({ min: 1e-6, max: 1e-3, noNaN: true }),
    },
    { requiredKeys: [] },
  );

  it('gives after every batch exactly what analyseTrace gives for all events so far, for any stream and any split', () => {
    fc.assert(
      fc.property(
        fc.array(event, { maxLength: 200 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 12 }),
        fc.array(options, { minLength: 1, maxLength: 3 }),
        (events, cuts, asked) => {
          const acc = new TraceAccumulator();
          const bounds = [...new Set([0, ...cuts.map((x) => Math.min(x, events.length)), events.length])].sort((a, b) => a - b);
          for (let b = 1; b < bounds.length; b++) {
            acc.append(events.slice(bounds[b - 1], bounds[b]));
            const all = events.slice(0, bounds[b]);
            // Several questions between batches (a live view asks with its latest lastCycle).
            for (const o of asked) expect(acc.analyse(o)).toStrictEqual(analyseTrace(all, o));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the cycle spread is the sorted steady cycle lengths' median, 95th percentile and maximum", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 400 }), fc.integer({ min: 0, max: 3 }), (lengths, fill) => {
        // One event per cycle, back to back: cycle k ends at the sum of the first k + 1 lengths.
        const events: TraceEvent[] = [];
        let t = 0;
        lengths.forEach((d, k) => events.push(ev({ cycle: k, start: t, end: (t += d) })));
        const acc = new TraceAccumulator();
        acc.append(events);
        const a = acc.analyse({ fillCycles: fill });
        const gaps = lengths
          .slice(Math.max(fill, 1))
          .map((d) => d / 1e6)
          .sort((x, y) => x - y);
        const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.ceil(q * gaps.length) - 1)];
        if (gaps.length) expect(a.cycleSpread).toEqual({ count: gaps.length, p50: at(0.5), p95: at(0.95), max: gaps[gaps.length - 1] });
        else expect(a.cycleSpread.count).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it("a late event before a lane's swept part re-sweeps that lane", () => {
    const acc = new TraceAccumulator();
    acc.append([ev({ start: 100, end: 200 }), ev({ start: 300, end: 400 })]);
    expect(acc.analyse().lanes[0].busy).toBeCloseTo(200e-6, 12);
    // Arrives after the lane was swept, starts before both and covers the gap between them.
    acc.append([ev({ start: 0, end: 350 })]);
    expect(acc.analyse()).toStrictEqual(analyseTrace([ev({ start: 100, end: 200 }), ev({ start: 300, end: 400 }), ev({ start: 0, end: 350 })]));
    expect(acc.analyse().lanes[0].busy).toBeCloseTo(400e-6, 12);
  });

  it('reads events appended to its column store directly', () => {
    const c = new TraceColumns();
    const acc = new TraceAccumulator(c);
    c.append(barrierRun().slice(0, 20));
    acc.analyse({ fillCycles: 2 });
    c.append(barrierRun().slice(20));
    expect(acc.analyse({ fillCycles: 2, iterations: 6 })).toStrictEqual(analyseTrace(barrierRun(), { fillCycles: 2, iterations: 6 }));
  });
});

describe('measured times (calibration)', () => {
  it("takes each node's mean firing time and each transfer's mean span per cycle, from its first start to its last end", () => {
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
    expect(Object.keys(t.transferTimes)).toEqual(['a->b']);
    // Cycle 0 spans 0-6 ms, cycle 1 0-4 ms (the halves of cycle 1 overlap nothing here; summed they would give 4).
    expect(t.transferTimes['a->b']).toBeCloseTo(5e-3, 12);
  });

  it('a barrier costs what the last thread to arrive waited: per cycle and barrier the shortest slice, then the mean', () => {
    const t = measuredTimes([
      ev({ kind: 'barrier', name: 'barrier fire', cycle: 0, start: 0, end: 5000 }),
      ev({ kind: 'barrier', name: 'barrier fire', pe: 'gpu0@h0', cycle: 0, start: 4000, end: 5000 }),
      ev({ kind: 'barrier', name: 'barrier pcie', cycle: 0, start: 6000, end: 9000 }),
      ev({ kind: 'barrier', name: 'barrier fire', cycle: 1, start: 0, end: 2000 }),
    ]);
    expect(t.barrier).toBeCloseTo((1e-3 + 3e-3 + 2e-3) / 3, 12);
    expect(measuredTimes([ev({ kind: 'fire', node: 'P', start: 0, end: 1000 })]).barrier).toBeUndefined();
  });

  it('keys a staged GPU-to-GPU transfer by its buffers, not by its labels', () => {
    const via = '(nvlink, staged through host)';
    const half = { kind: 'transfer' as const, buffer: 'bn_4', from: 'bn_3', cycle: 2 };
    const t = measuredTimes([
      ev({ ...half, pe: 'gpu0@h0', thread: 'send:gpu1@h0', name: `bn_4 gpu0@h0->host ${via}`, start: 0, end: 300 }),
      ev({ ...half, pe: 'gpu1@h0', thread: 'recv:gpu0@h0', kind: 'wait', name: `wait bn_4 ${via}`, start: 0, end: 300 }),
      ev({ ...half, pe: 'gpu1@h0', thread: 'recv:gpu0@h0', name: `bn_4 host->gpu1@h0 ${via}`, start: 300, end: 500 }),
    ]);
    expect(t.transferTimes).toEqual({ 'bn_3->bn_4': expect.closeTo(500e-6, 12) });
  });
});
