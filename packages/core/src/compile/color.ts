/**
 * Weighted colouring of arcs on a cycle (the memory pass's problem on one PE, memory.ts): item
 * i is live over positions from[i] .. to[i] of a cycle of `length` positions and, where
 * wrap[i] >= 0, also over 0 .. wrap[i] (it is read again next cycle; then to[i] is the last
 * position). Items live at a common position conflict. A colour costs its heaviest member
 * (weight: bytes x slots); the aim is the least total cost (max-colouring, NP-hard even on
 * interval graphs). Two lower bounds: the heaviest clique (the most weight live at one
 * position), and the level bound, the sum over weights w (largest first) of the most items of
 * weight >= w live at one position times the step to the next weight: every colour of cost >= w
 * holds at most one of those, so that many colours cost at least w.
 *
 * How it colours, keeping the cheapest result:
 *   1. Rotation: the cycle is cut where the least weight crosses from one position to the next
 *      (usually where nothing does), so most items become plain intervals; each item crossing
 *      the cut conflicts with every other one and gets a colour of its own at first.
 *   2. Weight-major best fit: items by weight, heaviest first (crossing ones first in a weight,
 *      then by start), each into the colour where it fits with the least free room around it,
 *      else into a new colour. Every colour is opened by its heaviest member, so costs only grow
 *      when a colour is opened, and with equal weights this is the left-edge algorithm, exact on
 *      interval graphs.
 *   3. Where that meets no bound, a sweep too (intervals by start, each into a free colour: the
 *      cheapest as heavy as it, else the heaviest, raised), and a local search from both: a
 *      colour's heaviest members move to other colours they fit, where that saves more than it
 *      raises the receiving colours.
 *   4. Exactly, where the PE has few items (`exactItems`): branch and bound over the items by
 *      weight (each joins a colour it fits or opens one), pruned by a clique bound per position,
 *      stopped after `exactNodes` nodes so compile time stays bounded and deterministic.
 * Steps 3 and 4 are skipped once the cost meets a lower bound. Deterministic: ties go to the
 * lower item or colour number.
 *
 * Working arrays are kept from PE to PE (a compile colours every PE: 1,024 on the bench graph).
 */
export class ArcColoring {
  /** Input, item by item, for `colour(n, ...)`: sized by `reserve(n)`. */
  from = new Int32Array(64);
  to = new Int32Array(64);
  wrap = new Int32Array(64);
  weight = new Float64Array(64);
  /** Output: each item's colour, 0 .. count - 1, numbered in the order of the items. */
  color = new Int32Array(64);
  /** After `colour`: the total cost (sum over colours of the heaviest member). */
  cost = 0;
  /** After `colour`: the heaviest clique (most weight live at one position). */
  clique = 0;
  /** After `colour`: the level bound (see above; >= clique where it was computed, else clique). */
  levels = 0;
  /** After `colour`: whether the cost is proven least (it meets a bound, or the exact search finished). */
  optimal = false;
  /** After `colour`: which step gave the result: best 'fit', the 'sweep', the local 'search' or the 'exact' one. */
  by: 'fit' | 'sweep' | 'search' | 'exact' = 'fit';

  // Rotated items: an interval [s, e], or for one crossing the cut (cross = 1) the tail
  // [s, length - 1] and the head [0, e].
  private s = new Int32Array(64);
  private e = new Int32Array(64);
  private cross = new Uint8Array(64);
  private order = new Int32Array(64);
  private best = new Int32Array(64);
  private alt = new Int32Array(64);
  // Colours as sorted lists of disjoint segments (a pool of 2n): start, end, next; per colour
  // its first and last segment, cost, whether it holds a crossing item, and a sweep cursor.
  private segStart = new Int32Array(128);
  private segEnd = new Int32Array(128);
  private segNext = new Int32Array(128);
  private head = new Int32Array(64);
  private tail = new Int32Array(64);
  private colorCost = new Float64Array(64);
  private crossed = new Uint8Array(64);
  private cursor = new Int32Array(64);
  private readonly ahead = new Heap();
  private readonly busy = new Heap();
  private readonly done = new Heap();
  private profile = new Float64Array(64);
  private counts = new Int32Array(64);
  // Local search: members of each colour as linked lists.
  private first = new Int32Array(64);
  private next = new Int32Array(64);
  private moved = new Int32Array(64);
  private target = new Int32Array(64);

