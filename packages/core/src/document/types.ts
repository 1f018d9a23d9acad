import type { Params } from '@pipeloom/kernels/specs';
import type { SyncMode } from '../run/contract.js';

// The project document, format `pipeloom/v1`: what a user draws. JSON, published schema in
// ./schema.json. Plain strings here (it is parsed JSON); the compiler brands ids once validated.

export const FORMAT = 'pipeloom/v1';

export interface PortRef {
  node: string;
  port: string;
}

export interface AppNode {
  id: string;
  kernel: string;
  params?: Params;
  /** Canvas position in the editor; ignored by the compiler. */
  position?: { x: number; y: number };
}

export interface AppEdge {
  from: PortRef;
  to: PortRef;
}

export interface ApplicationGraph {
  nodes: AppNode[];
  edges: AppEdge[];
}

export type PeKind = 'cpu' | 'gpu';
export type LinkKind = 'pcie' | 'infiniband' | 'ethernet' | 'nvlink' | 'loopback';

/** A link's characteristics without its ends, for the shorthands below. */
export interface LinkSpec {
  bandwidth: number;
  latency: number;
  /** Defaults to true. */
  duplex?: boolean;
}

export interface Host {
  id: string;
  /** Where the host's agent listens, e.g. ws://10.0.0.2:7070 (optional; `run` can start local agents). */
  agent?: string;
  position?: { x: number; y: number };
  // Shorthand, expanded by normalize(): PEs `cpu@<host>` (cpus: 0 or 1, default 1) and
  // `gpu0@<host>`..., each GPU linked to the CPU by `pcie`. Absent from the canonical form.
  cpus?: number;
  gpus?: number;
  /** Bytes; defaults in normalize.ts. */
  cpuMemory?: number;
  gpuMemory?: number;
  pcie?: LinkSpec;
}

export interface ProcessingElement {
  /** Conventionally `cpu@h0`, `gpu1@h0`. */
  id: string;
  host: string;
  kind: PeKind;
  /** Memory in bytes available for buffers. */
  memory: number;
  /** For GPUs: which adapter of the host's agent (index in its discovery list). */
  device?: number;
  /** Floating-point operations per second, for the predictor (default per kind). */
  flops?: number;
  /** Bytes per second of memory traffic, for the predictor (default per kind). */
  memoryBandwidth?: number;
  position?: { x: number; y: number };
}

export interface Link {
  a: string;
  b: string;
  kind: LinkKind;
  /** Bytes per second, each direction. */
  bandwidth: number;
  /** Seconds per transfer (fixed cost). */
  latency: number;
  /** Full duplex: both directions at full bandwidth at once. */
  duplex: boolean;
}

export interface ArchitectureGraph {
  hosts: Host[];
  pes: ProcessingElement[];
  links: Link[];
  /** Shorthand, expanded by normalize(): one link of this kind between every two host CPUs. */
  network?: LinkSpec & { kind: LinkKind };
}

/** The document's `options`: how its application is compiled and run (the coordinator's per-run options are `RunOptions`, run/coordinator.ts). */
export interface DocumentOptions {
  /** Computation-communication overlap (double buffers, paper section 4.3). */
  overlap: boolean;
  iterations: number;
  /**
   * How agents synchronise (run/contract.ts): 'self-timed' (default) runs each firing and
   * transfer as soon as its input slots hold its iteration and its output slots are free;
   * 'barrier' ends every phase with a cluster-wide barrier (the paper's reference). Results
   * are identical; the compiled programs are the same.
   */
  sync?: SyncMode;
}

export interface ProjectDocument {
  format: typeof FORMAT;
  name: string;
  description?: string;
  app: ApplicationGraph;
  arch: ArchitectureGraph;
  /** DFG node id -> PE id. */
  mapping: Record<string, string>;
  options: DocumentOptions;
  /**
   * Kernel id -> the version the document was made with (the designer writes it on save). A
   * registry with another major version of one of them warns; absent ids are not checked.
   */
  kernels?: Record<string, string>;
}
