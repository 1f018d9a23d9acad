import type { KernelManifest } from '@pipeloom/kernels/specs';
import type { PeProgram } from '../compile/types.js';
import type { TraceEvent } from '../trace/event.js';
import type { InitSpec, SyncMode } from '../document/types.js';
import type { SelfTimedPlan } from '../compile/contract.js';
import type { PeCapabilities } from '../document/requires.js';

// The messages between a coordinator and its agents, and between agents (peer links).
// JSON text frames; host-to-host data travels as binary frames on peer links only.
// Every message is validated on receipt (`parseMessage`): a malformed one closes that
// connection with a reason and touches nothing else.

/** 3: peer links authenticate by challenge-response over a per-run secret (the token never crosses a peer link). */
export const PROTOCOL_VERSION = 3;

/** WebSocket close codes the agent uses; the reason string says the rest. */
export const CLOSE = {
  normal: 1000,
  /** Wrong or missing token. */
  auth: 4001,
  /** Origin not in the agent's allow-list. */
  origin: 4003,
  /** Malformed message, unknown type, wrong version. */
  protocol: 4002,
  /** Message larger than the agent's limit. */
  tooBig: 4009,
  /** More messages per second than the agent's limit. */
  rate: 4029,
} as const;

/** One processing element an agent serves. */
export interface PeReport {
  id: string;
  kind: 'cpu' | 'gpu';
  /** Human-readable device name (CPU model, adapter description). */
  name: string;
  vendor: string;
  /** Bytes available for buffers. */
  memory: number;
  /** For GPUs: the adapter's limits that matter to buffers. */
  limits?: { maxBufferSize: number; maxStorageBufferBindingSize: number };
  /** For GPUs: index of the adapter in discovery order (several PEs may share one when emulated). */
  adapter?: number;
  /** For GPUs: which WebGPU backend this agent uses (e.g. 'opengl', 'vulkan'). */
  backend?: string;
  /** What a node's `requires` is checked against (run/requires.ts). */
  capabilities?: PeCapabilities;
}

/** The machine an agent runs on: its hostname and a hash of the OS machine id (two agents on one machine share it). */
export interface MachineIdentity {
  hostname: string;
  id: string;
}

/** An agent process's memory, bytes. */
export interface ProcessMemory {
  rss: number;
  /** The agent's main thread. */
  heapUsed: number;
  /** Each PE thread's heap (PE id -> bytes). */
  peHeaps?: Record<string, number>;
}

export interface FailureReport {
  host: string;
  pe?: string;
  node?: string;
  iteration?: number;
  message: string;
}

// Coordinator -> agent
export type ToAgent =
  | { type: 'auth'; version: number; token: string }
  | { type: 'ping'; id: number; t: number }
  | {
      type: 'deploy';
      runId: string;
      /**
       * The run's secret, made by the coordinator and sent only to the run's agents: peer links
       * prove it (with the token) by challenge-response, so no one else can join the run's links.
       */
      secret: string;
      programs: PeProgram[];
      /** Every host of the run with its agent's URL (for peer links), in one order for all agents (the cluster barrier's). */
      hosts: { id: string; url: string }[];
      iterations: number;
      /** Cycles of the run: the largest startCycle of any action in the cluster + iterations. */
      cycles: number;
      /** Host and kind of every PE of the run (to tell same-host from host-to-host transfers). */
      pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>;
      /** Each buffer's element type and bytes, so host views match the kernels' typed arrays. */
      buffers: Record<string, { element: 'f32' | 'u32' | 'i32' | 'u8'; bytes: number }>;
      /** Optional cap on the host-to-host link, bytes per second (benchmarks). */
      linkRate?: number;
      /** Each transfer lasts at least its link's latency + bytes / bandwidth (the document's figures). */
      emulateLinks?: boolean;
      /** Each firing of these (GPU) nodes lasts at least this many seconds (emulated devices: calibrated or cost-hint time). */
      emulateDevices?: Record<string, number>;
      /** A labelled emulation of slower PEs (bench:taskbag's static baseline): after each firing on PE `pe`, it sleeps (factor - 1) x the firing's time, using no core. */
      slow?: Record<string, number>;
      /** Microseconds between trace batches (default 50 000). */
      traceInterval?: number;
      /** The version of each kernel the programs fire, as the coordinator compiled them; an agent with another major version refuses the deploy. */
      kernels?: Record<string, string>;
      /** How the run synchronises (docs/contract.md); absent: barrier (agents before self-timed execution). */
      sync?: SyncMode;
      /** Self-timed: this host's part of the plan (planForHosts: every counter, this host's PEs' actions). */
      plan?: SelfTimedPlan;
      /** Report deploy progress (`deploy-progress`), repeated every this many ms while a step runs; absent: no reports (older coordinators). */
      progressMs?: number;
    }
  | BagDeploy
  | BagTaskMessage
  /** Task-bag mode: these outputs (keys of `task` outputs) are no longer needed by any consumer. */
  | { type: 'free'; runId: string; keys: string[] }
  | { type: 'start'; runId: string }
  | { type: 'stop'; runId: string; reason: string };