  /** Makes room for n items (the input arrays keep no old values worth keeping). */
  reserve(n: number): void {
    if (this.from.length >= n) return;
    const size = Math.max(n, 2 * this.from.length);
    this.from = new Int32Array(size);
    this.to = new Int32Array(size);
    this.wrap = new Int32Array(size);
    this.weight = new Float64Array(size);
    this.color = new Int32Array(size);
    this.s = new Int32Array(size);
    this.e = new Int32Array(size);
    this.cross = new Uint8Array(size);
    this.order = new Int32Array(size);
    this.best = new Int32Array(size);
    this.alt = new Int32Array(size);
    this.segStart = new Int32Array(2 * size);
    this.segEnd = new Int32Array(2 * size);
    this.segNext = new Int32Array(2 * size);
    this.head = new Int32Array(size);
    this.tail = new Int32Array(size);
    this.colorCost = new Float64Array(size);
    this.crossed = new Uint8Array(size);
    this.cursor = new Int32Array(size);
    this.first = new Int32Array(size);
    this.next = new Int32Array(size);
    this.moved = new Int32Array(size);
    this.target = new Int32Array(size);
  }

  /**
   * Colours items 0 .. n - 1 (set with `reserve` and the input arrays) on a cycle of `length`
   * positions; returns the number of colours, each item's in `color`.
   */
  colour(n: number, length: number, o: ColourOptions = {}): number {
    this.cost = this.clique = this.levels = 0;
    this.optimal = true;
    this.by = 'fit';
    if (n === 0) return 0;
    const L = Math.max(1, length);
    // An arc read again next cycle at or after its start is live everywhere: one interval.
    for (let i = 0; i < n; i++) {
      if (this.wrap[i] < 0 || this.wrap[i] < this.from[i] - 1) continue;
      this.from[i] = 0;
      this.to[i] = L - 1;
      this.wrap[i] = -1;
    }
    this.bounds(n, L, o.levelWork ?? LEVEL_WORK);
    this.rotate(n, L);
    const bound = Math.max(this.clique, this.levels);
    // Step 2, then where that is not provably least the sweep too, each improved by step 3.
    const { color, best, alt } = this;
    let cost = this.total(n, this.bestFit(n, L));
    this.optimal = cost <= bound;
    if (!this.optimal) {
      best.set(color.subarray(0, n));
      alt.set(color.subarray(0, n));
      let by: ArcColoring['by'] = 'fit';
      const sweep = this.total(n, this.sweep(n, L));
      if (sweep < cost) {
        cost = sweep;
        by = 'sweep';
        best.set(color.subarray(0, n));
      }
      if (n <= (o.searchItems ?? SEARCH_ITEMS)) {
        // The sweep's colouring is in `color`, then the fit's (kept in `alt`).
        for (let round = 0; round < 2 && cost > bound; round++) {
          if (round === 1) color.set(alt.subarray(0, n));
          const colors = this.compact(n);
          const searched = this.search(n, colors, this.total(n, colors), o.searchPasses ?? SEARCH_PASSES);
          if (searched < cost) {
            cost = searched;
            by = 'search';
            best.set(color.subarray(0, n));
          }
        }
      }
      color.set(best.subarray(0, n));
      this.by = by;
      this.optimal = cost <= bound;
    }
    if (!this.optimal && n <= Math.min(31, o.exactItems ?? EXACT_ITEMS)) {
      const exact = new Exact(this, n, L, bound, cost, o.exactNodes ?? EXACT_NODES);
      if (exact.cost < cost) {
        cost = exact.cost;
        this.by = 'exact';
        for (let i = 0; i < n; i++) color[i] = exact.color[i];
      }
      this.optimal = exact.complete || cost <= bound;
    }
    this.cost = cost;
    return this.renumber(n);
  }

