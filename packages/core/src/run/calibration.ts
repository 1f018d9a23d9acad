import { error, warning, type Diagnostic } from '../diagnostics.js';
import { compileModel } from '../compile/compile.js';
import type { ImplementationGraph } from '../compile/types.js';
import { canonical, documentHash } from '../document/hash.js';
import type { Model } from '../document/model.js';
import { nodeTime, type TimingOptions } from '../predict/timing.js';
import { predictModel, type PredictOptions, type PredictResult } from '../predict/predict.js';
import { GENERIC_WORK } from '@pipeloom/kernels/specs';

// A calibration: what this machine's PEs and links measured for a document's firings and
// transfers (`pipeloom calibrate`), so predictions use them instead of the cost hints.
// Keyed by what sets the time, not by node or buffer ids: a firing by kernel + params + PE,
// a transfer by its two PEs and its bytes. A document edited after calibrating keeps the
// entries that still match; the others fall back to the cost hints. Each entry also says the
// strategy it was measured under: on a machine whose PEs share cores (llvmpipe) a firing
// beside copies takes longer than alone, so a prediction takes the firings of its own strategy
// where there are some. Transfers are taken from runs without overlap where there are some: with
// overlap a copy to or from a GPU queues behind its kernel (one queue per device), so its
// measured span holds the kernel's time too, which is the GPU's busy time, not the link's.

export const CALIBRATION_FORMAT = 'pipeloom-calibration/v1';

export interface CalibratedFiring {
  kernel: string;
  /** The node's params with the kernel's defaults filled in. */
  params: Record<string, unknown>;
  pe: string;
  /** The strategy it was measured under (absent: any). */
  overlap?: boolean;
  /** Mean seconds per firing. */
  seconds: number;
  /** Nodes this entry was measured on. */
  nodes: number;
}

export interface CalibratedTransfer {
  from: string;
  to: string;
  bytes: number;
  /** The strategy it was measured under (absent: any). */
  overlap?: boolean;
  /** Mean seconds per transfer (a host-to-host one: from the sender's first byte out to the receiver's copy into its slot done). */
  seconds: number;
  transfers: number;
}

export interface Calibration {
  format: typeof CALIBRATION_FORMAT;
  /** The document it was measured on: its name and `documentHash`. */
  document: { name: string; hash: string };
  /** Where: the coordinator's host name and CPU, each GPU PE's adapter. */
  machine: { hostname: string; cpu: string; adapters: Record<string, string> };
  /** ISO 8601, when it was measured. */
  date: string;
  iterations: number;
  firings: CalibratedFiring[];
  transfers: CalibratedTransfer[];
  /** Mean seconds one cluster barrier costs here (measured in barrier mode; the predictor's `barrier`). */
  barrier?: number;
}

/** What the trace analysis measured in a run: mean seconds per firing by node, per transfer by `<from buffer>-><to buffer>`, per cluster barrier. */
export interface MeasuredTimes {
  nodeTimes: Record<string, number>;
  transferTimes: Record<string, number>;
  barrier?: number;
}

const firingKey = (kernel: string, params: unknown, pe: string) => `${kernel} ${canonical(params)} @${pe}`;
const transferKeyOf = (from: string, to: string, bytes: number) => `${from}->${to} ${bytes}`;
const strategyKey = (key: string, overlap: boolean | undefined) => `${key} ${overlap === undefined ? '' : overlap ? 'overlap' : 'no overlap'}`;

/** Each transfer of an implementation graph: its key (`<from buffer>-><to buffer>`), its PEs and bytes. */
function transfersOf(ig: ImplementationGraph): { key: string; from: string; to: string; bytes: number }[] {
  const { buffers } = ig;
  const { pes, transfer } = ig.programs;
  const out: { key: string; from: string; to: string; bytes: number }[] = [];
  for (let k = 0; k < buffers.count; k++) {
    const source = transfer.from[k];
    if (source < 0) continue;
    out.push({ key: `${buffers.id[source]}->${buffers.id[k]}`, from: pes[buffers.pe[source]].pe, to: pes[buffers.pe[k]].pe, bytes: buffers.bytes[k] });
  }
  return out;
}

