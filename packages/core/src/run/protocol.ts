import type { KernelManifest } from '@pipeloom/kernels/specs';
import type { PeProgram } from '../compile/types.js';
import type { TraceEvent } from '../trace/event.js';
import type { SelfTimedPlan, SyncMode } from './contract.js';
import type { PeCapabilities } from './requires.js';

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
      /** Microseconds between trace batches (default 50 000). */
      traceInterval?: number;
      /** The version of each kernel the programs fire, as the coordinator compiled them; an agent with another major version refuses the deploy. */
      kernels?: Record<string, string>;
      /** How the run synchronises (run/contract.ts); absent: barrier (agents before self-timed execution). */
      sync?: SyncMode;
      /** Self-timed: this host's part of the plan (planForHosts: every counter, this host's PEs' actions). */
      plan?: SelfTimedPlan;
    }
  | { type: 'start'; runId: string }
  | { type: 'stop'; runId: string; reason: string };

// Agent -> coordinator
export type FromAgent =
  /**
   * `agentVersion`: the agent package's version (traces name it); absent from older agents.
   * `kernels`: the manifests (data, no code) of every kernel the agent can run, built-ins and
   * the packages its operator loaded (`--kernels`); a deploy needing one it lacks is refused.
   */
  | { type: 'welcome'; version: number; host: string; pes: PeReport[]; agentVersion?: string; kernels?: KernelManifest[]; machine?: MachineIdentity }
  | { type: 'pong'; id: number; t: number; agent: number }
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
      /** The agent process's memory when the run ended (leak checks). */
      memory?: ProcessMemory;
    }
  | { type: 'failed'; runId: string; failure: FailureReport }
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
  | { type: 'abort'; message: string };

export type AnyMessage = ToAgent | FromAgent | PeerMessage;

const REQUIRED: Record<string, string[]> = {
  auth: ['version', 'token'],
  ping: ['id', 't'],
  deploy: ['runId', 'secret', 'programs', 'hosts', 'iterations', 'cycles', 'pes', 'buffers'],
  start: ['runId'],
  stop: ['runId'],
  welcome: ['version', 'host', 'pes'],
  pong: ['id', 't', 'agent'],
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
  if ('version' in raw && (raw as { version: unknown }).version !== PROTOCOL_VERSION) {
    return { ok: false, reason: `protocol version ${shown((raw as { version: unknown }).version)} is not supported (this side speaks ${PROTOCOL_VERSION})` };
  }
  return { ok: true, message: raw as T };
}

/**
 * Data on a peer link: two binary frames per transfer, a header (u32 iteration, u16 key
 * length, the key: `<from>-><to>` buffer ids, the same on both hosts) then the payload bytes.
 */
export function transferKey(from: string, to: string): string {
  return `${from}->${to}`;
}