  /** The heaviest clique, and the level bound where weights x positions stay under `work`. */
  private bounds(n: number, L: number, work: number): void {
    const { from, to, wrap, weight } = this;
    const live = this.floats(L + 1);
    for (let i = 0; i < n; i++) addArc(live, from[i], to[i], wrap[i], weight[i]);
    const peak = peakLive(live, L);
    this.clique = peak;
    // Level bound: items by weight, heaviest first, counted per position a weight at a time.
    const order = this.order;
    for (let i = 0; i < n; i++) order[i] = i;
    order.subarray(0, n).sort((a, b) => weight[b] - weight[a] || a - b);
    let classes = 1;
    for (let k = 1; k < n; k++) if (weight[order[k]] !== weight[order[k - 1]]) classes++;
    if (classes === 1 || classes * L > work) {
      // One weight: the level bound is the clique.
      this.levels = peak;
      return;
    }
    const count = this.ints(L + 1);
    let levels = 0;
    for (let k = 0; k < n;) {
      const w = weight[order[k]];
      for (; k < n && weight[order[k]] === w; k++) {
        const i = order[k];
        addArc(count, from[i], to[i], wrap[i], 1);
      }
      let most = 0;
      for (let x = 0, acc = 0; x < L; x++) most = Math.max(most, (acc += count[x]));
      levels += most * (w - (k < n ? weight[order[k]] : 0));
    }
    this.levels = Math.max(peak, levels);
  }

  /** Cuts the cycle where the least weight crosses between neighbouring positions (ties: the earliest cut, the cycle's own end first). */
  private rotate(n: number, L: number): void {
    const { from, to, wrap, weight, s, e, cross } = this;
    // crossing[x]: weight live at both x - 1 and x (x = 0: at length - 1 and 0).
    const crossing = this.floats(L + 1);
    for (let i = 0; i < n; i++) {
      const w = weight[i];
      if (wrap[i] < 0) {
        if (to[i] > from[i]) {
          crossing[from[i] + 1] += w;
          crossing[to[i] + 1] -= w;
        }
      } else {
        crossing[0] += w;
        crossing[wrap[i] + 1] -= w;
        crossing[from[i] + 1] += w;
        crossing[L] -= w;
      }
    }
    let cut = 0;
    let least = Infinity;
    for (let x = 0, acc = 0; x < L; x++) {
      acc += crossing[x];
      if (acc < least - 1e-9) {
        least = acc;
        cut = x;
      }
    }
    for (let i = 0; i < n; i++) {
      const a = (from[i] - cut + L) % L;
      const end = wrap[i] >= 0 ? wrap[i] : to[i];
      const b = (end - cut + L) % L;
      // It crosses the cut where its end comes before its start once rotated.
      if (b < a) {
        cross[i] = 1;
        s[i] = a;
        e[i] = b;
      } else {
        cross[i] = 0;
        s[i] = a;
        e[i] = b;
      }
    }
  }