/**
 * A calibration from runs' measured times: `runs` pairs each run's implementation graph with
 * what the trace analysis measured in it (its steady cycles: the fill's first firings include
 * one-time costs such as shader compiles). Each strategy's runs make their own entries.
 */
export function calibrationFrom(
  model: Model,
  runs: { ig: ImplementationGraph; measured: MeasuredTimes }[],
  meta: Pick<Calibration, 'machine' | 'date' | 'iterations'>,
): Calibration {
  const firings = new Map<string, CalibratedFiring & { sum: number; n: number }>();
  const transfers = new Map<string, CalibratedTransfer & { sum: number; n: number }>();
  for (const { ig, measured } of runs) {
    for (const [node, seconds] of Object.entries(measured.nodeTimes)) {
      const n = model.node.get(node as never);
      if (!n) continue;
      const key = strategyKey(firingKey(n.kernel.id, n.params, n.pe), ig.overlap);
      let f = firings.get(key);
      if (!f)
        firings.set(
          key,
          (f = { kernel: n.kernel.id, params: n.params as Record<string, unknown>, pe: n.pe, overlap: ig.overlap, seconds: 0, nodes: 0, sum: 0, n: 0 }),
        );
      f.sum += seconds;
      f.n++;
    }
    for (const t of transfersOf(ig)) {
      const seconds = measured.transferTimes[t.key];
      if (seconds === undefined) continue;
      const key = strategyKey(transferKeyOf(t.from, t.to, t.bytes), ig.overlap);
      let e = transfers.get(key);
      if (!e) transfers.set(key, (e = { from: t.from, to: t.to, bytes: t.bytes, overlap: ig.overlap, seconds: 0, transfers: 0, sum: 0, n: 0 }));
      e.sum += seconds;
      e.n++;
    }
  }
  const barriers = runs.map((r) => r.measured.barrier).filter((b): b is number => b !== undefined);
  return {
    format: CALIBRATION_FORMAT,
    ...(barriers.length ? { barrier: barriers.reduce((a, b) => a + b, 0) / barriers.length } : {}),
    document: { name: model.written.name ?? '', hash: documentHash(model.written) },
    machine: meta.machine,
    date: meta.date,
    iterations: meta.iterations,
    firings: [...firings.values()].map(({ sum, n, ...f }) => ({ ...f, seconds: sum / n, nodes: n })),
    transfers: [...transfers.values()].map(({ sum, n, ...t }) => ({ ...t, seconds: sum / n, transfers: n })),
  };
}

/**
 * Reads a calibration file's text. A malformed one is a list of diagnostics naming the field
 * (`calibration.firings[2].seconds`) and what to do; never throws.
 */
export function parseCalibration(text: string, file = 'calibration'): { ok: true; calibration: Calibration } | { ok: false; diagnostics: Diagnostic[] } {
  const again = `run \`pipeloom calibrate\` again to rewrite ${file}`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, diagnostics: [error(file, `not JSON: ${e instanceof Error ? e.message : String(e)}`, again)] };
  }
  const out: Diagnostic[] = [];
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(raw)) return { ok: false, diagnostics: [error(file, 'not a calibration (expected a JSON object)', again)] };
  if (raw.format !== CALIBRATION_FORMAT)
    out.push(error(`${file}.format`, `format must be "${CALIBRATION_FORMAT}", not ${JSON.stringify(raw.format) ?? 'missing'}`, again));
  const doc = raw.document;
  if (!isObj(doc) || typeof doc.hash !== 'string' || typeof doc.name !== 'string')
    out.push(error(`${file}.document`, 'must be { name, hash } (strings)', again));
  const machine = raw.machine;
  if (!isObj(machine) || typeof machine.hostname !== 'string' || typeof machine.cpu !== 'string' || !isObj(machine.adapters))
    out.push(error(`${file}.machine`, 'must be { hostname, cpu, adapters }', again));
  if (typeof raw.date !== 'string' || Number.isNaN(Date.parse(raw.date))) out.push(error(`${file}.date`, 'must be an ISO 8601 date', again));
  const time = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  const list = (name: 'firings' | 'transfers', check: (e: Record<string, unknown>) => string | undefined) => {
    const xs = raw[name];
    if (!Array.isArray(xs)) return void out.push(error(`${file}.${name}`, 'must be a list', again));
    xs.forEach((e, i) => {
      const why = isObj(e) ? check(e) : 'must be an object';
      if (why) out.push(error(`${file}.${name}[${i}]`, why, again));
    });
  };
  const strategy = (e: Record<string, unknown>) => e.overlap === undefined || typeof e.overlap === 'boolean';
  list('firings', (e) =>
    typeof e.kernel !== 'string' || typeof e.pe !== 'string' || !isObj(e.params)
      ? 'needs kernel, params and pe'
      : !time(e.seconds)
        ? 'seconds must be a number of at least 0'
        : !strategy(e)
          ? 'overlap must be true or false'
          : undefined,
  );
  list('transfers', (e) =>
    typeof e.from !== 'string' || typeof e.to !== 'string' || !time(e.bytes)
      ? 'needs from, to and bytes'
      : !time(e.seconds)
        ? 'seconds must be a number of at least 0'
        : !strategy(e)
          ? 'overlap must be true or false'
          : undefined,
  );
  if (raw.barrier !== undefined && !time(raw.barrier)) out.push(error(`${file}.barrier`, 'must be a number of seconds of at least 0', again));
  if (out.length) return { ok: false, diagnostics: out };
  return { ok: true, calibration: raw as unknown as Calibration };
}

