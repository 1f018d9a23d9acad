import type { PeId } from '../ids.js';
import type { Model, ModelNode, ModelPe } from '../document/model.js';
import type { LatencyResult } from './latency.js';
import type { PhasePlan } from './phases.js';
import type { BufferTable } from './table.js';
import type { Buffers, MemoryReport } from './types.js';

/**
 * Paper 4.2.4, memory sharing per PE: buffers that are never live at the same time share
 * storage. The paper's rule (two buffers connected to the same computation node are
 * incompatible) is not enough once transfers and cycles are in play, so liveness is computed
 * on one cycle of the PE, as positions: each transfer phase, then each firing on this PE in
 * schedule order (with overlap only the firings: transfers run beside them).
 *   - A buffer with 2 or more slots keeps data across the cycle boundary (a transfer or a later
 *     firing reads last cycle's slot while this cycle's is written): live the whole cycle,
 *     incompatible with every other buffer on its PE, so it gets a colour of its own.
 *   - A single buffer is live from its write to its last read; a read one cycle later (a
 *     transfer phase reading what a firing wrote last cycle) wraps round the cycle's end.
 * Two buffers live at a common position (ends included: a firing reading one and writing the
 * other is the paper's rule) are incompatible. DSatur colours each PE's graph; a colour is
 * allocated at its largest member (bytes x slots). The lower bound is the heaviest set of
 * buffers live at one position, a clique.
 */
/** `order`: the model's nodes in schedule order. */
export function colorMemory(model: Model, order: readonly ModelNode[], buffers: Buffers, table: BufferTable, plan: PhasePlan, lat: LatencyResult, overlap: boolean): Record<PeId, MemoryReport> {
  const reports = Object.create(null) as Record<PeId, MemoryReport>;
  // Buffer numbers per PE index, in buffer order.
  const byPe: number[][] = model.pes.map(() => []);
  for (let i = 0; i < buffers.count; i++) byPe[table.pe[i]].push(i);
  // Per buffer number: the position of its write, of its last read in the same cycle (-1 for
  // none) and of its last read in the next cycle (-1 for none). Firings are numbered per PE.
  const count = buffers.count;
  const writeAt = new Int32Array(count);
  const readAt = new Int32Array(count).fill(-1);
  const wrapAt = new Int32Array(count).fill(-1);
  const firesOn = new Int32Array(model.pes.length);
  const inputs = model.inputs;
  for (const n of order) {
    const pos = (overlap ? 0 : plan.fire) + firesOn[n.peIndex]++;
    for (let k = inputs.start[n.index]; k < inputs.start[n.index + 1]; k++) {
      const e = inputs.edge[k];
      const b = table.read[e];
      if (lat.inputLag[e] === 0) readAt[b] = Math.max(readAt[b], pos);
      else wrapAt[b] = Math.max(wrapAt[b], pos);
    }
    for (let j = 0; j < n.kernel.outputs.length; j++) writeAt[table.output[n.index] + j] = pos;
  }
  for (let i = 0; i < count; i++) {
    const from = table.parent[i];
    if (from < 0) continue;
    const pos = plan.phase[i];
    writeAt[i] = pos;
    if (lat.transferLag[i] === 0) readAt[from] = Math.max(readAt[from], pos);
    else wrapAt[from] = Math.max(wrapAt[from], pos);
  }

  const scratch = new Scratch();
  for (const pe of model.pes) {
    const length = Math.max(1, (overlap ? 0 : plan.fire) + firesOn[pe.index]);
    reports[pe.id] = colorPe(pe, byPe[pe.index], length, buffers, writeAt, readAt, wrapAt, scratch);
  }
  return reports;
}

/**
 * One PE's colouring and report. Its own function, called once per PE, so that V8 optimises
 * it after a few PEs: as the body of one loop run once per compile, it ran mostly unoptimised.
 */
