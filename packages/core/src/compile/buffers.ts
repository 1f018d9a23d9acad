import { dataTypeBytes, type DataType } from '@pipeloom/kernels';
import { bufferId, type BufferId, type NodeId } from '../ids.js';
import type { Model, ModelEdge } from '../document/model.js';
import type { Link } from '../document/types.js';
import type { Router } from './route.js';
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
 * The buffers are built as columns (types.ts `Buffers`) in growable plain arrays of small
 * integers, then copied once into typed arrays.
 */
export function insertBuffers(model: Model, order: NodeId[], router: Router): Insertion {
  const links: (Link | undefined)[] = [];
  const parent: number[] = [];
  const peOf: number[] = [];
  const source: number[] = [];
  const port: string[] = [];
  const type: number[] = [];
  const bytes: number[] = [];
  // One index per distinct data type (analyze() made one object per distinct type).
  const types: DataType[] = [];
  const typeIndex = new Map<DataType, number>();
  const read = new Int32Array(model.doc.app.edges.length).fill(-1);
  // The consumers, as (buffer, edge) pairs in the order they are found: sorted by buffer below.
  const consumerBuffer: number[] = [];
  const consumerEdge: number[] = [];
  const add = (pe: number, s: number, name: string, from: number, t: number, size: number, link?: Link) => {
    const number = parent.length;
    links.push(link);
    parent.push(from);
    peOf.push(pe);
    source.push(s);
    port.push(name);
    type.push(t);
    bytes.push(size);
    return number;
  };
  const typeOf = (t: DataType) => {
    let k = typeIndex.get(t);
    if (k === undefined) {
      typeIndex.set(t, (k = types.length));
      types.push(t);
    }
    return k;
  };

  // Producers' buffers; each node's outputs are consecutive, in port order.
  const output = new Int32Array(model.doc.app.nodes.length).fill(-1);
  const position = new Int32Array(model.doc.app.nodes.length);
  for (let s = 0; s < order.length; s++) {
    const n = model.node.get(order[s])!;
    position[n.index] = s;
    const pe = model.pe.get(n.pe)!.index;
    output[n.index] = parent.length;
    for (const p of n.kernel.outputs) {
      // analyze() resolved the type of every connected output on its edges: reuse it.
      const edge = firstEdge(n.outputs, p.name);
      if (edge) add(pe, s, p.name, -1, typeOf(edge.type), edge.bytes);
      else {
        const t = p.type(n.params);
        add(pe, s, p.name, -1, typeOf(t), dataTypeBytes(t));
      }
    }
  }

  // The buffers of the output being routed, by PE index: held[pe] is valid where stamp[pe] is
  // that output's serial number, so nothing is cleared between outputs.
  const stamp = new Int32Array(model.pes.length).fill(-1);
  const held = new Int32Array(model.pes.length);
  let serial = 0;
  for (let s = 0; s < order.length; s++) {
    const n = model.node.get(order[s])!;
    const home = model.pe.get(n.pe)!.index;
    const ports = n.kernel.outputs;
    for (let j = 0; j < ports.length; j++) {
      const p = ports[j];
      const root = output[n.index] + j;
      serial++;
      stamp[home] = serial;
      held[home] = root;
      for (const edge of n.outputs) {
        if (edge.from.port !== p.name) continue;
        const to = model.node.get(edge.to.node)!;
        let prev = root;
        if (to.pe !== n.pe) {
          const route = router.route(n.pe, to.pe, edge.bytes);
          for (let i = 1; i < route.at.length; i++) {
            const pe = route.at[i];
            if (stamp[pe] !== serial) {
              stamp[pe] = serial;
              held[pe] = add(pe, s, p.name, prev, type[root], bytes[root], route.links[i - 1]);
            }
            prev = held[pe];
          }
        }
        consumerBuffer.push(prev);
        consumerEdge.push(edge.index);
        read[edge.index] = prev;
      }
    }
  }

  const count = parent.length;
  const parents = Int32Array.from(parent);
  const pes = Int32Array.from(peOf);
  const children = childLists(parents);
  // Consumers grouped by buffer, each buffer's in the order found (a stable counting sort).
  const start = new Int32Array(count + 1);
  for (let i = 0; i < consumerBuffer.length; i++) start[consumerBuffer[i] + 1]++;
  for (let k = 0; k < count; k++) start[k + 1] += start[k];
  const fill = start.slice(0, count);
  const node = new Int32Array(consumerBuffer.length);
  const inPort: string[] = new Array(consumerBuffer.length);
  const edges = model.doc.app.edges.length ? modelEdges(model) : [];
  for (let i = 0; i < consumerBuffer.length; i++) {
    const at = fill[consumerBuffer[i]]++;
    const edge = edges[consumerEdge[i]];
    node[at] = position[model.node.get(edge.to.node)!.index];
    inPort[at] = edge.to.port;
  }
  const buffers: Buffers = {
    count,
    id: bufferNames(count),
    pe: pes,
    source: Int32Array.from(source),
    port,
    parent: parents,
    type: Int32Array.from(type),
    types,
    bytes: Float64Array.from(bytes),
    depth: new Int32Array(count).fill(1),
    color: new Int32Array(count).fill(-1),
    next: children,
    consumers: { start, node, port: inPort },
  };
  return { buffers, links, table: { parent: parents, pe: pes, read, output, children } };
}

/** The model's edges by index (ModelEdge.index). */
function modelEdges(model: Model): ModelEdge[] {
  const out: ModelEdge[] = new Array(model.doc.app.edges.length);
  for (const n of model.nodes) for (const e of n.outputs) out[e.index] = e;
  return out;
}

// `bn_k` for each k, made once per process: a designer recompiling on every edit, or a 35,000-
// buffer graph compiled again, reuses the strings instead of building them anew (strings are
// immutable, so sharing them between implementation graphs is safe).
const names: BufferId[] = [];
function bufferNames(count: number): BufferId[] {
  for (let k = names.length; k < count; k++) names.push(bufferId(`bn_${k}`));
  return names.slice(0, count);
}

/** The first edge leaving `port`, if any. */
function firstEdge(outputs: ModelEdge[], port: string): ModelEdge | undefined {
  for (const e of outputs) if (e.from.port === port) return e;
  return undefined;
}
