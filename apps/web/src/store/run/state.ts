import type { StoreApi } from 'zustand';
import {
  TraceAccumulator,
  type AgentInfo,
  type BagCounts,
  type BagRunOptions,
  type Coordinator,
  type DeployProgress,
  type Diagnostic,
  type FailureReport,
  type ImplementationGraph,
  type Progress,
  type RunHandle,
  type RunOptions,
  type RunResult,
  type TraceMetadata,
} from '@pipeloom/core';

// The Run view's state: connections, the run in progress and its live numbers. The measured
// trace lives in a column store outside React state (it grows by thousands of events a
// second); the store only carries its version so views know to redraw, and the numbers are
// published a few times a second rather than per batch, each from the events that arrived
// since the last (core's TraceAccumulator), not from the whole trace again.

/** 'reconnecting': a connection closed without being asked to (an agent restarted); the store logs in again on its own. */
export type ConnectionStatus = 'disconnected' | 'connecting' | 'connected' | 'reconnecting' | 'failed';
export type RunStatus = 'idle' | 'checked' | 'running' | 'stopping' | 'done' | 'failed' | 'stopped' | 'calibrating';

/** A document revision as the designer counts them: every edit the compiler sees bumps `revision`, every load bumps `loads`. */
export interface DocumentRevision {
  revision: number;
  loads: number;
}

export interface LiveNumbers {
  cycle: number;
  cycles: number;
  iterationsPerSecond: number;
  /** Seconds per cycle in steady state so far (core's trace analysis of the cycles complete; before the fill is over, the mean since the start). */
  cycleTime: number;
  elapsed: number;
  events: number;
  /** Busy fraction of each lane (fire + transfer time over the trace's span, trace analysis), keyed host/pe/thread. */
  utilisation: { key: string; value: number }[];
}

/** A task-bag run's bag as it goes (core's onBag): tasks committed of all, requeued, late results discarded, recomputed, ready and not given (depth), given and not done (in flight). */
export type BagNumbers = BagCounts & { depth: number; inFlight: number };

/** What a task-bag run is started with besides its task graph (the document's run options). */
export type BagStartOptions = Pick<BagRunOptions, 'window' | 'prefetch' | 'emulateDevices'> & { iterations?: number };

export interface RunState {
  urls: string;
  token: string;
  connection: ConnectionStatus;
  connectError?: string;
  /** While reconnecting: the hosts whose connection closed. */
  lost?: string[];
  agents: AgentInfo[];
  iterations: number;
  /** Transfers last at least their link's time in the document (link emulation). */
  emulateLinks: boolean;
  /** How the agents synchronise: the document's options.sync (self-timed when unset). */
  sync?: RunOptions['sync'];
  /** A hard cap on a deploy, seconds; 0: none (the default: a deploy fails only when an agent goes silent). */
  deployTimeout: number;
  /** The run's deploy as the agents report it: each host's step, until all have deployed. */
  deploy?: DeployProgress;
  status: RunStatus;
  /** Problems between the plan and what the agents serve (from Deploy / Start). */
  problems: Diagnostic[];
  failure?: FailureReport;
  /** Per-node reports from checking kernels, and whether the run's checks passed; a task-bag run's bag counts and tasks per PE; what each sink wrote. */
  result?: {
    ok: boolean;
    seconds: number;
    cycles: number;
    reports: RunResult['reports'];
    dropped: number;
    bag?: RunResult['bag'];
    writes?: RunResult['writes'];
  };
  /** The mode of the run (or check) shown: the compiled programs on the mapping, or the task bag. */
  mode: 'static' | 'taskbag';
  /** A task-bag run's live bag numbers (published with the other live numbers), kept after it ends. */
  bag?: BagNumbers;
  live: LiveNumbers;
  /** Version of the measured trace (bumped when batches arrive). */
  traceVersion: number;
  /** Events are streaming in (a run, or the timeline benchmark): the timeline polls every frame. */
  streaming: boolean;
  /** The document's revision now (the designer reports each edit and load). */
  seen: DocumentRevision;
  /** The revision the last Deploy or run was of: its check and results belong to it. */
  ran?: DocumentRevision;
  /** The calibration run in progress: which strategy, and why the last one failed. */
  calibration?: { strategy?: 'overlap' | 'no overlap'; error?: string };
  /** A saved trace opened in place of a run's (Open trace…): its file, what its metadata says it is. */
  opened?: { file: string; events: number; metadata?: TraceMetadata };
  /** Why the last trace file opened was not taken (the trace shown is kept). */
  traceProblems: Diagnostic[];
}

/** Whether the deploy check and results shown are of the document as it is ('current'), of an earlier revision ('modified'), or there are none. */
export function freshness(s: Pick<RunState, 'seen' | 'ran'>): 'none' | 'current' | 'modified' {
  if (!s.ran) return 'none';
  return s.ran.revision === s.seen.revision && s.ran.loads === s.seen.loads ? 'current' : 'modified';
}

/** Steady cycles measured per strategy by Calibrate (as `pipeloom calibrate`'s default). */
export const CALIBRATE_ITERATIONS = 10;

export const emptyLive = (): LiveNumbers => ({ cycle: 0, cycles: 0, iterationsPerSecond: 0, cycleTime: 0, elapsed: 0, events: 0, utilisation: [] });

/** A Run view's state before anything happened. */
export const initialRunState = (): RunState => ({
  urls: '',
  token: '',
  connection: 'disconnected',
  agents: [],
  iterations: 50,
  emulateLinks: false,
  deployTimeout: 0,
  status: 'idle',
  mode: 'static',
  problems: [],
  live: emptyLive(),
  traceVersion: 0,
  streaming: false,
  seen: { revision: 0, loads: 0 },
  traceProblems: [],
});

/**
 * What the slices of one Run view's store share (connection.ts, trace.ts, runs.ts): the store,
 * the coordinator of the live login, the run going on and the measured trace.
 */
export interface RunContext {
  store: StoreApi<RunState>;
  coordinator: Coordinator | null;
  handle: RunHandle | null;
  // The graph of the current (or last) run: the trace export draws its flows from it.
  runIg: ImplementationGraph | null;
  runIterations: number | undefined;
  // The measured trace and its analysis so far.
  measured: TraceAccumulator;
  progress: Progress | null;
  // The bag's latest counts (onBag fires per task event; published with the live numbers).
  bagNow: BagNumbers | undefined;
  timer: ReturnType<typeof setInterval> | undefined;
}

export function runContext(store: StoreApi<RunState>): RunContext {
  return {
    store,
    coordinator: null,
    handle: null,
    runIg: null,
    runIterations: undefined,
    measured: new TraceAccumulator(),
    progress: null,
    bagNow: undefined,
    timer: undefined,
  };
}
