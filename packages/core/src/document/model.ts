import type { DataType, KernelSpec, Params } from '@pipeloom/kernels';
import type { HostId, NodeId, PeId } from '../ids.js';
import type { Link, ProjectDocument } from './types.js';

// A validated document with everything the passes look up resolved once: kernels, params
// with defaults, PE of each node, each edge's data type and byte size, link adjacency.

export interface ModelNode {
  id: NodeId;
  /** Position in app.nodes (document order breaks ties). */
  index: number;
  kernel: KernelSpec;
  params: Params;
  pe: PeId;
  /** Index of `pe` in Model.pes (-1 while unmapped). */
  peIndex: number;
  /** The edge feeding each input port, by position in kernel.inputs (each input fed exactly once). */
  inputs: ModelEdge[];
  /** Outgoing edges in document order (an array of exactly that length). */
  outputs: ModelEdge[];
}

/**
 * One edge, its ends as the model's nodes and port names (the kernel specs' own strings): one
 * object per edge, no Map lookups to follow it.
 */
export interface ModelEdge {
  /** Position in app.edges (a valid model holds every edge, so also its position in Model.edges). */
  index: number;
  from: ModelNode;
  /** The name of the output port of `from`. */
  fromPort: string;
  to: ModelNode;
  /** The name of the input port of `to`. */
  toPort: string;
  type: DataType;
  bytes: number;
}

export interface ModelPe {
  id: PeId;
  index: number;
  /** Where the document defines it (for diagnostics): `arch.pes[i]` or `arch.hosts[i].gpuMemory`. */
  path: string;
  host: HostId;
  kind: 'cpu' | 'gpu';
  memory: number;
  flops?: number;
  memoryBandwidth?: number;
  /** Links touching this PE, in document order, and the PE at the other end of each (two lists, not an object per link end). */
  links: Link[];
  neighbours: PeId[];
}

export interface Model {
  doc: ProjectDocument;
  nodes: ModelNode[];
  node: Map<NodeId, ModelNode>;
  edges: ModelEdge[];
  pes: ModelPe[];
  pe: Map<PeId, ModelPe>;
}
