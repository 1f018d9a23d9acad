import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { documentHash } from '../document/hash.js';
import { toChromeTrace, traceMetadata } from './chrome.js';

const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

function prediction(a = 1e-3) {
  const r = predict(piic, { nodeTimes: { P: 0, C: 0, I1: a, I2: a }, iterations: 20 });
  if (!r.ok) throw new Error('does not predict');
  return r.prediction;
}

describe('Chrome trace export', () => {
  it('names a process per host and a thread per PE thread, with X events in microseconds', () => {
    const p = prediction().overlap!;
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
    const p = prediction().overlap!;
    const trace = toChromeTrace(p.timeline, p.ig);
    const starts = trace.traceEvents.filter((e) => e.ph === 's');
    const ends = trace.traceEvents.filter((e) => e.ph === 'f');
    expect(starts.length).toBeGreaterThan(0);
    expect(ends.map((e) => e.id).sort()).toEqual(starts.map((e) => e.id).sort());
    // P -> bn_3 -> I1 for iteration 0: one arrow out of P's first firing.
    const pFire = trace.traceEvents.find((e) => e.ph === 'X' && e.name === 'P' && e.args?.iteration === 0)!;
    expect(starts.some((s) => s.tid === pFire.tid && s.ts === pFire.ts)).toBe(true);
  });

  it('numbers hosts and lanes from the graph, whatever events there are and in whatever order', () => {
    const p = prediction().overlap!;
    const meta = (events: typeof p.timeline) => toChromeTrace(events, p.ig).traceEvents.filter((e) => e.ph === 'M');
    // A measured trace arrives in another order, and a failed run's may lack whole lanes.
    const partial = [...p.timeline].reverse().filter((e) => e.host !== 'h0' || e.kind === 'fire');
    expect(meta(partial)).toEqual(meta(p.timeline));
    expect(meta([])).toEqual(meta(p.timeline));
  });

  it('carries the document, its hash, strategy, sync mode, calibration and agents as metadata', () => {
    const p = prediction().overlap!;
    const predicted = toChromeTrace(p.timeline, p.ig, traceMetadata(piic, { source: 'predicted', overlap: true }));
    expect(predicted.metadata).toEqual({
      source: 'predicted',
      document: { name: piic.name, hash: documentHash(piic) },
      strategy: 'overlap',
      sync: 'barrier',
      calibration: 'none',
    });
    const measured = traceMetadata(piic, {
      source: 'measured',
      overlap: false,
      sync: 'self-timed',
      calibration: 'piic.calibration.json',
      agents: [{ host: '__proto__', agentVersion: '0.1.0' }, { host: 'h1' }],
    });
    expect(measured).toMatchObject({ strategy: 'no-overlap', sync: 'self-timed', calibration: 'piic.calibration.json' });
    // A host named like an Object.prototype key is a host.
    expect(JSON.stringify(measured.agents)).toBe('{"__proto__":"0.1.0","h1":"unknown"}');
    expect(toChromeTrace([]).metadata).toBeUndefined();
  });
});
