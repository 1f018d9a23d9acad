import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProjectDocument, SyncMode } from '../document/types.js';
import { layeredDocument } from '../testing/generate.js';
import { predict, TIMELINE_EVENTS } from './predict.js';
import { allPrograms } from '../compile/decode.js';
import { analyseTrace } from '../run/analysis.js';
import { toChromeTrace } from '../trace/chrome.js';

const piic = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));
const bytes = 2048 * 2048 * 4;
const Th = 1e-5 + bytes / 5e9;
const Tib = 2e-6 + bytes / 2.6e9;

function cycleTimes(a: number, sync: SyncMode = 'barrier') {
  const r = predict(piic(), { nodeTimes: { P: 0, C: 0, I1: a, I2: a }, sync });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.prediction;
}

describe('P-I-I-C prediction (paper 5.1), barrier mode', () => {
  it('without overlap T = Th + Tib + a*n', () => {
    for (const an of [0, 1e-3, 5e-3, 2e-2]) {
      const p = cycleTimes(an);
      expect(p.noOverlap!.cycleTime).toBeCloseTo(Th + Tib + an, 12);
      expect(p.noOverlap!.phases.map((x) => x.name)).toEqual(['cpu-cpu', 'pcie', 'fire']);
    }
  });

  it('with overlap T = max(Th, Tib, a*n)', () => {
    for (const an of [0, 1e-3, 5e-3, 2e-2]) expect(cycleTimes(an).overlap!.cycleTime).toBeCloseTo(Math.max(Th, Tib, an), 12);
  });

  it('peaks at 1 + (Tib + Th) / max(Tib, Th) = 2 + Rib/Rh where a*n = max(Tib, Th)', () => {
    const peak = cycleTimes(Math.max(Tib, Th)).speedup;
    expect(peak).toBeCloseTo(1 + (Tib + Th) / Math.max(Tib, Th), 9);
    // Rib < Rh here (2.6 vs 5 GB/s); the fixed latencies make the identity approximate.
    expect(peak).toBeCloseTo(2 + 2.6e9 / 5e9, 2);
    for (const an of [Math.max(Tib, Th) / 2, Math.max(Tib, Th) * 2]) expect(cycleTimes(an).speedup).toBeLessThan(peak);
  });

  it('a half-duplex PCIe link serialises the two copies of a cycle', () => {
    const doc = piic();
    for (const h of doc.arch.hosts) h.pcie = { bandwidth: 5e9, latency: 1e-5, duplex: false };
    const r = predict(doc, { nodeTimes: { P: 0, C: 0, I1: 0, I2: 0 }, sync: 'barrier' });
    if (!r.ok) throw new Error('does not predict');
    expect(r.prediction.noOverlap!.cycleTime).toBeCloseTo(2 * Th + Tib, 12);
    expect(r.prediction.overlap!.cycleTime).toBeCloseTo(Math.max(2 * Th, Tib), 12);
  });

  it('predicts a timeline of firings and transfers for each cycle', () => {
    const p = cycleTimes(1e-3);
    const tl = p.overlap!.timeline;
    const c = tl.filter((e) => e.node === 'C');
    expect(c[0].cycle).toBe(p.overlap!.ig.latency['C' as never]);
    expect(c[0].iteration).toBe(0);
    // Five transfers a cycle; the host-to-host one is drawn on both ends (send and receive lanes).
    const transfers = tl.filter((e) => e.kind === 'transfer' && e.cycle === 10);
    expect(transfers).toHaveLength(6);
    expect(new Set(transfers.map((e) => e.buffer)).size).toBe(5);
    expect(
      transfers
        .filter((e) => e.pe.startsWith('cpu'))
        .map((e) => `${e.pe} ${e.thread}`)
        .sort(),
    ).toEqual(['cpu@h0 send:cpu@h1', 'cpu@h1 recv:cpu@h0']);
    for (const e of tl) expect(e.end).toBeGreaterThanOrEqual(e.start);
  });

  it("uses the kernels' cost hints when no times are given", () => {
    const r = predict(piic(), { sync: 'barrier' });
    if (!r.ok) throw new Error('does not predict');
    expect(r.prediction.noOverlap!.cycleTime).toBeGreaterThan(Th + Tib);
    expect(r.prediction.speedup).toBeGreaterThan(1);
  });

  it('takes measured transfer times in place of the link rates', () => {
    const base = predict(piic(), { nodeTimes: { P: 0, C: 0, I1: 0, I2: 0 } });
    if (!base.ok) throw new Error('does not predict');
    const transferTimes: Record<string, number> = {};
    for (const p of Object.values(allPrograms(base.prediction.noOverlap!.ig)))
      for (const ph of p.phases)
        for (const a of ph.actions)
          if (a.op === 'transfer')
            transferTimes[`${a.from.buffer}->${a.to.buffer}`] = p.host === a.fromPe.split('@')[1] && a.fromPe.startsWith('gpu') ? 3e-3 : 1e-3;
    const r = predict(piic(), { nodeTimes: { P: 0, C: 0, I1: 2e-3, I2: 2e-3 }, transferTimes, sync: 'barrier' });
    if (!r.ok) throw new Error('does not predict');
    // Every transfer 1 ms except the GPU->CPU read-backs (3 ms): pcie phase 3 ms, cpu-cpu 1 ms, fire 2 ms.
    expect(r.prediction.noOverlap!.cycleTime).toBeCloseTo(1e-3 + 3e-3 + 2e-3, 12);
    expect(r.prediction.overlap!.cycleTime).toBeCloseTo(3e-3, 12);
  });

  it('draws the whole run, up to 200 cycles, when the events fit', () => {
    const p = cycleTimes(1e-3);
    for (const s of [p.overlap!, p.noOverlap!]) {
      expect(s.timelineCycles).toBe(Math.min(s.cycles, 200));
      expect(Math.max(...s.timeline.map((e) => e.cycle))).toBe(s.timelineCycles - 1);
    }
  });
});