function colorPe(pe: ModelPe, numbers: number[], length: number, buffers: Buffers, writeAt: Int32Array, readAt: Int32Array, wrapAt: Int32Array, scratch: Scratch): MemoryReport {
  const words = (length + 31) >>> 5;
  const { bytes, depth } = buffers;
  // Buffer numbers: those live the whole cycle, and those live over a range of positions.
  const whole = scratch.int(17, numbers.length);
  const ranged = scratch.int(18, numbers.length);
  let wholes = 0;
  let n = 0;
  // Live positions of each single buffer as a bitset (words per buffer), and a live-weight profile.
  const bits = scratch.int(0, numbers.length * words);
  const live = scratch.float(length + 1);
  const mark = (i: number, s: number, e: number, weight: number) => {
    for (let x = s; x <= e; x++) bits[i * words + (x >>> 5)] |= 1 << (x & 31);
    live[s] += weight;
    live[e + 1] -= weight;
  };
  for (const number of numbers) {
    if (depth[number] >= 2) {
      whole[wholes++] = number;
      continue;
    }
    const w = writeAt[number];
    const end = Math.max(w, readAt[number]);
    const wraps = wrapAt[number];
    const i = n++;
    ranged[i] = number;
    if (wraps < 0) mark(i, w, end, bytes[number]);
    else {
      mark(i, w, length - 1, bytes[number]);
      mark(i, 0, Math.min(wraps, w - 1), bytes[number]);
    }
  }

  // Colours: one per multi-slot buffer, then DSatur over the single buffers.
  let colors = 0;
  let wholeBytes = 0;
  for (let k = 0; k < wholes; k++) {
    buffers.color[whole[k]] = colors++;
    wholeBytes += bytes[whole[k]] * depth[whole[k]];
  }
  const base = colors;
  // Buffers live at exactly the same positions have the same neighbours (and conflict with
  // each other): DSatur runs on these classes, which keeps it linear in the buffers of a
  // busy PE (a host CPU relaying hundreds of copies) while choosing exactly as it would
  // buffer by buffer.
  // Classes by live pattern, through an open-addressing table over the patterns' words (no
  // Map, no string keys): cls[i] is the class of single buffer i, patterns holds each class's
  // words, m counts them.
  const cls = scratch.int(8, n);
  const patterns = scratch.int(9, n * words);
  const size = tableSize(n);
  const slots = scratch.int(10, size).fill(-1, 0, size);
  let m = 0;
  for (let i = 0; i < n; i++) {
    let h = 0;
    for (let k = 0; k < words; k++) h = Math.imul(h ^ bits[i * words + k], 0x9e3779b1);
    let at = (h ^ (h >>> 15)) & (size - 1);
    for (;;) {
      const c = slots[at];
      if (c < 0) {
        slots[at] = m;
        for (let k = 0; k < words; k++) patterns[m * words + k] = bits[i * words + k];
        cls[i] = m++;
        break;
      }
      let same = true;
      for (let k = 0; k < words && same; k++) same = patterns[c * words + k] === bits[i * words + k];
      if (same) {
        cls[i] = c;
        break;
      }
      at = (at + 1) & (size - 1);
    }
  }
  // Each class's members in buffer order: members[memberStart[a] .. memberStart[a + 1]).
  const memberStart = scratch.int(11, m + 1);
  for (let i = 0; i < n; i++) memberStart[cls[i] + 1]++;
  for (let a = 0; a < m; a++) memberStart[a + 1] += memberStart[a];
  const members = scratch.int(12, n);
  const fill = scratch.int(13, m);
  for (let i = 0; i < n; i++) members[memberStart[cls[i]] + fill[cls[i]]++] = i;
  // Classes meeting each class (itself included: its members conflict), ascending:
  // neighbours[neighbourStart[a] .. neighbourStart[a + 1]). The meeting pairs a <= b are found
  // once, in (a, b) order, and then laid out by class.
  let pairs = 0;
  let pairA = scratch.int(14, 64);
  let pairB = scratch.int(15, 64);
  for (let a = 0; a < m; a++) {
    for (let b = a; b < m; b++) {
      if (words === 1 ? (patterns[a] & patterns[b]) === 0 : !meets(patterns, words, a, b)) continue;
      if (pairs === pairA.length) {
        pairA = scratch.grow(14, pairs);
        pairB = scratch.grow(15, pairs);
      }
      pairA[pairs] = a;
      pairB[pairs++] = b;
    }
  }
  const neighbourStart = scratch.int(16, m + 1);
  for (let p = 0; p < pairs; p++) {
    neighbourStart[pairA[p] + 1]++;
    if (pairB[p] !== pairA[p]) neighbourStart[pairB[p] + 1]++;
  }
  for (let a = 0; a < m; a++) neighbourStart[a + 1] += neighbourStart[a];
  const neighbours = scratch.int(19, neighbourStart[m]);
  const filled = scratch.int(20, m);
  // In (a, b) order each class's list comes out ascending: the classes below it (as the b of
  // earlier pairs), then itself and those above it.
  for (let p = 0; p < pairs; p++) {
    const a = pairA[p];
    const b = pairB[p];
    neighbours[neighbourStart[a] + filled[a]++] = b;
    if (b !== a) neighbours[neighbourStart[b] + filled[b]++] = a;
  }
  // A buffer's degree: every buffer of every class it meets, itself excluded.
  const degree = scratch.int(1, m);
  const next = scratch.int(2, m); // position in `members` of each class's first uncoloured member
  const head = scratch.int(3, m); // that member's number
  // Classes with uncoloured members (the order does not matter: the pick is a strict maximum).
  const alive = scratch.int(4, m);
  for (let a = 0; a < m; a++) {
    let d = -1;
    for (let k = neighbourStart[a]; k < neighbourStart[a + 1]; k++) {
      const b = neighbours[k];
      d += memberStart[b + 1] - memberStart[b];
    }
    degree[a] = d;
    next[a] = memberStart[a];
    head[a] = members[memberStart[a]];
    alive[a] = a;
  }
  const color = scratch.int(5, n).fill(-1, 0, n);
  const satCount = scratch.int(6, m);
  // Saturation bits, a row of `row` words per class: colours are below n, so n + 1 bits suffice.
  const row = (n >>> 5) + 1;
  const satBits = scratch.int(7, m * row);
  let alives = m;
  for (let step = 0; step < n; step++) {
    let at = 0;
    let pick = alive[0];
    for (let k = 1; k < alives; k++) {
      const a = alive[k];
      if (satCount[a] > satCount[pick] || (satCount[a] === satCount[pick] && (degree[a] > degree[pick] || (degree[a] === degree[pick] && head[a] < head[pick])))) {
        pick = a;
        at = k;
      }
    }
    // The smallest colour not in the class's saturation: the lowest zero bit.
    let c = 0;
    for (let k = pick * row; ; k++) {
      const w = satBits[k];
      if (w !== -1) {
        const free = ~w;
        c = (k - pick * row) * 32 + (31 - Math.clz32(free & -free));
        break;
      }
    }
    color[head[pick]] = c;
    if (++next[pick] < memberStart[pick + 1]) head[pick] = members[next[pick]];
    else alive[at] = alive[--alives];
    const word = c >>> 5;
    const bit = 1 << (c & 31);
    for (let e = neighbourStart[pick]; e < neighbourStart[pick + 1]; e++) {
      const b = neighbours[e];
      const k = b * row + word;
      if (!(satBits[k] & bit)) {
        satBits[k] |= bit;
        satCount[b]++;
      }
    }
  }
  let used = 0;
  for (let i = 0; i < n; i++) {
    buffers.color[ranged[i]] = base + color[i];
    used = Math.max(used, color[i] + 1);
  }
  colors = base + used;

  // Each colour's storage: its largest member's bytes x depth. Which buffers a colour holds is
  // buffers.color (decode.ts colorGroups lists them): a list per colour here was 35,000 small
  // arrays and objects per compile on the bench graph, kept with the result.
  const sizes: number[] = new Array(colors).fill(0);
  let before = 0;
  for (const number of numbers) {
    const size = bytes[number] * depth[number];
    before += size;
    const c = buffers.color[number];
    if (size > sizes[c]) sizes[c] = size;
  }
  let after = 0;
  for (let c = 0; c < colors; c++) after += sizes[c];
  let peak = 0;
  for (let i = 0, acc = 0; i < length; i++) peak = Math.max(peak, (acc += live[i]));
  return {
    before,
    after,
    lowerBound: wholeBytes + peak,
    colorBytes: sizes,
    capacity: pe.memory,
  };
}