export interface CalibratedTiming {
  /** The predictor's overrides for this document (both strategies' transfer keys). */
  timing: Required<TimingOptions>;
  /** Firings and transfers of the document that found an entry, and how many there are. */
  firings: { calibrated: number; total: number };
  transfers: { calibrated: number; total: number };
  /** Warnings: another document version, entries missing (those use the cost hints). */
  diagnostics: Diagnostic[];
}

/**
 * The seconds of each key, for a strategy: the entries measured under it where there are
 * some, else the mean of the key's entries under any strategy.
 */
function byKey<E extends { overlap?: boolean; seconds: number }>(entries: E[], key: (e: E) => string, overlap: boolean | undefined): Map<string, number> {
  const own = new Map<string, number[]>();
  const any = new Map<string, number[]>();
  for (const e of entries) {
    const k = key(e);
    if (overlap !== undefined && e.overlap === overlap) own.set(k, [...(own.get(k) ?? []), e.seconds]);
    any.set(k, [...(any.get(k) ?? []), e.seconds]);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return new Map([...any].map(([k, xs]) => [k, mean(own.get(k) ?? xs)]));
}

/**
 * The predictor's inputs from a calibration, for a document: each node's firing time where
 * its kernel + params + PE were measured, each transfer's where its PEs and bytes were (under
 * either strategy: their buffer ids differ). Whatever found no entry keeps its cost hint.
 * `overlap`: the strategy predicted, whose own firings are taken first (default: any);
 * transfers measured without overlap are taken first for both (see the top of this file).
 */
export function calibratedTiming(model: Model, cal: Calibration, file = 'calibration', overlap?: boolean): CalibratedTiming {
  const diagnostics: Diagnostic[] = [];
  const hash = documentHash(model.written);
  if (cal.document.hash !== hash)
    diagnostics.push(
      warning(
        file,
        `was measured on another version of the document (hash ${cal.document.hash}, now ${hash})`,
        'entries for unchanged kernels, PEs and links are used, the others fall back to the cost hints; run `pipeloom calibrate` again',
      ),
    );
  const firing = byKey(cal.firings, (f) => firingKey(f.kernel, f.params, f.pe), overlap);
  const transfer = byKey(cal.transfers, (t) => transferKeyOf(t.from, t.to, t.bytes), false);
  const nodeTimes: Record<string, number> = {};
  const missing: string[] = [];
  for (const n of model.nodes) {
    const s = firing.get(firingKey(n.kernel.id, n.params, n.pe));
    if (s === undefined) missing.push(`node ${n.id} (${n.kernel.id} on ${n.pe})`);
    else nodeTimes[n.id] = s;
  }
  const transferTimes: Record<string, number> = {};
  const seen = new Set<string>();
  let found = 0;
  for (const strategy of overlap === undefined ? [true, false] : [overlap]) {
    const r = compileModel(model, strategy);
    if (!r.ok) continue;
    for (const t of transfersOf(r.ig)) {
      const s = transfer.get(transferKeyOf(t.from, t.to, t.bytes));
      const what = `transfer ${t.from} -> ${t.to} (${t.bytes} bytes)`;
      if (s === undefined) {
        if (!seen.has(what)) missing.push(what);
      } else {
        transferTimes[t.key] = s;
        if (!seen.has(what)) found++;
      }
      seen.add(what);
    }
  }
  if (missing.length)
    diagnostics.push(
      warning(
        file,
        `has no entry for ${missing.length > 3 ? `${missing.slice(0, 3).join(', ')} and ${missing.length - 3} more` : missing.join(', ')}`,
        'those use the cost hints; run `pipeloom calibrate` again',
      ),
    );
  const nodes = model.nodes.length;
  return {
    timing: { nodeTimes, transferTimes },
    firings: { calibrated: Object.keys(nodeTimes).length, total: nodes },
    transfers: { calibrated: found, total: seen.size },
    diagnostics,
  };
}

/** `<document>.calibration.json`: where a document's calibration lives, beside it. */
export function calibrationPath(documentPath: string): string {
  return `${documentPath.replace(/\.json$/i, '')}.calibration.json`;
}

/**
 * Emulated devices (a run's `emulateDevices`): the seconds each firing on a GPU PE lasts at
 * least, by node: its calibrated time where `timing` has one, else its cost hint.
 */
export function deviceTimes(model: Model, timing: TimingOptions = {}): Record<string, number> {
  const out: Record<string, number> = {};
  for (const n of model.nodes) if (model.pe.get(n.pe)?.kind === 'gpu') out[n.id] = nodeTime(model, n.id, timing);
  return out;
}

/**
 * generic.work stands in for a kernel not written yet: on any PE its firings always last its
 * cost hint's time on that PE (a run's `emulateDevices` for those nodes), so a prototype runs
 * at the pace predicted for it, from the CLI and the designer alike. Undefined when the
 * document has none.
 */
export function standInTimes(model: Model): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const n of model.nodes) if (n.kernel.id === GENERIC_WORK) out[n.id] = nodeTime(model, n.id);
  return Object.keys(out).length ? out : undefined;
}

