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
}

/**
 * The fastest architecture path for a datum of a given size: time = sum over links of
 * latency + bytes / bandwidth; ties by hop count, then by the sequence of PE ids. Dijkstra
 * with a binary heap, resumable: one search per (source PE, size) is kept and advanced only
 * as far as the targets asked for, so routing all edges costs about one search per source.
 */
export class Router {
  private readonly index = new Map<PeId, number>();
  /** Per data size: the search from each source PE (by index). */
  private readonly searches = new Map<number, (Search | undefined)[]>();
  /** Per data size: routes by source index x PE count + target index. */
  private readonly routes = new Map<number, Map<number, Route>>();
  // Adjacency as flat arrays (CSR): neighbours of PE i are nbr[off[i] .. off[i + 1]).
  private readonly off: Int32Array;
  private readonly nbr: Int32Array;
  private readonly latency: Float64Array;
  private readonly bandwidth: Float64Array;
  private readonly links: Link[];
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
  }

  route(from: PeId, to: PeId, bytes: number): Route {
    const source = this.index.get(from)!;
    const target = this.index.get(to)!;
    let cache = this.routes.get(bytes);
    if (!cache) this.routes.set(bytes, (cache = new Map()));
    const key = source * this.model.pes.length + target;
    let route = cache.get(key);
    if (!route) cache.set(key, (route = this.search(source, target, bytes)));
    return route;
  }

  private search(source: number, target: number, bytes: number): Route {
    const pes = this.model.pes;
    // A PE linked to a single other PE (a GPU on its PCIe link) leaves through it: route from
    // that neighbour and prepend the hop. Every candidate shares the hop, so the order of
    // candidates, ties included, is the same; it saves one search per such PE.
    const only = this.soleNeighbour(source);
    if (only >= 0 && source !== target) {
      const first = this.fastestEdge(source, only, bytes);
      const hop = this.links[first];
      const cost = this.latency[first] + bytes / this.bandwidth[first];
      if (only === target) return new Route([source, target], [hop], cost, pes);
      const rest = this.route(pes[only].id, pes[target].id, bytes);
      return new Route([source, ...rest.at], [hop, ...rest.links], cost + rest.time, pes);
    }
    let bySource = this.searches.get(bytes);
    if (!bySource) this.searches.set(bytes, (bySource = []));
    const s = (bySource[source] ??= this.start(source));
    this.advance(s, target, bytes);
    if (!s.settled[target]) throw new Error(`route: no path from ${pes[source].id} to ${pes[target].id} (validate() reports this)`);
    const at: number[] = [];
    const links: Link[] = [];
    for (let v = target; v >= 0; v = s.prev[v]) {
      at.push(v);
      if (s.prevLink[v] >= 0) links.push(this.links[s.prevLink[v]]);
    }
    at.reverse();
    return new Route(at, links.reverse(), s.time[target], pes);
  }

  /** The only PE linked to PE i (possibly by several links), or -1. */
  private soleNeighbour(i: number): number {
    const { off, nbr } = this;
    if (off[i + 1] === off[i]) return -1;
    const v = nbr[off[i]];
    for (let k = off[i] + 1; k < off[i + 1]; k++) if (nbr[k] !== v) return -1;
    return v;
  }

  /** The cheapest adjacency entry from PE i to PE j for this size (first on ties). */
  private fastestEdge(i: number, j: number, bytes: number): number {
    let best = -1;
    for (let k = this.off[i]; k < this.off[i + 1]; k++) {
      if (this.nbr[k] !== j) continue;
      if (best < 0 || this.latency[k] + bytes / this.bandwidth[k] < this.latency[best] + bytes / this.bandwidth[best]) best = k;
    }
    return best;
  }

  private start(source: number): Search {
    const n = this.model.pes.length;
    const s: Search = {
      time: new Float64Array(n).fill(Infinity),
      hops: new Int32Array(n),
      prev: new Int32Array(n).fill(-1),
      prevLink: new Int32Array(n).fill(-1),
      settled: new Uint8Array(n),
      heap: new Heap(n),
    };
    s.time[source] = 0;
    s.heap.push(source, 0, 0);
    return s;
  }

  private advance(s: Search, target: number, bytes: number) {
    const { off, nbr, latency, bandwidth } = this;
    const { time, hops, prev, prevLink, settled, heap } = s;
    while (!settled[target] && heap.size > 0) {
      const u = heap.pop();
      if (settled[u]) continue;
      settled[u] = 1;
      const tu = time[u];
      const h = hops[u] + 1;
      for (let k = off[u], end = off[u + 1]; k < end; k++) {
        const v = nbr[k];
        if (settled[v]) continue;
        const cost = latency[k] + bytes / bandwidth[k];
        const t = tu + cost;
        const old = time[v];
        let better: boolean;
        if (old === Infinity || t < old * (1 - EPS)) better = true;
        else if (t > old * (1 + EPS)) better = false;
        else if (h !== hops[v]) better = h < hops[v];
        else if (prev[v] === u) better = cost < latency[prevLink[v]] + bytes / bandwidth[prevLink[v]];
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
    for (let i = 0; ; ) {
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
