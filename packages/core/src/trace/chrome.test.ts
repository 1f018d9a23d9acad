import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { toChromeTrace } from './chrome.js';
import { traceStats } from './stats.js';

const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

function prediction(a = 1e-3) {
  const r = predict(piic, { nodeTimes: { P: 0, C: 0, I1: a, I2: a }, iterations: 20 });
  if (!r.ok) throw new Error('does not predict');
  return r.prediction;
}

describe('Chrome trace export', () => {
  it('names a process per host and a thread per PE thread, with X events in microseconds', () => {
    const p = prediction().overlap;
    const trace = toChromeTrace(p.timeline, p.ig);
    const meta = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'process_name').map((e) => e.args?.name);
    expect(meta).toEqual(['host h0', 'host h1']);
    const threads = trace.traceEvents.filter((e) => e.name === 'thread_name').map((e) => e.args?.name);
    expect(threads).toContain('gpu0@h0');
    expect(threads).toContain('cpu@h0 -> cpu@h1');
    const fire = trace.traceEvents.find((e) => e.ph === 'X' && e.name === 'I1')!;
    expect(fire.dur).toBeCloseTo(1000, 6);
    expect(JSON.parse(JSON.stringify(trace))).toEqual(trace);
  });

  it('draws flow arrows from each producer firing through its transfers to the consumer', () => {
    const p = prediction().overlap;
    const trace = toChromeTrace(p.timeline, p.ig);
    const starts = trace.traceEvents.filter((e) => e.ph === 's');
    const ends = trace.traceEvents.filter((e) => e.ph === 'f');
    expect(starts.length).toBeGreaterThan(0);
    expect(ends.map((e) => e.id).sort()).toEqual(starts.map((e) => e.id).sort());
    // P -> bn_3 -> I1 for iteration 0: one arrow out of P's first firing.
    const pFire = trace.traceEvents.find((e) => e.ph === 'X' && e.name === 'P' && e.args?.iteration === 0)!;
    expect(starts.some((s) => s.tid === pFire.tid && s.ts === pFire.ts)).toBe(true);
  });
});

describe('trace summary', () => {
  it('gives the cycle time, throughput and utilisation per thread', () => {
    // GPU-bound: the incrementers take longer than any transfer.
    const p = prediction(1e-2);
    const s = traceStats(p.overlap.timeline);
    expect(s.cycleTime.mean).toBeCloseTo(p.overlap.cycleTime * 1e6, 6);
    expect(s.cycleTime.p95).toBeCloseTo(p.overlap.cycleTime * 1e6, 6);
    expect(s.throughput).toBeCloseTo(1 / p.overlap.cycleTime, 3);
    const gpu = s.threads.find((t) => t.pe === 'gpu0@h0' && t.thread === 'main')!;
    expect(gpu.utilisation).toBeGreaterThan(0.5);
    expect(gpu.utilisation).toBeLessThanOrEqual(1);
  });

  it('is empty for no events', () => {
    expect(traceStats([]).throughput).toBe(0);
  });
});
