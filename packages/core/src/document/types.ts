import type { ParamValue, Params } from '@pipeloom/kernels/specs';

// The project document, format `pipeloom/v2`: what a user draws. JSON, published schema in
// ./schema.json. Plain strings here (it is parsed JSON); the compiler brands ids once validated.
//
// A document as written may use parameters (expressions), composite nodes (hierarchy), port
// rates (synchronous dataflow) and delays (feedback). `lowerDocument` (lower.ts) turns it into
// the lowered form the compiler reads: every value a number, no composite, single rate (each
// firing of a multi-rate node is a node of its own, `slice#3`), delays counted in iterations.
// The lowered form is a ProjectDocument too; the fields marked "lowered form" appear only there.

export const FORMAT = 'pipeloom/v2';

/** A number, or an expression over the document's params (`"2 * N"`, `"W / 8"`; document/expr.ts). */
export type Expr = number | string;

/** A parameter: a value (or expression), optionally bounded; the bounds are checked after evaluation. */
export interface ParamDef {
  value: Expr;
  min?: number;
  max?: number;
  /** The value must be a whole number (rates, sizes). */
  integer?: boolean;
  description?: string;
}

/** Parameter name -> value, expression or full definition. Names are identifiers ([A-Za-z_][A-Za-z0-9_]*). */
export type DocumentParams = Record<string, Expr | ParamDef>;

/** Initial tokens' values on a delayed edge: a constant (every element), or a source node run once per initial token. */
export type EdgeInit = number | { node: string };

/** What the lowered form keeps of `EdgeInit`: the constant, or the kernel (with its params) run once per initial token. */
export type InitSpec = { value: number } | { node: string; kernel: string; params: Params };

/** Part of a port's tokens, in the lowered form: tokens first .. first + count - 1 of the `of` tokens a firing's port holds. */
export interface TokenRange {
  first: number;
  count: number;
  of: number;
}

/** A reusable sub-graph: ports bound to inner ports, its own params (defaults an instance may override). */
export interface CompositeDef {
  description?: string;
  /** The composite's params: defaults, overridden by an instance node's `params`; inner expressions see these, then the document's. */
  params?: DocumentParams;
  /** Each input feeds one or more inner inputs (types equal). */
  inputs?: { name: string; to: PortRef[] }[];
  /** Each output is one inner output. */
  outputs?: { name: string; from: PortRef }[];
  nodes: AppNode[];
  edges: AppEdge[];
}

export interface PortRef {
  node: string;
  port: string;
}

/**
 * A node: a kernel node (`kernel`), or a composite node, an instance of `defs[composite]` or
 * with its inner graph inline (`graph`). Exactly one of kernel, composite and graph.
 */
export interface AppNode {
  id: string;
  kernel?: string;
  /**
   * A macro node lowering expands (document/scan.ts): `scan`, a prefix scan whose params name the
   * operator kernel, the network, output, strategy and execution, plus the operator's own params;
   * mapped to an ordered list of PEs, its workers.
   */
  type?: 'scan';
  /** A composite from the document's `defs`. */
  composite?: string;
  /** A composite defined in place. */
  graph?: CompositeDef;
  /**
   * Kernel params (a numeric param may be an expression string), or, on a composite node,
   * values for the composite's params (numbers or expressions).
   */
  params?: Record<string, ParamValue>;
  /** Tokens per firing of each port (default 1, or the kernel port's own rate); a port's data splits into that many equal tokens along its first dimension. */
  rates?: Record<string, Expr>;
  /** Capability clauses the PE firing this kernel node must meet, KEY OP VALUE (`kind=gpu`, `software=false`, `limit.maxStorageBufferBindingSize>=268435456`); run/requires.ts. */
  requires?: string[];
  /** Canvas position in the editor; ignored by the compiler. */
  position?: { x: number; y: number };
  /** Editor state of a composite node: drawn collapsed (one box) or expanded in place. Ignored by the compiler. */
  collapsed?: boolean;
  /** Lowered form: this node is firing `index` of the `of` firings of document node `node` per iteration. */
  firing?: { node: string; index: number; of: number };
  /**
   * Kernel nodes whose kernel declares a split: run each firing as this many shares (tasks),
   * share j taking the interleaved part j, j + K, ... of the work, then a combine summing them
   * in share order (document/tasks.ts). A number or an expression over the document params.
   */
  tasks?: Expr;
  /** Lowered form: this node is share `index` of the `of` shares of document node `node` (`X[3]`). */
  share?: { node: string; index: number; of: number };
  /** Lowered form: this node (`generic.sum`, keeping the id `node`) sums the `of` shares of document node `node`. */
  combine?: { node: string; of: number };
}

