import {
  analyze,
  bagGraph,
  lowerDocument,
  predict,
  type Lowered,
  predictCalibrated,
  standInTimes,
  type Calibration,
  type Model,
  type WrittenDocument,
  type ImplementationGraph,
} from '@pipeloom/core';
import { GENERIC_WORK } from '@pipeloom/kernels';
import { layoutIg } from '../layout/ig.js';
import { tidyDfg } from '../layout/tidy.js';
import { walkInstances } from '../document/graphs.js';
import { ioProblems } from '../document/io.js';
import { FIRING_SIZE, type BagPlan, type CalibratedCycle, type CompileOutput, type LoweredView, type Strategy } from './protocol.js';

// Compiles and predicts a document under both strategies and lays each IG out. A plain
// function: the worker exposes it, tests call it directly.

/**
 * Events in each strategy's predicted timeline (the run view's preview before a run): all
 * of it is copied to the main thread on every edit, and 400,000 events of a 1,000-node graph
 * took ~4 s to copy there, so the preview draws the first cycles up to about this many.
 */
export const PREVIEW_EVENTS = 20_000;

export async function compileBoth(doc: WrittenDocument, now: () => number = () => performance.now(), calibration?: Calibration | null): Promise<CompileOutput> {
  const t0 = now();
  // predict() validates once and compiles both strategies (paper 4.3) before timing them.
  const r = predict(doc, { timelineEvents: PREVIEW_EVENTS });
  const compileMs = now() - t0;
  const low = lowered(doc);
  const view = low && (await loweredView(low));
  if (!r.ok) {
    // In task-bag mode the static plan is not what runs: a document it refuses (a loop across PEs
    // shorter than its cycles round) may still run as tasks; its problems stay, said as static mode's.
    const bag = doc.options.mode === 'taskbag' ? bagPlan(analyze(doc).model) : undefined;
    const diagnostics = bag?.graph
      ? r.diagnostics.map((d) => (d.severity === 'error' ? { ...d, severity: 'warning' as const, message: `static mode: ${d.message}` } : d))
      : r.diagnostics;
    return {
      diagnostics: [...diagnostics, ...(bag?.diagnostics ?? []), ...ioProblems(doc)],
      overlap: null,
      noOverlap: null,
      prediction: null,
      ...(view ? { lowered: view } : {}),
      ...(bag ? { bag } : {}),
      compileMs,
      ms: now() - t0,
    };
  }
  // The model that stand-ins, the calibrated prediction and the task graph share: analysed
  // once, and only when one of them is wanted (predict keeps its own to itself).
  let analysed: Model | undefined | null = null;
  const model = () => (analysed === null ? (analysed = analyze(doc).model) : analysed);
  const bag = doc.options.mode === 'taskbag' ? bagPlan(model()) : undefined;
  // The designer's own word on sources and sinks: a path that names no data root.
  const diagnostics = [...r.diagnostics, ...(bag?.diagnostics ?? []), ...ioProblems(doc)];
  const order = doc.arch.pes.map((p) => p.id);
  // The IG names lowered nodes (`s1/inc`, `S#3`): their PEs are in the lowered mapping.
  const mapping = low?.doc.mapping ?? doc.mapping;
  const lay = async (ig: ImplementationGraph): Promise<Strategy> => ({ ig, layout: await layoutIg(ig, mapping, order) });
  // The strategy the document does not choose may be impossible (a loop's delay): left out.
  const [overlap, noOverlap] = await Promise.all([
    r.prediction.overlap && lay(r.prediction.overlap.ig),
    r.prediction.noOverlap && lay(r.prediction.noOverlap.ig),
  ]);
  return {
    diagnostics,
    overlap: overlap ?? null,
    noOverlap: noOverlap ?? null,
    prediction: r.prediction,
    calibrated: calibration ? calibrated(model(), calibration) : undefined,
    standIns: standIns(doc, model),
    ...(view ? { lowered: view } : {}),
    ...(bag ? { bag } : {}),
    compileMs,
    ms: now() - t0,
  };
}

/**
 * A document with rates or composites lowered (again: predict keeps its model to itself, and
 * lowering is a small part of compiling); undefined for others, and when lowering finds a
 * problem (the diagnostics say which).
 */
function lowered(doc: WrittenDocument): Lowered | undefined {
  let multi = false;
  walkInstances(doc, (n) => {
    if (n.rates || n.composite !== undefined || n.graph) multi = true;
  });
  if (!multi) return undefined;
  try {
    return lowerDocument(doc).lowered;
  } catch {
    // A document whose shape is broken: validation has reported it.
    return undefined;
  }
}

/** Repetition counts and the expanded graph laid out. */
async function loweredView(lowered: Lowered): Promise<LoweredView> {
  const { nodes, edges } = lowered.doc.app;
  const sizes = Object.fromEntries(nodes.map((n) => [n.id, FIRING_SIZE]));
  const at = await tidyDfg(lowered.doc, sizes);
  return {
    repetitions: lowered.repetitions,
    expanded: {
      nodes: nodes.map((n) => ({ id: n.id, kernel: n.kernel, ...(n.firing ? { firing: n.firing } : {}), position: at[n.id] ?? { x: 0, y: 0 } })),
      edges: edges.map((e) => ({
        from: e.from,
        to: e.to,
        ...(e.fromTokens ? { fromTokens: e.fromTokens } : {}),
        ...(e.toTokens ? { toTokens: e.toTokens } : {}),
        ...(e.delay ? { delay: e.delay } : {}),
      })),
    },
  };
}

/** generic.work's run-time padding (core `standInTimes`); nothing to compute when the document has none. */
function standIns(doc: WrittenDocument, model: () => Model | undefined): Record<string, number> | undefined {
  if (!doc.app.nodes.some((n) => n.kernel === GENERIC_WORK)) return undefined;
  const m = model();
  return m ? standInTimes(m) : undefined;
}

/** The task graph of a task-bag document (core `bagGraph`); none for a model that did not validate (its diagnostics say why). */
function bagPlan(model: Model | undefined): BagPlan | undefined {
  return model ? bagGraph(model) : undefined;
}

/** Both strategies' cycle predicted with the project's calibration instead of the cost hints (no timeline). */
function calibrated(model: Model | undefined, calibration: Calibration): CalibratedCycle | undefined {
  if (!model) return undefined;
  // Its timelines too, as long as the cost hints' preview: the Run view draws the plan from them.
  const r = predictCalibrated(model, calibration, { timelineEvents: PREVIEW_EVENTS });
  if (!r.ok || !r.timing) return undefined;
  const t = r.timing.overlap;
  // A strategy that cannot compile (a loop's delay) has no calibrated cycle to show beside it.
  const { overlap, noOverlap } = r.prediction;
  if (!overlap || !noOverlap) return undefined;
  return {
    overlap: overlap.cycleTime,
    noOverlap: noOverlap.cycleTime,
    runTime: { overlap: overlap.runTime, noOverlap: noOverlap.runTime, iterations: overlap.iterations },
    timeline: { overlap: overlap.timeline, noOverlap: noOverlap.timeline },
    date: calibration.date,
    machine: calibration.machine.hostname,
    firings: t.firings,
    transfers: t.transfers,
    diagnostics: t.diagnostics,
  };
}
