import type { AppEdge, AppNode, BagGraph, Calibration, Prediction, Diagnostic, ImplementationGraph, WrittenDocument, TraceEvent } from '@pipeloom/core';
import type { IgLayout } from '../layout/ig.js';
import type { KernelManifest } from '@pipeloom/kernels';

// What the compile worker hands back: both strategies compiled, predicted and laid out, so
// the overlap toggle in the IG view flips without a round trip.

export interface Strategy {
  ig: ImplementationGraph;
  layout: IgLayout;
}

export interface CompileOutput {
  /** Validation and compile diagnostics. */
  diagnostics: Diagnostic[];
  overlap: Strategy | null;
  noOverlap: Strategy | null;
  /** The predictor's cycle time, phases and timeline for each strategy. */
  prediction: Prediction | null;
  /** Both strategies' cycle predicted with the project's calibration, when it has one. */
  calibrated?: CalibratedCycle;
  /** Seconds each generic.work firing lasts in a run (core `standInTimes`), when the document has any. */
  standIns?: Record<string, number>;
  /** What lowering made of a document with rates or composites (absent for others: every node fires once). */
  lowered?: LoweredView;
  /** Task-bag mode (options.mode 'taskbag') on a document that validates: what the Run view starts. */
  bag?: BagPlan;
  /** Wall time of validate + both compiles + both predictions, in ms. */
  compileMs: number;
  /** compileMs plus both layouts. */
  ms: number;
}

/** The size ELK gives each firing of the expanded graph (dfg/ExpandedView.tsx draws them so). */
export const FIRING_SIZE = { width: 150, height: 52 };

/** The lowered document as the designer shows it: repetition counts on the DFG, the expanded graph read-only. */
export interface LoweredView {
  /** Firings per iteration by flattened node id (`S`: 8, `s1/inc`: 1). */
  repetitions: Record<string, number>;
  /** The single-rate graph the compiler reads: firings `S#0` .. `S#7`, composites flattened, edges with the tokens they carry, laid out by ELK. */
  expanded: {
    nodes: (Pick<AppNode, 'id' | 'kernel' | 'firing'> & { position: { x: number; y: number } })[];
    edges: Pick<AppEdge, 'from' | 'to' | 'fromTokens' | 'toTokens' | 'delay'>[];
  };
}

/**
 * The task graph core's runBag takes (plain data: it crosses comlink), or, without one, the
 * diagnostics saying why task-bag mode cannot run the document (also in `diagnostics`).
 */
export interface BagPlan {
  graph?: BagGraph;
  diagnostics: Diagnostic[];
}

/** Cycle times predicted from a calibration's measured firing and transfer times. */
export interface CalibratedCycle {
  overlap: number;
  noOverlap: number;
  /** Seconds for the document's iterations under each strategy, with the calibration. */
  runTime: { overlap: number; noOverlap: number; iterations: number };
  /** Each strategy's plan with the calibrated times (the first cycles, as the cost hints' preview). */
  timeline: { overlap: TraceEvent[]; noOverlap: TraceEvent[] };
  /** When and where it was measured. */
  date: string;
  machine: string;
  /** Firings and transfers of the document it had a time for (the others keep their cost hints). */
  firings: { calibrated: number; total: number };
  transfers: { calibrated: number; total: number };
  /** Another version of the document, entries missing. */
  diagnostics: Diagnostic[];
}

/** A document read from its text (core parseDocument, then normalised and placed for the editor), or why not. */
export interface ReadOutput {
  doc?: WrittenDocument;
  diagnostics: Diagnostic[];
}

export interface CompileApi {
  /** Reads a document's text off the main thread: a large one takes seconds to parse and normalise. */
  read(text: string): Promise<ReadOutput>;
  compile(doc: WrittenDocument, calibration?: Calibration | null): Promise<CompileOutput>;
  /** Positions for every DFG node from an ELK layered layout. */
  tidy(doc: WrittenDocument, sizes: Record<string, { width: number; height: number }>): Promise<Record<string, { x: number; y: number }>>;
  /** Registers package kernels the agents reported (manifests) in the worker's own registry. */
  registerManifests(manifests: KernelManifest[]): void;
}
