import type { PeId } from '../ids.js';
import type { Model, ModelPe } from '../document/model.js';
import type { Link } from '../document/types.js';

export class Route {
  constructor(
    /** PEs from source to target, both included, as indices into model.pes. */
    readonly at: number[],
    /** links[i] joins at[i] and at[i + 1]. */
    readonly links: Link[],
    /** Seconds to move one datum along the whole route. */
    readonly time: number,
    private readonly all: ModelPe[],
  ) {}

  /** The PEs' ids, source to target (made on demand: the passes use `at`). */
  get pes(): PeId[] {
    return this.at.map((i) => this.all[i].id);
  }
}

/** Seconds to move `bytes` over one link. */
export const linkTime = (link: Link, bytes: number) => link.latency + bytes / link.bandwidth;

// Relative tolerance for equal times: sums of the same costs in another order differ by ulps.
const EPS = 1e-9;

interface Search {
  time: Float64Array;
  hops: Int32Array;
  prev: Int32Array;
  /** Index of the adjacency entry used to reach each PE (-1 for none). */
  prevLink: Int32Array;
  settled: Uint8Array;
  heap: Heap;
  /** Seconds over each adjacency entry for this search's size. */
  cost: Float64Array;
}

/** The router's state for one data size. */
interface Size {
  /** Seconds over each adjacency entry. */
  cost: Float64Array;
  /** For a PE with a sole neighbour: the adjacency entry (of that neighbour) a route enters it by; -1 until needed. */
  into: Int32Array;
  /** The search from each source PE (by index). */
  searches: (Search | undefined)[];
}

/**
 * The fastest architecture path for a datum of a given size: time = sum over links of
 * latency + bytes / bandwidth; ties by hop count, then by the sequence of PE ids. Dijkstra
 * with a binary heap, resumable: one search per (source PE, size) is kept and advanced only
 * as far as the targets asked for, so routing all edges costs about one search per source.
 *
 * A PE linked to a single other PE (a GPU on its PCIe link) is entered and left through it:
 * a route from it is the hop plus the route from that neighbour, and a route to it is the
 * route to that neighbour plus the hop. Every candidate path shares the hop, so the choice,
 * ties included, is the one the full search makes; it saves a search per such source and
 * keeps each search to the PEs that relay (on a cluster, its CPUs).
 *
 * `path()` is what the compiler calls once or twice per edge: it writes the route into the
 * router's `at`/`via` arrays and returns its length, so routing makes no objects. `route()`
 * gives the same route as an object, for tests and tools.
 */