// Task-bag mode (run/taskbag/): the coordinator hands out one task (one firing of one
// node for one iteration) at a time; data never passes through it. An output is named by a key,
// `<node>:<port>@<iteration>`, made by the coordinator and opaque to agents; the executing agent
// pulls each input from the agent that holds it (peer `pull`), caching it by key so several
// shares on one agent fetch the estimate once, and keeps its outputs until `free`.

/** A node of a task-bag run, as agents execute it: index in `BagDeploy.nodes` = the node's index in the model. */
export interface BagNodeSpec {
  id: string;
  kernel: string;
  /** Resolved params (defaults filled, expressions evaluated). */
  params: Record<string, number | string | boolean>;
}

/** Coordinator -> agent: a task-bag run's nodes; the agent answers `deployed` (nothing is allocated until tasks come). */
export interface BagDeploy {
  type: 'bag-deploy';
  runId: string;
  /** The run's secret: peer links (pulls) prove it, as in static runs. */
  secret: string;
  /** Every agent of the run with its URL (where pulls go). */
  hosts: { id: string; url: string }[];
  nodes: BagNodeSpec[];
  /** The version of each kernel the nodes fire; another major version refuses the deploy. */
  kernels?: Record<string, string>;
  /** Each firing of these (GPU) nodes lasts at least this many seconds (device emulation, as in static runs). */
  emulateDevices?: Record<string, number>;
  /**
   * A labelled emulation of slower PEs (bench:taskbag): after each task on PE `pe`, the PE sleeps
   * (factor - 1) x the task's run time, using no core.
   */
  slow?: Record<string, number>;
  /** Microseconds between trace batches (default 50 000). */
  traceInterval?: number;
  /** Report deploy progress every this many ms, as a static deploy's `progressMs`. */
  progressMs?: number;
}

/** Where one input of a task comes from: parts of producers' outputs (pulled by key from `host`), or initial tokens. */
export interface BagInput {
  port: string;
  /** Bytes of the whole input. */
  bytes: number;
  /**
   * Parts copied into the input: `bytes` bytes from `offset` of output `key` (held by `host`) to
   * `at` of the input. `size`: the bytes of the whole output `key` (a pull's answer is exactly this long).
   */
  parts?: { key: string; host: string; size: number; offset: number; bytes: number; at: number }[];
  /** A delayed edge's initial tokens (iteration < delay): a constant in every element, or its source kernel run once. */
  init?: InitSpec;
  /** The element type of the input (views and constant fills). */
  element: 'f32' | 'u32' | 'i32' | 'u8';
}

