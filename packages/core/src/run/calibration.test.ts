import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import type { ImplementationGraph } from '../compile/types.js';
import { parseDocument } from '../document/parse.js';
import type { ProjectDocument } from '../document/types.js';
import { analyze } from '../document/validate.js';
import { predict } from '../predict/predict.js';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { nodeTime } from '../predict/timing.js';
import { calibratedTiming, calibrationFrom, calibrationPath, deviceTimes, parseCalibration, predictCalibrated, type MeasuredTimes } from './calibration.js';
import { documentHash } from '../document/hash.js';

const example = (name: string) => {
  const r = parseDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8'));
  if (!r.ok) throw new Error(`${name} does not parse`);
  return r.doc;
};
const modelOf = (doc: ProjectDocument) => analyze(doc).model!;
const igOf = (doc: ProjectDocument, overlap: boolean): ImplementationGraph => {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error('does not compile');
  return r.ig;
};

/** Times a run would measure: each node a distinct time, each transfer one from its bytes, keyed as the trace analysis keys them. */
function measured(ig: ImplementationGraph): MeasuredTimes {
  const nodeTimes: Record<string, number> = {};
  ig.order.forEach((n, i) => (nodeTimes[n] = 1e-3 * (i + 1)));
  const transferTimes: Record<string, number> = {};
  const { buffers } = ig;
  for (let k = 0; k < buffers.count; k++) {
    const from = ig.programs.transfer.from[k];
    if (from >= 0) transferTimes[`${buffers.id[from]}->${buffers.id[k]}`] = buffers.bytes[k] / 1e9 + 1e-4 * buffers.pe[k];
  }
  return { nodeTimes, transferTimes };
}
const meta = { machine: { hostname: 'test', cpu: 'a CPU', adapters: { 'gpu0@h0': 'llvmpipe' } }, date: '2026-11-25T13:00:00.000Z', iterations: 10 };

