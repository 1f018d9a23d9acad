import type { NodeId } from '../ids.js';
import type { ProjectDocument, WrittenDocument } from './types.js';

// What lowering (lower.ts) hands from step to step and what it produces: in a module of its own
// so that each step imports it without importing the pipeline that runs the steps.

/** What each lowering step hands the next: the document so far and the paths as written of its nodes and edges. */
export interface Stage<D extends WrittenDocument = ProjectDocument> {
  doc: D;
  nodePaths: string[];
  edgePaths: string[];
}

/** What lowering produces: the lowered document and, for each of its nodes and edges, where it came from. */
export interface Lowered {
  doc: ProjectDocument;
  /** By lowered node index: the path of the node as written (`app.nodes[2]`, `app.nodes[4].graph.nodes[0]`, `defs.seg.nodes[1]`). */
  nodePaths: string[];
  /** By lowered edge index: the path of the edge as written. */
  edgePaths: string[];
  /** Firings per iteration of every node after flattening (1 for single-rate nodes), by flattened id. */
  repetitions: Record<string, number>;
  /** The evaluated document params, by name. */
  params: Record<string, number>;
  /** By lowered node index: the scan an expanded node belongs to and its level (scan.ts); absent without scans. */
  scanMarks?: (ScanMark | undefined)[];
}

/**
 * Where an expanded scan node sits in its scan's one firing: level 0 (the locals) fires in the
 * cycle's ordinary fire phase, level l > 0 in the l-th scan fire phase after it (compile/phases.ts).
 */
export interface ScanMark {
  /** The scan node as written. */
  node: NodeId;
  /** 0 locals, 1 .. D the network's levels, D + 1 the second stage (rounds: relays on levels of their own). */
  level: number;
  /** The scan's levels (its last level + 1). */
  levels: number;
}