/**
 * predict() with a calibration: each strategy from its own entries (`calibratedTiming`) and
 * the calibrated barrier cost, the speedup between them. `timing` is what each strategy used (its warnings included);
 * `analysed`: the model's analysis warnings, returned with the compiler's as predict() does.
 */
export function predictCalibrated(
  model: Model,
  cal: Calibration,
  opts: Omit<PredictOptions, 'nodeTimes' | 'transferTimes'> = {},
  file = 'calibration',
  analysed: Diagnostic[] = [],
): PredictResult & { timing?: { overlap: CalibratedTiming; noOverlap: CalibratedTiming } } {
  const timing = { overlap: calibratedTiming(model, cal, file, true), noOverlap: calibratedTiming(model, cal, file, false) };
  // The barrier's measured cost, unless the caller sets one (self-timed predictions have none).
  if (opts.barrier === undefined && cal.barrier !== undefined) opts = { ...opts, barrier: cal.barrier };
  // The model itself, not its (lowered) document analysed again: lowering is not idempotent.
  const withOverlap = predictModel(model, { ...opts, ...timing.overlap.timing }, [...analysed]);
  const without = predictModel(model, { ...opts, ...timing.noOverlap.timing }, [...analysed]);
  if (!withOverlap.ok) return withOverlap;
  if (!without.ok) return without;
  const overlap = withOverlap.prediction.overlap;
  const noOverlap = without.prediction.noOverlap;
  const speedup = overlap && noOverlap && overlap.cycleTime > 0 ? noOverlap.cycleTime / overlap.cycleTime : 1;
  return { ok: true, diagnostics: withOverlap.diagnostics, prediction: { ...withOverlap.prediction, overlap, noOverlap, speedup }, timing };
}