export class Router {
  private readonly index = new Map<PeId, number>();
  /** What the router knows per data size. */
  private readonly sizes = new Map<number, Size>();
  // Adjacency as flat arrays (CSR): neighbours of PE i are nbr[off[i] .. off[i + 1]).
  private readonly off: Int32Array;
  private readonly nbr: Int32Array;
  private readonly latency: Float64Array;
  private readonly bandwidth: Float64Array;
  private readonly links: Link[];
  /** The only PE linked to each PE (possibly by several links), or -1. */
  private readonly sole: Int32Array;
  /** The last path: its PEs (indices into model.pes), source first. Overwritten by the next call. */
  readonly at: Int32Array;
  /** The last path's adjacency entries: via[i] joins at[i] and at[i + 1] (see `link`). */
  readonly via: Int32Array;
  constructor(private readonly model: Model) {
    model.pes.forEach((p, i) => this.index.set(p.id, i));
    const n = model.pes.length;
    this.off = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) this.off[i + 1] = this.off[i] + model.pes[i].links.length;
    const m = this.off[n];
    this.nbr = new Int32Array(m);
    this.latency = new Float64Array(m);
    this.bandwidth = new Float64Array(m);
    this.links = new Array(m);
    for (let i = 0; i < n; i++) {
      const pe = model.pes[i];
      for (let j = 0; j < pe.links.length; j++) {
        const k = this.off[i] + j;
        this.nbr[k] = this.index.get(pe.neighbours[j])!;
        this.latency[k] = pe.links[j].latency;
        this.bandwidth[k] = pe.links[j].bandwidth;
        this.links[k] = pe.links[j];
      }
    }
    this.sole = new Int32Array(n);
    for (let i = 0; i < n; i++) this.sole[i] = this.soleNeighbour(i);
    this.at = new Int32Array(n);
    this.via = new Int32Array(n);
  }

  /** The link of adjacency entry k (the entries `via` holds). */
  link(k: number): Link {
    return this.links[k];
  }

  /** The route from PE `from` to PE `to` as an object. */
  route(from: PeId, to: PeId, bytes: number): Route {
    const length = this.path(this.index.get(from)!, this.index.get(to)!, bytes);
    const { cost } = this.size(bytes);
    const links: Link[] = [];
    let time = 0;
    for (let i = 0; i + 1 < length; i++) {
      links.push(this.links[this.via[i]]);
      time += cost[this.via[i]];
    }
    return new Route(Array.from(this.at.subarray(0, length)), links, time, this.model.pes);
  }

  /**
   * The route between two PEs (indices into model.pes) for a datum of `bytes`: written into
   * `at` (its PEs) and `via` (its adjacency entries); returns the number of PEs on it.
   */
  path(source: number, target: number, bytes: number): number {
    const { at, via, sole } = this;
    at[0] = source;
    if (source === target) return 1;
    const size = this.size(bytes);
    const { cost } = size;
    let length = 1;
    let from = source;
    if (sole[source] >= 0) {
      from = sole[source];
      via[0] = this.fastestEdge(source, from, cost);
      at[length++] = from;
      if (from === target) return length;
    }
    const last = sole[target];
    if (last === from) {
      via[length - 1] = this.fastestEdge(from, target, cost);
      at[length++] = target;
      return length;
    }
    const to = last >= 0 ? last : target;
    const s = (size.searches[from] ??= this.start(from, cost));
    this.advance(s, to);
    if (!s.settled[to]) throw new Error(`route: no path from ${this.model.pes[source].id} to ${this.model.pes[target].id} (validate() reports this)`);
    // The search's chain runs from `to` back to `from`: count it, then fill it in place.
    let hops = 0;
    for (let v = to; s.prev[v] >= 0; v = s.prev[v]) hops++;
    length += hops;
    for (let v = to, i = length - 1; s.prev[v] >= 0; v = s.prev[v], i--) {
      at[i] = v;
      via[i - 1] = s.prevLink[v];
    }
    if (last >= 0) {
      // The hop into the target, found once per target: scanning the adjacency of a relay
      // (a CPU with a link to every other host) for each path cost most of the routing.
      if (size.into[target] < 0) size.into[target] = this.fastestEdge(last, target, cost);
      via[length - 1] = size.into[target];
      at[length++] = target;
    }
    return length;
  }

  /** The router's state for a datum of `bytes`, made on first use. */
  private size(bytes: number): Size {
    let size = this.sizes.get(bytes);
    if (!size) {
      const { latency, bandwidth } = this;
      const cost = new Float64Array(latency.length);
      for (let k = 0; k < cost.length; k++) cost[k] = latency[k] + bytes / bandwidth[k];
      size = { cost, into: new Int32Array(this.sole.length).fill(-1), searches: [] };
      this.sizes.set(bytes, size);
    }
    return size;
  }

  /** The only PE linked to PE i (possibly by several links), or -1. */
  private soleNeighbour(i: number): number {
    const { off, nbr } = this;
    if (off[i + 1] === off[i]) return -1;
    const v = nbr[off[i]];
    for (let k = off[i] + 1; k < off[i + 1]; k++) if (nbr[k] !== v) return -1;
    return v;
  }

  /** The cheapest adjacency entry from PE i to PE j (first on ties, as the search relaxes them). */
  private fastestEdge(i: number, j: number, cost: Float64Array): number {
    let best = -1;
    for (let k = this.off[i]; k < this.off[i + 1]; k++) {
      if (this.nbr[k] !== j) continue;
      if (best < 0 || cost[k] < cost[best]) best = k;
    }
    return best;
  }

  private start(source: number, cost: Float64Array): Search {
    const n = this.model.pes.length;
    const s: Search = {
      time: new Float64Array(n).fill(Infinity),
      hops: new Int32Array(n),
      prev: new Int32Array(n).fill(-1),
      prevLink: new Int32Array(n).fill(-1),
      settled: new Uint8Array(n),
      heap: new Heap(n),
      cost,
    };
    s.time[source] = 0;
    s.heap.push(source, 0, 0);
    return s;
  }

  private advance(s: Search, target: number) {
    const { off, nbr } = this;
    const { time, hops, prev, prevLink, settled, heap, cost: costs } = s;
    while (!settled[target] && heap.size > 0) {
      const u = heap.pop();
      if (settled[u]) continue;
      settled[u] = 1;
      const tu = time[u];
      const h = hops[u] + 1;
      for (let k = off[u], end = off[u + 1]; k < end; k++) {
        const v = nbr[k];
        if (settled[v]) continue;
        const cost = costs[k];
        const t = tu + cost;
        const old = time[v];
        let better: boolean;
        if (old === Infinity || t < old * (1 - EPS)) better = true;
        else if (t > old * (1 + EPS)) better = false;
        else if (h !== hops[v]) better = h < hops[v];
        else if (prev[v] === u) better = cost < costs[prevLink[v]];
        else better = this.lowerSequence(s, u, prev[v]);
        if (better) {
          time[v] = t;
          hops[v] = h;
          prev[v] = u;
          prevLink[v] = k;
          heap.push(v, t, h);
        }
      }
    }
  }

  /** Whether the path ending at a sorts before the path ending at b by PE ids (equal lengths). */
  private lowerSequence(s: Search, a: number, b: number): boolean {
    if (a === b || b < 0) return false;
    const pa: number[] = [];
    const pb: number[] = [];
    for (let v = a; v >= 0; v = s.prev[v]) pa.push(v);
    for (let v = b; v >= 0; v = s.prev[v]) pb.push(v);
    for (let i = pa.length - 1, j = pb.length - 1; i >= 0 && j >= 0; i--, j--) {
      if (pa[i] !== pb[j]) return this.model.pes[pa[i]].id < this.model.pes[pb[j]].id;
    }
    return false;
  }
}