  /** Step 2: weight-major best fit. Returns the number of colours; `color` holds them. */
  private bestFit(n: number, L: number): number {
    const { weight, s, e, cross, order, color, segStart, segEnd, segNext, head, tail, colorCost, crossed, cursor } = this;
    for (let i = 0; i < n; i++) order[i] = i;
    order.subarray(0, n).sort((a, b) => weight[b] - weight[a] || cross[b] - cross[a] || s[a] - s[b] || a - b);
    let colors = 0;
    let segs = 0;
    for (let k = 0; k < n;) {
      const w = weight[order[k]];
      // Crossing items of this weight: a colour without one whose segments all lie between
      // the item's head and tail.
      for (; k < n && weight[order[k]] === w && cross[order[k]]; k++) {
        const i = order[k];
        let pick = -1;
        let room = Infinity;
        for (let c = 0; c < colors; c++) {
          if (crossed[c]) continue;
          const lo = segStart[head[c]];
          const hi = segEnd[tail[c]];
          if (lo <= e[i] || hi >= s[i]) continue;
          const free = lo - e[i] + (s[i] - hi);
          if (free < room) {
            room = free;
            pick = c;
          }
        }
        const h = segs++;
        const t = segs++;
        segStart[h] = 0;
        segEnd[h] = e[i];
        segStart[t] = s[i];
        segEnd[t] = L - 1;
        segNext[t] = -1;
        if (pick < 0) {
          pick = colors++;
          segNext[h] = t;
          head[pick] = h;
          tail[pick] = t;
          colorCost[pick] = w;
        } else {
          segNext[h] = head[pick];
          head[pick] = h;
          segNext[tail[pick]] = t;
          tail[pick] = t;
        }
        crossed[pick] = 1;
        color[i] = pick;
      }
      // Intervals of this weight, by start a. Colours fall in three groups as a grows: ahead
      // (a segment starts after a; tried one by one, each from a cursor at its last segment
      // ending before a), busy (its last segment covers a: cannot take it) and done (all its
      // segments end before a: takes it with free room length - that end, so the best is the
      // latest end). Only the ahead ones cost a try each; with one weight there are none but
      // crossing colours, and this is the left-edge algorithm in O(n log colours).
      if (k === n || weight[order[k]] !== w) continue;
      const ahead = this.ahead;
      const busy = this.busy;
      const done = this.done;
      ahead.clear();
      busy.clear();
      done.clear();
      const a0 = s[order[k]];
      for (let c = 0; c < colors; c++) {
        cursor[c] = -1;
        const t = tail[c];
        if (segStart[t] > a0) ahead.push(c, segStart[t]);
        else if (segEnd[t] >= a0) busy.push(c, segEnd[t]);
        else done.push(c, -segEnd[t]);
      }
      for (; k < n && weight[order[k]] === w; k++) {
        const i = order[k];
        const a = s[i];
        const b = e[i];
        while (ahead.size && ahead.topKey() <= a) {
          const c = ahead.pop();
          if (segEnd[tail[c]] >= a) busy.push(c, segEnd[tail[c]]);
          else done.push(c, -segEnd[tail[c]]);
        }
        while (busy.size && busy.topKey() < a) {
          const c = busy.pop();
          done.push(c, -segEnd[tail[c]]);
        }
        let pick = -1;
        let room = Infinity;
        let fromDone = false;
        if (done.size) {
          pick = done.top();
          room = L - segEnd[tail[pick]];
          fromDone = true;
        }
        for (let x = 0; x < ahead.size; x++) {
          const c = ahead.at(x);
          let prev = cursor[c];
          let nxt = prev < 0 ? head[c] : segNext[prev];
          while (nxt >= 0 && segEnd[nxt] < a) {
            prev = nxt;
            nxt = segNext[nxt];
          }
          cursor[c] = prev;
          // An ahead colour has a segment after a, so nxt >= 0.
          if (segStart[nxt] <= b) continue;
          const free = segStart[nxt] - (prev >= 0 ? segEnd[prev] : -1);
          if (free < room || (free === room && c < pick)) {
            room = free;
            pick = c;
            fromDone = false;
          }
        }
        const g = segs++;
        segStart[g] = a;
        segEnd[g] = b;
        if (pick < 0) {
          pick = colors++;
          segNext[g] = -1;
          head[pick] = tail[pick] = g;
          colorCost[pick] = w;
          crossed[pick] = 0;
          busy.push(pick, b);
        } else if (fromDone) {
          done.pop();
          segNext[tail[pick]] = g;
          segNext[g] = -1;
          tail[pick] = g;
          busy.push(pick, b);
        } else {
          const prev = cursor[pick];
          if (prev < 0) {
            segNext[g] = head[pick];
            head[pick] = g;
          } else {
            segNext[g] = segNext[prev];
            segNext[prev] = g;
          }
        }
        color[i] = pick;
      }
    }
    return colors;
  }

  /**
   * The other constructive colouring: a sweep over the positions, intervals by start (heaviest
   * first at one start), each into a colour free there (its last member ended before, and a
   * crossing member's tail starts after the interval's end): the cheapest one at least as heavy,
   * else the heaviest one (raised to the interval's weight), else a new colour. Crossing items
   * take a colour each first. Returns the number of colours.
   */
  private sweep(n: number, L: number): number {
    const { weight, s, e, cross, order, color, colorCost, cursor: lastEnd, head: reserve } = this;
    let colors = 0;
    for (let i = 0; i < n; i++) {
      if (!cross[i]) continue;
      color[i] = colors;
      colorCost[colors] = weight[i];
      lastEnd[colors] = e[i];
      reserve[colors++] = s[i];
    }
    let m = 0;
    for (let i = 0; i < n; i++) if (!cross[i]) order[m++] = i;
    order.subarray(0, m).sort((a, b) => s[a] - s[b] || weight[b] - weight[a] || a - b);
    for (let k = 0; k < m; k++) {
      const i = order[k];
      const a = s[i];
      const b = e[i];
      const w = weight[i];
      let fit = -1;
      let raise = -1;
      for (let c = 0; c < colors; c++) {
        if (lastEnd[c] >= a || reserve[c] <= b) continue;
        const cc = colorCost[c];
        if (cc >= w) {
          if (fit < 0 || cc < colorCost[fit]) fit = c;
        } else if (raise < 0 || cc > colorCost[raise]) raise = c;
      }
      let c = fit >= 0 ? fit : raise;
      if (c < 0) {
        c = colors++;
        colorCost[c] = 0;
        reserve[c] = L;
      }
      color[i] = c;
      lastEnd[c] = b;
      if (w > colorCost[c]) colorCost[c] = w;
    }
    return colors;
  }