/** Coordinator -> agent: run one task on one of the agent's PEs. */
export interface BagTaskMessage {
  type: 'task';
  runId: string;
  /** `node[share]@iteration` (`node@iteration` for an unsplit node): one commit per id. */
  id: string;
  /** Index in `BagDeploy.nodes`. */
  node: number;
  iteration: number;
  /** 1, 2, 3: the attempt (a requeued task's next one); a result names it, and a superseded attempt's result is discarded. */
  attempt: number;
  pe: string;
  inputs: BagInput[];
  /** Each output port's key and bytes: the agent keeps it under the key until `free`. */
  outputs: { port: string; key: string; bytes: number }[];
}

/**
 * The steps of a deploy on an agent, in the order they run: peer links to the run's other
 * agents, waiting for the previous run's memory to be freed, host memory allocation, then per
 * PE its device set-up (device, buffers, initial tokens) and its kernels' preparation (shader
 * modules, pipelines). A task-bag deploy has only the first two.
 */
export const DEPLOY_STEPS = ['links', 'freeing', 'allocation', 'device', 'kernels'] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

/** One step in flight on an agent: host-wide, or of one PE (`device`, `kernels`). */
export interface DeployStepReport {
  step: DeployStep;
  pe?: string;
}

/** Steps one `deploy-progress` may list (the sender lists the longest-running first). */
export const MAX_DEPLOY_STEPS = 64;
/** What one sink (an io.write node) wrote on its agent in a run, as the agent reports it. */
export interface SinkWrite {
  node: string;
  host: string;
  pe: string;
  /** The path as the document wrote it (`root:relative/path`, a sequence's pattern). */
  path: string;
  bytes: number;
  files: number;
  iterations: number;
}

/** Most sinks one `done` may report, and the longest string in one. */
export const MAX_SINK_WRITES = 4096;
const MAX_SINK_TEXT = 1024;

/** What is wrong with a `done`'s `writes`, if anything: a bounded list of SinkWrite, short strings, counts that are whole numbers. */
function writesProblem(w: unknown): string | undefined {
  if (!Array.isArray(w) || w.length > MAX_SINK_WRITES) return `writes must be a list of at most ${MAX_SINK_WRITES}`;
  for (const [i, x] of w.entries()) {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) return `writes[${i}] must be an object`;
    const r = x as Record<string, unknown>;
    for (const k of ['node', 'host', 'pe', 'path'])
      if (typeof r[k] !== 'string' || (r[k] as string).length > MAX_SINK_TEXT)
        return `writes[${i}].${k} must be a string of at most ${MAX_SINK_TEXT} characters`;
    for (const k of ['bytes', 'files', 'iterations'])
      if (!Number.isSafeInteger(r[k]) || (r[k] as number) < 0) return `writes[${i}].${k} must be a whole number of at least 0`;
  }
  return undefined;
}

/** Characters of a PE id in a `deploy-progress` (as a deploy's ids). */
const MAX_STEP_PE = 256;

// Agent -> coordinator
export type FromAgent =
  /**
   * `agentVersion`: the agent package's version (traces name it); absent from older agents.
   * `kernels`: the manifests (data, no code) of every kernel the agent can run, built-ins and
   * the packages its operator loaded (`--kernels`); a deploy needing one it lacks is refused.
   */
  | { type: 'welcome'; version: number; host: string; pes: PeReport[]; agentVersion?: string; kernels?: KernelManifest[]; machine?: MachineIdentity }
  | { type: 'pong'; id: number; t: number; agent: number }
  /**
   * What the agent's deploy is doing now, sent when it changes and repeated every
   * `progressMs` while a step runs (a heartbeat), only when the deploy asked for it.
   */
  | { type: 'deploy-progress'; runId: string; steps: DeployStepReport[] }
  | { type: 'deployed'; runId: string; adapters: Record<string, string>; allocated: Record<string, number>; memory?: ProcessMemory }
  | { type: 'started'; runId: string }
  | { type: 'trace'; runId: string; events: TraceEvent[]; cycle: number; dropped: number }
  | {
      type: 'done';
      runId: string;
      cycles: number;
      /** Microseconds spent in cluster-wide barriers per cycle, averaged. */
      barrierPerCycle: number;
      reports: { node: string; iteration: number; values: Record<string, number | number[] | string> }[];
      /** What this host's sinks (io.write nodes) wrote, one entry per node. */
      writes?: SinkWrite[];
      /** The agent process's memory when the run ended (leak checks). */
      memory?: ProcessMemory;
    }
  /** `writes`: what this host's sinks had written when the run failed (their files stay whole). */
  | { type: 'failed'; runId: string; failure: FailureReport; writes?: SinkWrite[] }
  /** Task-bag: a task's outputs are held (under their keys); `ms`: how its time went on the agent; `values`: a checker kernel's report. */
  | {
      type: 'task-done';
      runId: string;
      id: string;
      attempt: number;
      pe: string;
      ms: { pull: number; run: number };
      values?: Record<string, number | number[] | string>;
    }
  /**
   * Task-bag: a task could not run. `lost`: a host an input could not be pulled from (its outputs
   * are gone; the coordinator recomputes them); otherwise the kernel or device failed.
   * `peLost`: the PE can run nothing more (its device lost, its thread gone): it leaves the pool.
   */
  | { type: 'task-failed'; runId: string; id: string; attempt: number; pe: string; message: string; lost?: string; peLost?: boolean }
  | { type: 'stopped'; runId: string; freed: boolean }
  | { type: 'error'; message: string };