describe('P -> I -> C on three CPU PEs of one host (cpus: 3)', () => {
  // P on cpu0, I1 and I2 on cpu1, C on cpu2: two copies a cycle, each over its own memory link.
  const Tm = 1e-6 + bytes / 10e9;
  const cores = (a: number, sync: SyncMode) => {
    const doc = piic();
    doc.arch = { hosts: [{ id: 'h0', cpus: 3 }], pes: [], links: [] };
    doc.mapping = { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu1@h0', C: 'cpu2@h0' };
    const r = predict(doc, { nodeTimes: { P: 0, C: 0, I1: a, I2: 0 }, sync });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    return r.prediction;
  };

  it('charges each copy the memory link: T = Tm + a without overlap, max(Tm, a) with (barrier mode)', () => {
    for (const a of [0, 1e-3, 5e-3]) {
      const p = cores(a, 'barrier');
      expect(p.noOverlap!.cycleTime).toBeCloseTo(Tm + a, 12);
      expect(p.overlap!.cycleTime).toBeCloseTo(Math.max(Tm, a), 12);
    }
  });

  it("draws each copy on its own lane, the sender's send lane, for Tm, and the Chrome export names it a memory copy", () => {
    const s = cores(1e-3, 'self-timed').overlap!;
    const copies = s.timeline.filter((e) => e.kind === 'transfer' && e.cycle === 10);
    expect(copies.map((e) => `${e.pe} ${e.thread}`).sort()).toEqual(['cpu0@h0 send:cpu1@h0', 'cpu1@h0 send:cpu2@h0']);
    for (const e of copies) expect(e.end - e.start).toBeCloseTo(Tm * 1e6, 6);
    const names = toChromeTrace(s.timeline, s.ig)
      .traceEvents.filter((e) => e.name === 'thread_name')
      .map((e) => (e.args as { name: string }).name);
    expect(names).toEqual(['cpu0@h0', 'cpu0@h0 -> cpu1@h0 (memory)', 'cpu1@h0', 'cpu1@h0 -> cpu2@h0 (memory)', 'cpu2@h0']);
  });
});

describe('P-I-I-C prediction, self-timed mode', () => {
  it("is the document's mode unless asked, and says so", () => {
    const r = predict(piic(), { nodeTimes: { P: 0, C: 0, I1: 1e-3, I2: 1e-3 } });
    if (!r.ok) throw new Error('does not predict');
    expect([r.prediction.overlap!.sync, r.prediction.noOverlap!.sync]).toEqual(['self-timed', 'self-timed']);
    const doc = piic();
    doc.options.sync = 'barrier';
    const b = predict(doc);
    if (!b.ok) throw new Error('does not predict');
    expect(b.prediction.overlap!.sync).toBe('barrier');
  });

  it('with overlap T = max(Th, Tib, a*n), as with barriers', () => {
    for (const an of [0, 1e-3, 5e-3, 2e-2]) expect(cycleTimes(an, 'self-timed').overlap!.cycleTime).toBeCloseTo(Math.max(Th, Tib, an), 12);
  });

  it("without overlap a single buffer's writer and reader take turns: T = max(Th + Tib, Th + a*n), not the sum of the phases", () => {
    for (const an of [0, 1e-3, 5e-3, 2e-2]) {
      const p = cycleTimes(an, 'self-timed');
      expect(p.noOverlap!.cycleTime).toBeCloseTo(Math.max(Th + Tib, Th + an), 12);
      // Barrier mode adds the phases: Tib + Th + a*n.
      if (an > 0) expect(p.noOverlap!.cycleTime).toBeLessThan(cycleTimes(an).noOverlap!.cycleTime);
    }
    expect(cycleTimes(0, 'self-timed').noOverlap!.bottleneck).toMatch(/^bn_\d+: transfer .* \+ transfer .*, 1 slot$/);
  });

  it('draws waits as waits, no barriers, and a steady state at the predicted cycle', () => {
    for (const overlap of [true, false]) {
      const p = cycleTimes(5e-3, 'self-timed');
      const s = overlap ? p.overlap! : p.noOverlap!;
      expect(s.timeline.some((e) => e.kind === 'barrier')).toBe(false);
      const waits = s.timeline.filter((e) => e.kind === 'wait');
      expect(waits.length).toBeGreaterThan(0);
      for (const w of waits) {
        expect(w.name).toMatch(/^wait bn_\d+$/);
        expect(w.end).toBeGreaterThan(w.start);
      }
      // Per lane, nothing overlaps: a wait ends where the action it held back starts.
      const byLane = new Map<string, typeof s.timeline>();
      for (const e of s.timeline) byLane.set(`${e.pe} ${e.thread}`, [...(byLane.get(`${e.pe} ${e.thread}`) ?? []), e]);
      for (const lane of byLane.values()) for (let i = 1; i < lane.length; i++) expect(lane[i].start).toBeGreaterThanOrEqual(lane[i - 1].end - 1e-6);
      // C fires once per predicted cycle once the pipeline is full.
      const c = s.timeline.filter((e) => e.node === 'C');
      const n = c.length - 1;
      expect((c[n].start - c[n - 10].start) / 10).toBeCloseTo(s.cycleTime * 1e6, 3);
      // The trace analysis (steady state, fill excluded) reads the same cycle from it.
      expect(analyseTrace(s.timeline, { fillCycles: s.fillCycles, iterations: s.iterations }).cycleTime).toBeCloseTo(s.cycleTime, 9);
      // The run: the first iteration's latency, then one cycle per further iteration.
      const firstC = c[0].end / 1e6;
      expect(s.runTime).toBeCloseTo(firstC + (s.iterations - 1) * s.cycleTime, 9);
    }
  });
});

describe('predicted timeline of a large graph', () => {
  it.each(['barrier', 'self-timed'] as const)('ends with the first whole cycle that reaches the event budget (%s)', (sync) => {
    const doc = layeredDocument(3, { nodes: 600, hosts: 8, gpus: 3 });
    const r = predict(doc, { timelineEvents: 3000, sync });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    const longer = predict(doc, { timelineEvents: 1e9, sync });
    if (!longer.ok) throw new Error('does not predict');
    for (const s of [r.prediction.overlap!, r.prediction.noOverlap!]) {
      expect(s.timeline.length).toBeGreaterThanOrEqual(3000);
      expect(s.timelineCycles).toBeLessThan(s.cycles);
      const last = s.timelineCycles - 1;
      expect(Math.max(...s.timeline.map((e) => e.cycle))).toBe(last);
      // The cycle before the last stayed under the budget, so the budget stopped it at the last.
      expect(s.timeline.filter((e) => e.cycle < last).length).toBeLessThan(3000);
      // The events of the last cycle are all there: as many as the same cycle of a longer timeline.
      const whole = (s.overlap ? longer.prediction.overlap! : longer.prediction.noOverlap!).timeline.filter((e) => e.cycle === last);
      expect(s.timeline.filter((e) => e.cycle === last)).toHaveLength(whole.length);
    }
    expect(TIMELINE_EVENTS).toBeGreaterThan(3000);
  });
});
