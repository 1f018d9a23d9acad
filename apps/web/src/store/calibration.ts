import { createStore, useStore } from 'zustand';
import {
  analyze,
  calibrationFrom,
  measuredTimes,
  parseCalibration,
  type Calibration,
  type Diagnostic,
  type ImplementationGraph,
  type ProjectDocument,
  type TraceColumns,
} from '@pipeloom/core';

// The project's calibration in the designer: saved from a finished run's measured trace (the
// Run view) or opened from a file `pipeloom calibrate` wrote, kept in the browser's storage
// beside the autosaved project, and handed to the compile worker, which predicts with it too
// (the IG view's "calibrated" cycle). One calibration: the project's; `calibratedTiming` in
// the worker says when it was measured on another version of the document.

export const CALIBRATION_KEY = 'pipeloom.calibration';

export interface CalibrationState {
  calibration: Calibration | null;
  /** Why the last opened file was not taken. */
  problems: Diagnostic[];
}

function stored(): Calibration | null {
  try {
    const text = globalThis.localStorage?.getItem(CALIBRATION_KEY);
    if (!text) return null;
    const r = parseCalibration(text);
    return r.ok ? r.calibration : null;
  } catch {
    return null;
  }
}

export const calibrationStore = createStore<CalibrationState>()(() => ({ calibration: stored(), problems: [] }));
export const useCalibration = <T>(sel: (s: CalibrationState) => T) => useStore(calibrationStore, sel);

function keep(calibration: Calibration | null): void {
  try {
    if (calibration) globalThis.localStorage?.setItem(CALIBRATION_KEY, JSON.stringify(calibration));
    else globalThis.localStorage?.removeItem(CALIBRATION_KEY);
  } catch {
    // Storage full or blocked: the calibration still holds for this session.
  }
  calibrationStore.setState({ calibration, problems: [] });
}

/**
 * Saves a finished run's measurements as the project's calibration: each node's mean firing
 * and each transfer's mean time in the measured trace, keyed by kernel + params + PE and by
 * link and size. Returns it, or null when the document does not validate.
 */
export function saveRunAsCalibration(
  doc: ProjectDocument,
  ig: ImplementationGraph,
  measured: TraceColumns,
  run: { iterations: number; adapters?: Record<string, string> },
  now = new Date(),
): Calibration | null {
  const { model } = analyze(doc);
  if (!model) return null;
  const agent = globalThis.navigator?.userAgent ?? 'browser';
  const cores = globalThis.navigator?.hardwareConcurrency;
  const cal = calibrationFrom(model, [{ ig, measured: measuredTimes(measured) }], {
    // The agents ran it; the browser only knows what they reported (the adapters) and itself.
    machine: { hostname: globalThis.location?.host || 'designer', cpu: `${agent}${cores ? `, ${cores} cores` : ''}`, adapters: run.adapters ?? {} },
    date: now.toISOString(),
    iterations: run.iterations,
  });
  keep(cal);
  return cal;
}

/** Opens a calibration file's text; a malformed one leaves the current calibration and lists why. */
export function openCalibration(text: string, file = 'calibration'): boolean {
  const r = parseCalibration(text, file);
  if (!r.ok) {
    calibrationStore.setState({ problems: r.diagnostics });
    return false;
  }
  keep(r.calibration);
  return true;
}

/** Makes a calibration measured in the designer (the Run view's Calibrate) the project's. */
export function adoptCalibration(calibration: Calibration): void {
  keep(calibration);
}

export function clearCalibration(): void {
  keep(null);
}