  /** Sum over colours of the heaviest member. */
  private total(n: number, colors: number): number {
    const cost = this.colorCost;
    cost.fill(0, 0, colors);
    for (let i = 0; i < n; i++) if (this.weight[i] > cost[this.color[i]]) cost[this.color[i]] = this.weight[i];
    let sum = 0;
    for (let c = 0; c < colors; c++) sum += cost[c];
    return sum;
  }

  /**
   * Step 3: for each colour, move its heaviest members (all of its cost's weight) into other
   * colours they fit, each where it raises the receiver least; kept where that saves more than
   * it raises. Passes over the colours until one saves nothing, at most `passes`.
   */
  private search(n: number, colors: number, cost: number, passes: number): number {
    const { weight, color, first, next, colorCost, moved, target } = this;
    // Members of each colour as linked lists, heaviest first (items by weight: `order`).
    const order = this.order;
    for (let i = 0; i < n; i++) order[i] = i;
    order.subarray(0, n).sort((a, b) => weight[b] - weight[a] || a - b);
    const link = () => {
      first.fill(-1, 0, colors);
      for (let k = n - 1; k >= 0; k--) {
        const i = order[k];
        next[i] = first[color[i]];
        first[color[i]] = i;
      }
    };
    link();
    for (let pass = 0; pass < passes; pass++) {
      let saved = false;
      for (let c = 0; c < colors; c++) {
        const top = first[c];
        if (top < 0) continue;
        const w = weight[top];
        let rest = top;
        while (rest >= 0 && weight[rest] === w) rest = next[rest];
        const gain = w - (rest >= 0 ? weight[rest] : 0);
        // Tentative moves: moved[0 .. m) to target[...]; raised costs undone if it fails.
        let m = 0;
        let raise = 0;
        let ok = true;
        for (let i = top; i !== rest; i = next[i]) {
          let pick = -1;
          let least = Infinity;
          for (let d = 0; d < colors; d++) {
            if (d === c || first[d] < 0) continue;
            const up = Math.max(0, weight[i] - colorCost[d]);
            if (up >= least || !this.fits(i, d, moved, target, m)) continue;
            least = up;
            pick = d;
            if (up === 0) break;
          }
          if (pick < 0 || raise + least >= gain) {
            ok = false;
            break;
          }
          raise += least;
          moved[m] = i;
          target[m++] = pick;
        }
        if (!ok) continue;
        for (let k = 0; k < m; k++) {
          color[moved[k]] = target[k];
          colorCost[target[k]] = Math.max(colorCost[target[k]], weight[moved[k]]);
        }
        colorCost[c] = rest >= 0 ? weight[rest] : 0;
        cost -= gain - raise;
        saved = true;
        link();
      }
      if (!saved) break;
    }
    return cost;
  }

  /** Whether item i conflicts with no member of colour d, nor with the items tentatively moved there. */
  private fits(i: number, d: number, moved: Int32Array, target: Int32Array, m: number): boolean {
    for (let j = this.first[d]; j >= 0; j = this.next[j]) if (this.meets(i, j)) return false;
    for (let k = 0; k < m; k++) if (target[k] === d && this.meets(i, moved[k])) return false;
    return true;
  }

  /** Whether rotated items i and j share a position. */
  meets(i: number, j: number): boolean {
    const { s, e, cross } = this;
    if (cross[i] && cross[j]) return true;
    if (cross[i]) return s[j] <= e[i] || e[j] >= s[i];
    if (cross[j]) return s[i] <= e[j] || e[i] >= s[j];
    return s[i] <= e[j] && s[j] <= e[i];
  }