describe('calibration', () => {
  it('predicts from a calibration exactly what it predicts from the measured times themselves, both strategies', () => {
    for (const file of ['piic.json', 'paper-fig5.json', 'saliency.json']) {
      const doc = example(file);
      const runs = [false, true].map((overlap) => ({ ig: igOf(doc, overlap), measured: measured(igOf(doc, overlap)) }));
      // Each strategy's run measured its own (slower with overlap, as on shared cores).
      runs[1].measured.nodeTimes = Object.fromEntries(Object.entries(runs[1].measured.nodeTimes).map(([k, s]) => [k, s * 1.5]));
      const cal = calibrationFrom(modelOf(doc), runs, meta);
      for (const [i, overlap] of [false, true].entries()) {
        const t = calibratedTiming(modelOf(doc), JSON.parse(JSON.stringify(cal)), 'calibration', overlap);
        expect(t.diagnostics).toEqual([]);
        expect(t.firings).toEqual({ calibrated: doc.app.nodes.length, total: doc.app.nodes.length });
        expect(t.transfers.calibrated).toBe(t.transfers.total);
        const viaCal = predict(doc, { ...t.timing, timelineCycles: 1 });
        const direct = predict(doc, { ...runs[i].measured, timelineCycles: 1 });
        if (!viaCal.ok || !direct.ok) throw new Error('predict failed');
        const pick = (p: typeof direct.prediction) => (overlap ? p.overlap! : p.noOverlap!).cycleTime;
        expect(pick(viaCal.prediction), `${file} overlap ${overlap}`).toBeCloseTo(pick(direct.prediction), 12);
      }
    }
  });

  it('every example (delays, rates, composites, tasks, scans): predicts from the model (its document is lowered) in both sync modes and hashes the document as written', () => {
    registerExampleKernels();
    const names = readdirSync(new URL('../../../../examples/', import.meta.url))
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      const doc = example(name);
      const model = modelOf(doc);
      expect(model, name).toBeDefined();
      const runs = [true, false].flatMap((overlap) =>
        compile(doc, { overlap }).ok ? [{ ig: igOf(doc, overlap), measured: measured(igOf(doc, overlap)) }] : [],
      );
      const cal = calibrationFrom(model, runs, { machine: { hostname: 'h', cpu: 'c', adapters: {} }, date: '2026-01-01T00:00:00Z', iterations: 4 });
      expect(cal.document.hash, name).toBe(documentHash(doc));
      for (const sync of ['barrier', 'self-timed'] as const) {
        const r = predictCalibrated(model, cal, { sync });
        expect(r.ok, `${name} ${sync}: ${r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('; ')}`).toBe(true);
        for (const s of ['overlap', 'noOverlap'] as const)
          if (runs.length === 2 || r.timing![s]) expect(r.timing![s]?.diagnostics ?? [], `${name} ${sync} ${s}`).toEqual([]);
      }
    }
  });

  it('transfers come from the runs without overlap, where nothing queues beside them', () => {
    const doc = example('piic.json');
    const model = modelOf(doc);
    const runs = [false, true].map((overlap) => ({ ig: igOf(doc, overlap), measured: measured(igOf(doc, overlap)) }));
    // With overlap, each copy's span held its GPU's kernel too.
    runs[1].measured.transferTimes = Object.fromEntries(Object.entries(runs[1].measured.transferTimes).map(([k, s]) => [k, s + 0.3]));
    const cal = calibrationFrom(model, runs, meta);
    const t = calibratedTiming(model, cal, 'calibration', true).timing.transferTimes;
    const ig = igOf(doc, true);
    for (const [k, s] of Object.entries(t)) if (k in runs[1].measured.transferTimes) expect(s).toBeCloseTo(runs[1].measured.transferTimes[k] - 0.3, 12);
    expect(Object.keys(t).length).toBeGreaterThan(0);
    expect(ig.overlap).toBe(true);
  });

  it('a strategy measured alone lends its times to the other', () => {
    const doc = example('piic.json');
    const model = modelOf(doc);
    const cal = calibrationFrom(model, [{ ig: igOf(doc, false), measured: { nodeTimes: { P: 1, I1: 2, I2: 4, C: 3 }, transferTimes: {} } }], meta);
    expect(cal.firings.every((f) => f.overlap === false)).toBe(true);
    expect(calibratedTiming(model, cal, 'calibration', true).timing.nodeTimes).toEqual({ P: 1, I1: 2, I2: 4, C: 3 });
  });

  it('keys a firing by kernel, params and PE: two nodes alike share an entry, and params in another order are the same', () => {
    const doc = example('piic.json');
    const model = modelOf(doc);
    const ig = igOf(doc, false);
    const cal = calibrationFrom(model, [{ ig, measured: { nodeTimes: { P: 1, I1: 2, I2: 4, C: 3 }, transferTimes: {} } }], meta);
    // I1 and I2 run one kernel with one params, but on two PEs.
    expect(cal.firings.map((f) => `${f.kernel}@${f.pe}=${f.seconds}`).sort()).toEqual([
      'matrix.consume@cpu@h1=3',
      'matrix.increment@gpu0@h0=2',
      'matrix.increment@gpu0@h1=4',
      'matrix.produce@cpu@h0=1',
    ]);
    const reordered = structuredClone(doc);
    const p = reordered.app.nodes.find((n) => n.id === 'P')!;
    p.params = { height: p.params!.height, width: p.params!.width };
    expect(documentHash(reordered)).toBe(documentHash(doc));
    expect(calibratedTiming(modelOf(reordered), cal).timing.nodeTimes.P).toBe(1);
  });

  it('an edited document keeps the entries that still match and says the calibration is from another version', () => {
    const doc = example('piic.json');
    const cal = calibrationFrom(modelOf(doc), [{ ig: igOf(doc, false), measured: measured(igOf(doc, false)) }], meta);
    const edited = structuredClone(doc);
    edited.app.nodes.find((n) => n.id === 'I2')!.params!.nb_loop = 7;
    expect(documentHash(edited)).not.toBe(documentHash(doc));
    const t = calibratedTiming(modelOf(edited), cal, 'piic.calibration.json');
    expect(t.diagnostics.map((d) => d.message).join('\n')).toMatch(
      /another version of the document[\s\S]*has no entry for node I2 \(matrix.increment on gpu0@h1\)/,
    );
    expect(t.diagnostics.every((d) => d.severity === 'warning' && d.path === 'piic.calibration.json')).toBe(true);
    expect(t.timing.nodeTimes.I2).toBeUndefined();
    expect(t.timing.nodeTimes.I1).toBeDefined();
    expect(t.firings).toEqual({ calibrated: 3, total: 4 });
  });

  it('reads back what it writes, and names the field of a malformed file', () => {
    const doc = example('piic.json');
    const cal = calibrationFrom(modelOf(doc), [{ ig: igOf(doc, true), measured: measured(igOf(doc, true)) }], meta);
    const back = parseCalibration(JSON.stringify(cal));
    expect(back.ok && back.calibration).toEqual(cal);
    const bad = structuredClone(cal) as unknown as { firings: { seconds: unknown }[] };
    bad.firings[1].seconds = 'fast';
    const r = parseCalibration(JSON.stringify(bad), 'x.calibration.json');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.diagnostics.map((d) => `${d.path}: ${d.message}`)).toEqual(['x.calibration.json.firings[1]: seconds must be a number of at least 0']);
    const notJson = parseCalibration('{', 'x.calibration.json');
    expect(!notJson.ok && notJson.diagnostics[0].hint).toMatch(/pipeloom calibrate/);
  });

  it('keeps the measured barrier cost, and barrier-mode predictions pay it once per barrier; self-timed ones never', () => {
    const doc = example('piic.json');
    const model = modelOf(doc);
    const runs = [false, true].map((overlap) => ({ ig: igOf(doc, overlap), measured: { ...measured(igOf(doc, overlap)), barrier: overlap ? 3e-3 : 1e-3 } }));
    const cal = calibrationFrom(model, runs, meta);
    expect(cal.barrier).toBeCloseTo(2e-3, 12);
    const without = { ...cal, barrier: undefined };
    for (const sync of ['barrier', 'self-timed'] as const) {
      const a = predictCalibrated(model, cal, { sync });
      const b = predictCalibrated(model, without, { sync });
      if (!a.ok || !b.ok) throw new Error('predicts');
      for (const s of ['overlap', 'noOverlap'] as const) {
        const [pa, pb] = [a.prediction[s]!, b.prediction[s]!];
        if (sync === 'self-timed') expect(pa.cycleTime, s).toBe(pb.cycleTime);
        else {
          // Every phase ends in a barrier: each takes the barrier's cost longer, and so does the cycle.
          pa.phases.forEach((p, i) => expect(p.time - pb.phases[i].time, `${s} ${p.name}`).toBeCloseTo(2e-3, 12));
          expect(pa.cycleTime - pb.cycleTime, s).toBeGreaterThanOrEqual(2e-3 - 1e-12);
        }
      }
    }
    const bad = parseCalibration(JSON.stringify({ ...cal, barrier: -1 }), 'x.calibration.json');
    expect(!bad.ok && bad.diagnostics.map((d) => d.path)).toEqual(['x.calibration.json.barrier']);
  });

  it('emulated devices: GPU firings only, the calibrated time where there is one, else the cost hint', () => {
    const doc = example('piic.json');
    const model = modelOf(doc);
    expect(deviceTimes(model)).toEqual({ I1: nodeTime(model, 'I1' as never), I2: nodeTime(model, 'I2' as never) });
    expect(deviceTimes(model, { nodeTimes: { I1: 0.5, P: 9 } })).toEqual({ I1: 0.5, I2: nodeTime(model, 'I2' as never) });
  });

  it('lives beside its document', () => {
    expect(calibrationPath('examples/piic.json')).toBe('examples/piic.calibration.json');
    expect(calibrationPath('my-doc')).toBe('my-doc.calibration.json');
  });
});