// Agent <-> agent (peer links)
export type PeerMessage =
  /** Dialler -> dialled, first: who is calling for which run, and a fresh nonce for the dialled to prove itself on. */
  | { type: 'peer-hello'; version: number; host: string; runId: string; nonce: string }
  /** Dialled -> dialler: its name, its own nonce, and its proof (peerProof, role 'dialled'). */
  | { type: 'peer-challenge'; host: string; nonce: string; proof: string }
  /** Dialler -> dialled: the dialler's proof (role 'dialler'), sent only once the dialled proved itself. */
  | { type: 'peer-auth'; proof: string }
  | { type: 'peer-ready'; host: string }
  /** A host's token in round `round` of cluster barrier `seq` (a dissemination barrier: agent runtime/barrier.ts). */
  | { type: 'barrier'; seq: number; round: number }
  /** Self-timed: the sender's host learns that counter `counter` (a receiving half's, on the host sending this) reached `value`. */
  | { type: 'credit'; counter: number; value: number }
  | { type: 'abort'; message: string }
  /** Task-bag: asks the dialled agent for output `key`; answered by its bytes (binary frames, peer/frames.ts) or `pull-miss`. */
  | { type: 'pull'; id: number; key: string }
  | { type: 'pull-miss'; id: number; key: string };

export type AnyMessage = ToAgent | FromAgent | PeerMessage;

const REQUIRED: Record<string, string[]> = {
  auth: ['version', 'token'],
  ping: ['id', 't'],
  deploy: ['runId', 'secret', 'programs', 'hosts', 'iterations', 'cycles', 'pes', 'buffers'],
  start: ['runId'],
  stop: ['runId'],
  'bag-deploy': ['runId', 'secret', 'hosts', 'nodes'],
  task: ['runId', 'id', 'node', 'iteration', 'attempt', 'pe', 'inputs', 'outputs'],
  free: ['runId', 'keys'],
  'task-done': ['runId', 'id', 'attempt', 'pe', 'ms'],
  'task-failed': ['runId', 'id', 'attempt', 'pe', 'message'],
  pull: ['id', 'key'],
  'pull-miss': ['id', 'key'],
  welcome: ['version', 'host', 'pes'],
  pong: ['id', 't', 'agent'],
  'deploy-progress': ['runId', 'steps'],
  deployed: ['runId'],
  started: ['runId'],
  trace: ['runId', 'events', 'cycle'],
  done: ['runId', 'cycles'],
  failed: ['runId', 'failure'],
  stopped: ['runId'],
  error: ['message'],
  'peer-hello': ['version', 'host', 'runId', 'nonce'],
  'peer-challenge': ['host', 'nonce', 'proof'],
  'peer-auth': ['proof'],
  'peer-ready': ['host'],
  barrier: ['seq', 'round'],
  credit: ['counter', 'value'],
  abort: ['message'],
};

