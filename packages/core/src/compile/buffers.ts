import { dataTypeBytes, type DataType } from '@pipeloom/kernels/specs';
import { bufferId, type BufferId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { Router } from './route.js';
import { successorLists } from '../util/csr.js';
import { childLists, type BufferTable } from './table.js';
import type { Buffers } from './types.js';

export interface Insertion {
  buffers: Buffers;
  /** By buffer number: the link a copied buffer's copy crosses (from the route); undefined for a producer's buffer. */
  links: (Link | undefined)[];
  /** The buffers' structure by number, for the later passes (its parent, pe and children are the columns of `buffers`). */
  table: BufferTable;
}

/**
 * Paper 4.2.2, buffer node insertion. First a buffer on the producer's PE for every node
 * output (nodes in schedule order, outputs in port order). Then for each consumer (edges in
 * document order) walk the fastest route and insert a buffer on every PE crossed unless one
 * holding the same source (node + port) is already there: routes from one output share their
 * common prefix, so the buffers of one source form a tree rooted at the producer.
 *
 * The buffers are columns (types.ts `Buffers`) of exactly their final size: the routes are
 * walked twice, once to count the copies and once to fill them (the router keeps its
 * searches, so the second walk only reads their paths back). Growing arrays instead cost a
 * copy of each column per growth, in fresh memory.
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function insertBuffers(model: Model, order: readonly ModelNode[], router: Router): Insertion {
  const nodes = model.doc.app.nodes.length;
  // One index per distinct data type (analyze() made one object per distinct type).
  const types: DataType[] = [];
  const typeIndex = new Map<DataType, number>();
  const typeOf = (t: DataType) => {
    let k = typeIndex.get(t);
    if (k === undefined) {
      typeIndex.set(t, (k = types.length));
      types.push(t);
    }
    return k;
  };

  // Producers' buffers are numbered first; each node's outputs are consecutive, in port order.
  const output = new Int32Array(nodes).fill(-1);
  const position = new Int32Array(nodes);
  let producers = 0;
  for (let s = 0; s < order.length; s++) {
    const n = order[s];
    position[n.index] = s;
    output[n.index] = producers;
    producers += n.kernel.outputs.length;
  }
  const walk = new RouteWalk(model, order, router, output);
  const { copies, reads } = walk.run(producers, null);
  const count = producers + copies;
  const b: Buffers = {
    count,
    id: bufferNames(count),
    pe: new Int32Array(count),
    source: new Int32Array(count),
    port: new Array(count),
    parent: new Int32Array(count),
    type: new Int32Array(count),
    types,
    bytes: new Float64Array(count),
    depth: new Int32Array(count).fill(1),
    color: new Int32Array(count).fill(-1),
    parentOffset: new Float64Array(count),
    view: new Int32Array(count).fill(-1),
    viewOffset: new Float64Array(count),
    initial: new Int32Array(count),
    next: { start: new Int32Array(0), list: new Int32Array(0) },
    consumers: { start: new Int32Array(0), node: new Int32Array(reads), port: new Array(reads) },
  };
  const { edges } = model;
  for (let s = 0, k = 0; s < order.length; s++) {
    const n = order[s];
    const pe = n.peIndex;
    for (const p of n.kernel.outputs) {
      // analyze() resolved the type of every connected output on its edges: reuse it.
      const e = firstEdge(model, n.index, p.name);
      const t = e >= 0 ? edges.type[e] : p.type(n.params);
      b.pe[k] = pe;
      b.source[k] = s;
      b.port[k] = p.name;
      b.parent[k] = -1;
      b.type[k] = typeOf(t);
      b.bytes[k++] = e >= 0 ? edges.outputBytes[e] : dataTypeBytes(t);
    }
  }
  const links: (Link | undefined)[] = new Array(count);
  const read = new Int32Array(model.doc.app.edges.length).fill(-1);
  const readOffset = new Float64Array(read.length);
  // Consumers are found in routing order: (buffer, edge) pairs, grouped by buffer below.
  const readBuffer = new Int32Array(reads);
  const readEdge = new Int32Array(reads);
  walk.run(producers, { b, links, read, readOffset, readBuffer, readEdge });

  b.next = childLists(b.parent);
  // Consumers grouped by buffer, each buffer's in the order found.
  const { start, succ } = successorLists(count, readBuffer, readEdge);
  const { node, port } = b.consumers;
  b.consumers.start = start;
  for (let i = 0; i < reads; i++) {
    node[i] = position[edges.to[succ[i]]];
    port[i] = edges.toPort[succ[i]];
  }
  return { buffers: b, links, table: { parent: b.parent, pe: b.pe, read, readOffset, output, children: b.next } };
}

/** An output nobody reads: one part, the whole (its bytes do not matter: no edge matches). */
const WHOLE = [0, 0];

/** Where the second walk writes what it finds. */
interface Fill {
  b: Buffers;
  links: (Link | undefined)[];
  read: Int32Array;
  readOffset: Float64Array;
  readBuffer: Int32Array;
  readEdge: Int32Array;
}

/**
 * The walk over every edge's route, in schedule order, output by output: a copy is numbered
 * when the route first crosses a PE without a buffer of that output. Run without `fill` it
 * only counts; with it, it writes the copies and the reads.
 */
class RouteWalk {
  // The buffers of the output being routed, by PE index: held[pe] is valid where stamp[pe] is
  // that output's serial number, so nothing is cleared between outputs.
  private readonly stamp: Int32Array;
  private readonly held: Int32Array;
  private readonly partList: number[] = [];
  constructor(
    private readonly model: Model,
    private readonly order: readonly ModelNode[],
    private readonly router: Router,
    private readonly output: Int32Array,
  ) {
    this.stamp = new Int32Array(model.pes.length);
    this.held = new Int32Array(model.pes.length);
  }

  run(first: number, fill: Fill | null): { copies: number; reads: number } {
    const { model, order, router, output, stamp, held } = this;
    const { nodes, edges, outputs } = model;
    stamp.fill(-1);
    let next = first;
    let reads = 0;
    let serial = 0;
    for (let s = 0; s < order.length; s++) {
      const n = order[s];
      const home = n.peIndex;
      const ports = n.kernel.outputs;
      for (let j = 0; j < ports.length; j++) {
        const name = ports[j].name;
        const root = output[n.index] + j;
        // Each part of the output read (a lowered multi-rate split: an edge carrying some of its
        // tokens) has its own tree of copies holding just that part; most outputs have one, the whole.
        const parts = this.parts(n.index, name);
        for (let r = 0; r < parts.length; r += 2) {
          const partOffset = parts[r];
          const partBytes = parts[r + 1];
          serial++;
          stamp[home] = serial;
          held[home] = root;
          for (let o = outputs.start[n.index]; o < outputs.start[n.index + 1]; o++) {
            const e = outputs.edge[o];
            if (edges.fromPort[e] !== name || edges.fromOffset[e] !== partOffset || edges.bytes[e] !== partBytes) continue;
            const to = nodes[edges.to[e]];
            let prev = root;
            if (to.peIndex !== home) {
              const length = router.path(home, to.peIndex, edges.bytes[e]);
              const { at, via } = router;
              for (let i = 1; i < length; i++) {
                const pe = at[i];
                if (stamp[pe] !== serial) {
                  stamp[pe] = serial;
                  const k = next++;
                  if (fill) {
                    const { b } = fill;
                    b.pe[k] = pe;
                    b.source[k] = s;
                    b.port[k] = name;
                    b.parent[k] = prev;
                    b.type[k] = b.type[root];
                    b.bytes[k] = partBytes;
                    b.parentOffset[k] = prev === root ? partOffset : 0;
                    fill.links[k] = router.link(via[i - 1]);
                  }
                  held[pe] = k;
                }
                prev = held[pe];
              }
            }
            if (fill) {
              fill.readBuffer[reads] = prev;
              fill.readEdge[reads] = e;
              fill.read[e] = prev;
              fill.readOffset[e] = prev === root ? partOffset : 0;
            }
            reads++;
          }
        }
      }
    }
    return { copies: next - first, reads };
  }

  /**
   * The distinct parts of output `port` of node `node` its edges read, as (offset, bytes)
   * pairs in first-read order: [0, whole] alone unless some edge carries part of it.
   */
  private parts(node: number, port: string): number[] {
    const { edges, outputs } = this.model;
    // One list reused from output to output: the walk reads it before asking for the next.
    const out = this.partList;
    out.length = 0;
    for (let o = outputs.start[node]; o < outputs.start[node + 1]; o++) {
      const e = outputs.edge[o];
      if (edges.fromPort[e] !== port) continue;
      let seen = false;
      for (let r = 0; r < out.length && !seen; r += 2) seen = out[r] === edges.fromOffset[e] && out[r + 1] === edges.bytes[e];
      if (!seen) out.push(edges.fromOffset[e], edges.bytes[e]);
    }
    return out.length ? out : WHOLE;
  }
}

// `bn_k` for each k, made once per process: a designer recompiling on every edit, or a 35,000-
// buffer graph compiled again, reuses the strings instead of building them anew (strings are
// immutable, so sharing them between implementation graphs is safe).
const names: BufferId[] = [];
function bufferNames(count: number): BufferId[] {
  for (let k = names.length; k < count; k++) names.push(bufferId(`bn_${k}`));
  return names.slice(0, count);
}

/** The first edge leaving output `port` of node `node` (by index), or -1. */
function firstEdge(model: Model, node: number, port: string): number {
  const { outputs, edges } = model;
  for (let o = outputs.start[node]; o < outputs.start[node + 1]; o++) if (edges.fromPort[outputs.edge[o]] === port) return outputs.edge[o];
  return -1;
}
