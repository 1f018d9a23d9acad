// @vitest-environment jsdom
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { compile, predict, TraceColumns, type ProjectDocument } from '@pipeloom/core';
import { readDocument } from '../document/documents.js';
import { compileBoth } from '../worker/compile.js';
import { CALIBRATION_KEY, calibrationStore, clearCalibration, openCalibration, saveRunAsCalibration } from './calibration.js';

// The designer's calibration: saved from a run's trace, kept in the browser's storage, used by
// the compile worker's prediction (the IG view's "calibrated" cycle), opened from a file.

// Tests run from the repository root (jsdom's URL does not resolve file: paths).
const ROOT = process.cwd();
const example = (name: string): ProjectDocument => {
  // As the designer opens it (normalised: every PE listed).
  const doc = readDocument(readFileSync(join(ROOT, 'examples', name), 'utf8')).doc;
  if (!doc) throw new Error(name);
  return doc as ProjectDocument; // piic: one PE per node
};

beforeEach(() => clearCalibration());

describe("the designer's calibration", () => {
  it("a run saved as calibration is kept in the browser's storage and predicts that run's cycle", async () => {
    // One host: every transfer is drawn once in the trace, so the trace's times are the plan's.
    const doc = example('piic-single-host.json');
    const slow = predict(doc, { nodeTimes: { P: 0.002, I1: 0.011, I2: 0.013, C: 0.003 } });
    if (!slow.ok) throw new Error('predict');
    // A run's measured trace, here the plan of a machine slower than the cost hints say.
    const trace = new TraceColumns();
    trace.append(slow.prediction.noOverlap!.timeline);
    const cal = saveRunAsCalibration(doc, slow.prediction.noOverlap!.ig, trace, { iterations: 100 }, new Date('2026-11-25T13:00:00Z'));
    expect(cal?.firings).toHaveLength(4);
    expect(calibrationStore.getState().calibration).toEqual(cal);
    expect(JSON.parse(localStorage.getItem(CALIBRATION_KEY)!)).toEqual(cal);

    const out = await compileBoth(doc, undefined, calibrationStore.getState().calibration);
    expect(out.calibrated?.noOverlap).toBeCloseTo(slow.prediction.noOverlap!.cycleTime, 9);
    // The other strategy from the same firing and transfer times (its buffers differ, its links do not).
    expect(out.calibrated?.overlap).toBeCloseTo(slow.prediction.overlap!.cycleTime, 9);
    expect(out.calibrated?.firings).toEqual({ calibrated: 4, total: 4 });
    expect(out.calibrated?.date).toBe('2026-11-25T13:00:00.000Z');
    // The hints' prediction is unchanged beside it.
    expect(out.prediction?.noOverlap!.cycleTime).toBeLessThan(slow.prediction.noOverlap!.cycleTime);
    // Without a calibration there is no calibrated line.
    expect((await compileBoth(doc)).calibrated).toBeUndefined();
  });

  it('opens a calibration file; a malformed one is refused, naming the field, and the current one stays', () => {
    const doc = example('piic-single-host.json');
    const r = compile(doc, { overlap: true });
    if (!r.ok) throw new Error('compile');
    const trace = new TraceColumns();
    const p = predict(doc);
    if (!p.ok) throw new Error('predict');
    trace.append(p.prediction.overlap!.timeline);
    const cal = saveRunAsCalibration(doc, p.prediction.overlap!.ig, trace, { iterations: 10 })!;
    clearCalibration();
    expect(localStorage.getItem(CALIBRATION_KEY)).toBeNull();

    expect(openCalibration(JSON.stringify(cal), 'piic.calibration.json')).toBe(true);
    expect(calibrationStore.getState().calibration).toEqual(cal);
    expect(openCalibration(JSON.stringify({ ...cal, transfers: 'none' }), 'other.json')).toBe(false);
    expect(calibrationStore.getState().problems.map((d) => `${d.path}: ${d.message}`)).toEqual(['other.json.transfers: must be a list']);
    expect(calibrationStore.getState().calibration).toEqual(cal);
  });
});