  /** One past the highest colour number in use (the search may have emptied some below it: `renumber` closes the gaps). */
  private compact(n: number): number {
    let colors = 0;
    for (let i = 0; i < n; i++) colors = Math.max(colors, this.color[i] + 1);
    return colors;
  }

  /** Numbers colours by their first item; returns the count. */
  private renumber(n: number): number {
    const { color } = this;
    const map = this.ints(n + 1).fill(-1, 0, n + 1);
    let colors = 0;
    for (let i = 0; i < n; i++) {
      const c = color[i];
      if (map[c] < 0) map[c] = colors++;
      color[i] = map[c];
    }
    return colors;
  }

  /** Whether rotated item i is live at position x. */
  liveAt(i: number, x: number): boolean {
    return this.cross[i] ? x >= this.s[i] || x <= this.e[i] : x >= this.s[i] && x <= this.e[i];
  }

  private floats(size: number): Float64Array {
    if (this.profile.length < size) this.profile = new Float64Array(Math.max(size, 2 * this.profile.length));
    return this.profile.fill(0, 0, size);
  }

  private ints(size: number): Int32Array {
    if (this.counts.length < size) this.counts = new Int32Array(Math.max(size, 2 * this.counts.length));
    return this.counts.fill(0, 0, size);
  }
}

export interface ColourOptions {
  /** Colour exactly (branch and bound) where a PE has at most this many items (default 24, at most 31). */
  exactItems?: number;
  /** Nodes the exact search may visit per PE (default 5,000: about a millisecond). */
  exactNodes?: number;
  /** Local search where a PE has at most this many items (default 4,000). */
  searchItems?: number;
  searchPasses?: number;
  /** The level bound is computed where distinct weights x positions is at most this. */
  levelWork?: number;
}

const EXACT_ITEMS = 24;
const EXACT_NODES = 5_000;
const SEARCH_ITEMS = 4_000;
const SEARCH_PASSES = 4;
const LEVEL_WORK = 1 << 20;

/** Adds weight w over an item's positions to a difference array of length L + 1. */
export function addArc(live: Float64Array | Int32Array, from: number, to: number, wrap: number, w: number): void {
  live[from] += w;
  live[to + 1] -= w;
  if (wrap >= 0) {
    live[0] += w;
    live[wrap + 1] -= w;
  }
}

/** The most weight live at one of L positions, from addArc's difference array: the heaviest clique. */
export function peakLive(live: Float64Array | Int32Array, L: number): number {
  let peak = 0;
  for (let x = 0, acc = 0; x < L; x++) peak = Math.max(peak, (acc += live[x]));
  return peak;
}

/**
 * Step 4: branch and bound over at most 31 items, heaviest first: each joins an open colour it
 * fits (no cost: that colour's opener is at least as heavy) or opens one (its weight). A node
 * is cut where its cost plus, at some position, the lightest items still to place there that
 * the colours free there cannot take, reaches the best cost found. Starts from the heuristic's
 * cost, so it only ever improves on it; stops at `limit` nodes.
 */
class Exact {
  cost: number;
  color: Int32Array;
  complete = true;
  private readonly n: number;
  private readonly w: Float64Array;
  private readonly conflicts: Int32Array;
  private readonly cliques: Int32Array;
  private readonly at: Int32Array;
  private readonly current: Int32Array;
  private readonly bound: number;
  private nodes = 0;
  private readonly limit: number;
  private found = false;
  private readonly byOrder: Int32Array;

  constructor(c: ArcColoring, n: number, L: number, bound: number, cost: number, limit: number) {
    this.n = n;
    this.cost = cost;
    this.bound = bound;
    this.limit = limit;
    this.color = new Int32Array(n);
    // Items by weight, heaviest first: position t in the search is item byOrder[t].
    const byOrder = new Int32Array(n);
    for (let i = 0; i < n; i++) byOrder[i] = i;
    byOrder.sort((a, b) => c.weight[b] - c.weight[a] || a - b);
    this.byOrder = byOrder;
    this.w = new Float64Array(n);
    for (let t = 0; t < n; t++) this.w[t] = c.weight[byOrder[t]];
    this.conflicts = new Int32Array(n);
    for (let t = 0; t < n; t++) for (let u = 0; u < n; u++) if (t !== u && c.meets(byOrder[t], byOrder[u])) this.conflicts[t] |= 1 << u;
    // The items live at each position (rotated), distinct sets only.
    const sets = new Set<number>();
    for (let x = 0; x < L; x++) {
      let mask = 0;
      for (let t = 0; t < n; t++) if (c.liveAt(byOrder[t], x)) mask |= 1 << t;
      if (mask & (mask - 1)) sets.add(mask);
    }
    this.cliques = Int32Array.from(sets);
    this.at = new Int32Array(n);
    this.current = new Int32Array(n);
    this.search(0, 0, 0);
    if (this.found) for (let t = 0; t < n; t++) this.color[byOrder[t]] = this.at[t];
  }