/** Whether classes a and b are live at a common position. */
function meets(patterns: Int32Array, words: number, a: number, b: number): boolean {
  for (let k = 0; k < words; k++) if ((patterns[a * words + k] & patterns[b * words + k]) !== 0) return true;
  return false;
}

/** A power of two at least twice `n` (an open-addressing table that stays at most half full). */
function tableSize(n: number): number {
  let size = 16;
  while (size < 2 * n) size *= 2;
  return size;
}

/**
 * Working arrays reused from PE to PE: a compile colours every PE (1,024 on the bench graph),
 * and eight fresh typed arrays for each were most of the pass's 8 MB of garbage per compile.
 * Each array handed out is zeroed over the length asked for, and only that part is read.
 */
class Scratch {
  private readonly ints: Int32Array[] = [];
  private floats = new Float64Array(64);

  /** Working array number `k` made twice as long, its first `kept` entries kept (the rest unset). */
  grow(k: number, kept: number): Int32Array {
    const a = new Int32Array(2 * this.ints[k].length);
    a.set(this.ints[k].subarray(0, kept));
    return (this.ints[k] = a);
  }

  /** Working array number `k`, at least `size` long, zeroed over [0, size). */
  int(k: number, size: number): Int32Array {
    let a = this.ints[k];
    if (!a || a.length < size) this.ints[k] = a = new Int32Array(Math.max(64, size, 2 * (a?.length ?? 0)));
    return a.fill(0, 0, size);
  }

  float(size: number): Float64Array {
    if (this.floats.length < size) this.floats = new Float64Array(Math.max(size, 2 * this.floats.length));
    return this.floats.fill(0, 0, size);
  }
}