/**
 * A sender's value inside a reason: quoted, cut to a few dozen characters (close reasons hold
 * 123 bytes, and a reason must not carry what the sender chose to put in it).
 */
function shown(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}...` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  return Array.isArray(v) ? 'a list' : 'an object';
}

/**
 * Parses and checks one text frame. Returns the message or a reason naming what is wrong,
 * short and bounded whatever the sender wrote; never throws. Checks the type and its
 * required fields (deep shapes of deploy are checked by the agent when it builds the run,
 * with messages naming the PE or buffer).
 */
export function parseMessage<T extends AnyMessage = AnyMessage>(
  text: string,
  allowed?: readonly T['type'][],
): { ok: true; message: T } | { ok: false; reason: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'malformed message: not JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'malformed message: not an object' };
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== 'string' || !(type in REQUIRED)) return { ok: false, reason: `malformed message: unknown type ${shown(type)}` };
  if (allowed && !(allowed as readonly string[]).includes(type)) return { ok: false, reason: `unexpected message "${type}" here` };
  for (const field of REQUIRED[type]) {
    if (!(field in raw)) return { ok: false, reason: `malformed message: "${type}" lacks "${field}"` };
  }
  if (type === 'ping') {
    // Echoed in the pong: only values of the protocol's types and sizes go back.
    const { id, t } = raw as { id: unknown; t: unknown };
    if (!Number.isSafeInteger(id)) return { ok: false, reason: `malformed message: "ping" id must be a safe integer, not ${shown(id)}` };
    if (typeof t !== 'number' || !Number.isFinite(t)) return { ok: false, reason: `malformed message: "ping" t must be a finite number, not ${shown(t)}` };
  }
  if ('version' in raw && (raw as { version: unknown }).version !== PROTOCOL_VERSION) {
    return { ok: false, reason: `protocol version ${shown((raw as { version: unknown }).version)} is not supported (this side speaks ${PROTOCOL_VERSION})` };
  }
  if ((type === 'done' || type === 'failed') && 'writes' in raw) {
    const why = writesProblem((raw as { writes: unknown }).writes);
    if (why) return { ok: false, reason: `malformed message: "${type}" ${why}` };
  }
  if (type === 'deploy-progress') {
    const why = progressProblem(raw as Record<string, unknown>);
    if (why) return { ok: false, reason: `malformed message: "deploy-progress" ${why}` };
  }
  return { ok: true, message: raw as T };
}

/** What is wrong with a `deploy-progress`'s fields, if anything: a short runId, at most MAX_DEPLOY_STEPS known steps, short PE ids. */
function progressProblem(m: Record<string, unknown>): string | undefined {
  if (typeof m.runId !== 'string' || m.runId.length > MAX_STEP_PE) return 'runId must be a string of at most 256 characters';
  const steps = m.steps;
  if (!Array.isArray(steps) || steps.length > MAX_DEPLOY_STEPS) return `steps must be a list of at most ${MAX_DEPLOY_STEPS}`;
  for (const [i, s] of steps.entries()) {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) return `steps[${i}] must be an object`;
    const { step, pe } = s as { step?: unknown; pe?: unknown };
    if (!(DEPLOY_STEPS as readonly unknown[]).includes(step)) return `steps[${i}].step must be one of ${DEPLOY_STEPS.join(', ')}, not ${shown(step)}`;
    if (pe !== undefined && (typeof pe !== 'string' || !pe.length || pe.length > MAX_STEP_PE)) return `steps[${i}].pe must be a PE id of 1 to 256 characters`;
  }
  return undefined;
}

/**
 * Data on a peer link: two binary frames per transfer, a header (u32 iteration, u16 key
 * length, the key: `<from>-><to>` buffer ids, the same on both hosts) then the payload bytes.
 */
export function transferKey(from: string, to: string): string {
  return `${from}->${to}`;
}