  private search(t: number, colors: number, cost: number): void {
    if (this.cost <= this.bound) return;
    if (++this.nodes > this.limit) {
      this.complete = false;
      return;
    }
    if (t === this.n) {
      if (cost < this.cost) {
        this.cost = cost;
        this.found = true;
        this.at.set(this.current);
      }
      return;
    }
    if (cost + this.rest(t, colors) >= this.cost) return;
    // Colours taken by placed items t conflicts with.
    let taken = 0;
    for (let bits = this.conflicts[t] & ((1 << t) - 1); bits !== 0; bits &= bits - 1) taken |= 1 << this.current[31 - Math.clz32(bits & -bits)];
    for (let c = 0; c < colors; c++) {
      if (taken & (1 << c)) continue;
      this.current[t] = c;
      this.search(t + 1, colors, cost);
      if (!this.complete || this.cost <= this.bound) return;
    }
    this.current[t] = colors;
    this.search(t + 1, colors + 1, cost + this.w[t]);
  }

  /** At each position, the unplaced items beyond the colours free there open colours: the lightest of them, at least. */
  private rest(t: number, colors: number): number {
    const placed = t >= 31 ? -1 : (1 << t) - 1;
    let most = 0;
    for (const mask of this.cliques) {
      let busy = 0;
      for (let bits = mask & placed; bits !== 0; bits &= bits - 1) busy |= 1 << this.current[31 - Math.clz32(bits & -bits)];
      const open = mask & ~placed;
      let need = popcount(open) - (colors - popcount(busy));
      if (need <= 0) continue;
      // The lightest unplaced ones: the highest positions (items are by weight, heaviest first).
      let sum = 0;
      for (let bits = open; need > 0 && bits !== 0; need--) {
        const u = 31 - Math.clz32(bits);
        sum += this.w[u];
        bits &= ~(1 << u);
      }
      most = Math.max(most, sum);
    }
    return most;
  }
}

/**
 * A binary min-heap of colours by an integer key (ties: the lower colour), over typed arrays
 * kept from PE to PE; `at(x)` reads its entries in heap order, for a scan of all of them.
 */
class Heap {
  size = 0;
  private item = new Int32Array(64);
  private key = new Int32Array(64);

  clear(): void {
    this.size = 0;
  }

  top(): number {
    return this.item[0];
  }

  topKey(): number {
    return this.key[0];
  }

  at(x: number): number {
    return this.item[x];
  }

  push(c: number, k: number): void {
    if (this.size === this.item.length) {
      const item = new Int32Array(2 * this.size);
      const key = new Int32Array(2 * this.size);
      item.set(this.item);
      key.set(this.key);
      this.item = item;
      this.key = key;
    }
    const { item, key } = this;
    let x = this.size++;
    while (x > 0) {
      const up = (x - 1) >> 1;
      if (key[up] < k || (key[up] === k && item[up] < c)) break;
      item[x] = item[up];
      key[x] = key[up];
      x = up;
    }
    item[x] = c;
    key[x] = k;
  }

  pop(): number {
    const { item, key } = this;
    const out = item[0];
    const n = --this.size;
    const c = item[n];
    const k = key[n];
    let x = 0;
    for (;;) {
      let child = 2 * x + 1;
      if (child >= n) break;
      if (child + 1 < n && (key[child + 1] < key[child] || (key[child + 1] === key[child] && item[child + 1] < item[child]))) child++;
      if (k < key[child] || (k === key[child] && c < item[child])) break;
      item[x] = item[child];
      key[x] = key[child];
      x = child;
    }
    item[x] = c;
    key[x] = k;
    return out;
  }
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
