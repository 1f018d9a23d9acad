import type { DataType, KernelSpec, Params } from '@pipeloom/kernels/specs';
import type { HostId, NodeId, PeId } from '../ids.js';
import type { InitSpec, Link, ProjectDocument, WrittenDocument } from './types.js';
import type { Lowered, ScanMark } from './stage.js';
import type { Clause } from './requires.js';

// A validated document with everything the passes look up resolved once: kernels, params
// with defaults, PE of each node, each edge's data type and byte size, link adjacency.

export interface ModelNode {
  id: NodeId;
  /** Position in app.nodes (document order breaks ties); in a valid model, also in Model.nodes. */
  index: number;
  kernel: KernelSpec;
  params: Params;
  pe: PeId;
  /** Index of `pe` in Model.pes (-1 while unmapped). */
  peIndex: number;
  /** Capability clauses its PE must meet (the node's `requires`, parsed). */
  requires?: Clause[];
  /** A node a scan expanded into (document/scan.ts): its scan and its level in the scan's one firing. */
  scan?: ScanMark;
}

/**
 * The edges as columns indexed by position in app.edges (a valid model holds every edge):
 * ends as node indices, port names (the kernel specs' own strings), the data type and its
 * size. No object per edge: the model lives through the whole compile, and on a 10,000-node
 * graph an object and two lists per edge and node were a third of its memory.
 */
export interface ModelEdges {
  count: number;
  from: Int32Array;
  /** The name of the output port of `from`. */
  fromPort: string[];
  to: Int32Array;
  /** The name of the input port of `to`. */
  toPort: string[];
  /** The producer port's data type (all its tokens). */
  type: DataType[];
  /**
   * Bytes the edge carries: the producer port's size, or, for an edge carrying some of its
   * tokens (lowered multi-rate graphs, `fromTokens`), the size of that part.
   */
  bytes: number[];
  /** Where the part starts in the producer port's data, in bytes (0 for a whole edge). */
  fromOffset: Float64Array;
  /** Where it lands in the consumer port's data, in bytes (0 unless the input is fed in parts, `toTokens`). */
  toOffset: Float64Array;
  /** The producer port's whole size in bytes (`bytes` unless the edge carries a part). */
  outputBytes: number[];
  /** Delays (feedback), in whole iterations: the consumer's iteration k reads the producer's k - delay; 0 for none. */
  delay: Int32Array;
  /** The initial tokens' values of a delayed edge (undefined for none). */
  init: (InitSpec | undefined)[];
}

/** Per node (by index), a list of edge indices: `edge[start[i] .. start[i + 1])`. */
export interface EdgeLists {
  start: Int32Array;
  edge: Int32Array;
}

export interface ModelPe {
  id: PeId;
  index: number;
  /** Where the document defines it (for diagnostics): `arch.pes[i]` or `arch.hosts[i].gpuMemory`. */
  path: string;
  host: HostId;
  kind: 'cpu' | 'gpu';
  memory: number;
  /**
   * A CPU PE's host's memory where the host says it (`cpuMemory` with `cpus: N`, N >= 2): its
   * CPU PEs share it, so the sum of their buffers may be at most `bytes` (compile.ts checks).
   */
  shared?: { bytes: number; path: string };
  flops?: number;
  memoryBandwidth?: number;
  /** Links touching this PE, in document order, and the PE at the other end of each (two lists, not an object per link end). */
  links: Link[];
  neighbours: PeId[];
}

export interface Model {
  /** The lowered document (lower.ts): what the passes read; not a document to analyse again. */
  doc: ProjectDocument;
  /** The document as written (migrated): what a calibration's and a trace's hash name. */
  written: WrittenDocument;
  nodes: ModelNode[];
  node: Map<NodeId, ModelNode>;
  edges: ModelEdges;
  /**
   * The edges feeding each node's inputs, in kernel.inputs order: one per port, or, for a port
   * fed in parts (a multi-rate join, `toTokens`), one per part in token order (they tile the port).
   */
  inputs: EdgeLists;
  /** Each node's outgoing edges in document order. */
  outputs: EdgeLists;
  pes: ModelPe[];
  pe: Map<PeId, ModelPe>;
  /** What lowering found: paths as written, repetitions, evaluated params (document/lower.ts). */
  lowered: Lowered;
  /** Checkers' expectation params derived from the graph upstream, by node id (document/expectations.ts). */
  derived?: Map<string, Params>;
}
