import { existsSync } from 'node:fs';
import { inputByteLimit, inputFileMessage, readInputFile } from '../input-file.js';
import {
  calibrationPath,
  parseCalibration,
  predictCalibrated,
  type Calibration,
  type Diagnostic,
  type Model,
  type PredictOptions,
  type PredictResult,
} from '@pipeloom/core';
import { printDiagnostics } from './read-document.js';

// The calibration beside a document (`pipeloom calibrate` writes it), read by `predict` and
// `run`: absent is normal (the cost hints are used); malformed or stale is said on stderr.

export interface LoadedCalibration {
  file: string;
  calibration: Calibration;
  /** predict() with it (each strategy from its own entries), its warnings printed once. */
  predict(opts?: Omit<PredictOptions, 'nodeTimes' | 'transferTimes'>): PredictResult;
  /** "predicted with calibration <file> (<date>)", for the commands' output. */
  note: string;
}

/** `analysed`: the model's analysis warnings, printed with the prediction's as without a calibration. */
export async function loadCalibration(
  documentPath: string,
  model: Model,
  file = calibrationPath(documentPath),
  analysed: Diagnostic[] = [],
): Promise<LoadedCalibration | undefined> {
  if (!existsSync(file)) return undefined;
  const max = inputByteLimit();
  if (!max.ok) {
    console.error(`warning: ${max.message}; predicting from the cost hints`);
    return undefined;
  }
  const read = readInputFile(file, max.limit);
  if (!read.ok) {
    console.error(`warning: ${inputFileMessage(file, read)}; predicting from the cost hints`);
    return undefined;
  }
  const parsed = parseCalibration(read.text, file);
  if (!parsed.ok) {
    printDiagnostics(parsed.diagnostics.map((d) => ({ ...d, severity: 'warning' as const })));
    console.error(`warning: ${file} not used; predicting from the cost hints`);
    return undefined;
  }
  const cal = parsed.calibration;
  let warned = false;
  let counts = '';
  const run = (opts: Omit<PredictOptions, 'nodeTimes' | 'transferTimes'> = {}) => {
    const r = predictCalibrated(model, cal, opts, file, analysed);
    if (r.timing && !warned) {
      warned = true;
      printDiagnostics(r.timing.overlap.diagnostics);
      const t = r.timing.overlap;
      counts = `; ${t.firings.calibrated}/${t.firings.total} firings, ${t.transfers.calibrated}/${t.transfers.total} transfers`;
    }
    return r;
  };
  return {
    file,
    calibration: cal,
    predict: run,
    get note() {
      return `predicted with calibration ${file} (${cal.date.slice(0, 16).replace('T', ' ')} UTC, ${cal.machine.hostname}${counts})`;
    },
  };
}