export interface AppEdge {
  from: PortRef;
  to: PortRef;
  /**
   * Initial tokens on the edge (as written: tokens of the edge, an expression allowed; lowered
   * form: whole iterations, the consumer's iteration k reads the producer's k - delay). A cycle
   * is legal only through an edge with a delay.
   */
  delay?: Expr;
  /** Values of the initial tokens; required with a delay. */
  init?: EdgeInit | InitSpec;
  /** Lowered form: the producer's tokens this edge carries (absent: all of them). */
  fromTokens?: TokenRange;
  /** Lowered form: where they land among the consumer's input tokens (absent: all of them). An input fed in parts has one edge per part. */
  toTokens?: TokenRange;
}

export interface ApplicationGraph {
  nodes: AppNode[];
  edges: AppEdge[];
}

export type PeKind = 'cpu' | 'gpu';
// `memory`: two CPU PEs of one host, through the host's shared memory.
export type LinkKind = 'pcie' | 'infiniband' | 'ethernet' | 'nvlink' | 'loopback' | 'memory';

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
  // Shorthand, expanded by normalize(): PEs `cpu@<host>` (cpus: 1, the default; 0 for none) or
  // `cpu0@<host>` .. `cpu{N-1}@<host>` (cpus: N >= 2, every two linked by `memory`), and
  // `gpu0@<host>`..., each GPU linked to the (first) CPU by `pcie`. Absent from the canonical form.
  cpus?: number;
  gpus?: number;
  /**
   * Bytes; defaults in normalize.ts. `cpuMemory` is the host's memory, which its CPU PEs share:
   * with several, the sum of their buffers may be at most this (kept in the canonical form).
   */
  cpuMemory?: number;
  gpuMemory?: number;
  pcie?: LinkSpec;
  /** The `memory` links between the host's CPU PEs (`cpus: N`, N >= 2). */
  memory?: LinkSpec;
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

/** A document as written: a node with `tasks` may be mapped onto a list of PEs. */
export type WrittenDocument = ProjectDocument<MappingTarget>;

export type SyncMode = 'self-timed' | 'barrier';

export const SYNC_MODES: readonly SyncMode[] = ['self-timed', 'barrier'];

/**
 * How a run places firings: 'static' (default) runs the compiled PACCO programs on
 * the mapping; 'taskbag' hands each task (one firing of one node for one iteration) to an idle,
 * else the least-loaded, capable PE at run time (run/taskbag/, run/policy.ts). One document,
 * one set of agents and traces, so the two can be compared.
 */
export type ExecutionMode = 'static' | 'taskbag';

export const EXECUTION_MODES: readonly ExecutionMode[] = ['static', 'taskbag'];

/** The document's `options`: how its application is compiled and run (the coordinator's per-run options are `RunOptions`, run/coordinator.ts). */
export interface DocumentOptions {
  /** Computation-communication overlap (double buffers, paper section 4.3). */
  overlap: boolean;
  iterations: number;
  /**
   * How agents synchronise (docs/contract.md): 'self-timed' (default) runs each firing and
   * transfer as soon as its input slots hold its iteration and its output slots are free;
   * 'barrier' ends every phase with a cluster-wide barrier (the paper's reference). Results
   * are identical; the compiled programs are the same.
   */
  sync?: SyncMode;
  /** 'static' (default): the compiled programs on the mapping; 'taskbag': tasks placed at run time on capable PEs (the mapping is not used). */
  mode?: ExecutionMode;
  /** Task-bag: at most this many iterations in flight (default 2). */
  window?: number;
  /** Task-bag: most tasks a PE holds given and not done (default 2: its next inputs arrive while one runs); 'unbounded' is the Boss/Worker paper's literal reading. */
  prefetch?: number | 'unbounded';
}

/** Where a node runs: a PE id, or, for a node with `tasks`, a list of PE ids its shares take in turn (for a scan node: its workers, in order). */
export type MappingTarget = string | string[];

/**
 * A project document. `ProjectDocument` (the default) maps each node onto one PE: the lowered
 * form, and what the designer edits today; `WrittenDocument` is a document as written, whose
 * mapping may send a node with `tasks` onto a list of PEs (lowering expands it: tasks.ts).
 */
export interface ProjectDocument<Target extends MappingTarget = string> {
  format: typeof FORMAT;
  name: string;
  description?: string;
  /** Document parameters, usable in node params, rates and delays (`--param N=4` overrides a value). */
  params?: DocumentParams;
  /** Reusable composites, by name; composite nodes instantiate them (`"composite": "seg"`). */
  defs?: Record<string, CompositeDef>;
  app: ApplicationGraph;
  arch: ArchitectureGraph;
  /** DFG node id -> PE id (a written document: or a list of PE ids for a node with `tasks`). */
  mapping: Record<string, Target>;
  options: DocumentOptions;
  /**
   * Kernel id -> the version the document was made with (the designer writes it on save). A
   * registry with another major version of one of them warns; absent ids are not checked.
   */
  kernels?: Record<string, string>;
}