/** Binary min-heap of PE indices keyed by (time, hops), in typed arrays grown by doubling. */
class Heap {
  private items: Int32Array;
  private times: Float64Array;
  private hops: Int32Array;
  size = 0;
  /** `capacity`: the PE count, enough unless an entry is improved while queued. */
  constructor(capacity: number) {
    this.items = new Int32Array(Math.max(16, capacity));
    this.times = new Float64Array(this.items.length);
    this.hops = new Int32Array(this.items.length);
  }
  private less(i: number, j: number) {
    return this.times[i] < this.times[j] || (this.times[i] === this.times[j] && this.hops[i] < this.hops[j]);
  }
  private swap(i: number, j: number) {
    const { items, times, hops } = this;
    const item = items[i];
    items[i] = items[j];
    items[j] = item;
    const time = times[i];
    times[i] = times[j];
    times[j] = time;
    const hop = hops[i];
    hops[i] = hops[j];
    hops[j] = hop;
  }
  push(item: number, time: number, hops: number) {
    if (this.size === this.items.length) {
      const items = new Int32Array(this.size * 2);
      const times = new Float64Array(this.size * 2);
      const hops = new Int32Array(this.size * 2);
      items.set(this.items);
      times.set(this.times);
      hops.set(this.hops);
      this.items = items;
      this.times = times;
      this.hops = hops;
    }
    let i = this.size++;
    this.items[i] = item;
    this.times[i] = time;
    this.hops[i] = hops;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): number {
    const top = this.items[0];
    const last = --this.size;
    this.swap(0, last);
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.less(l, m)) m = l;
      if (r < this.size && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
}
