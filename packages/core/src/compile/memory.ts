import type { NodeId, PeId } from '../ids.js';
import type { Model, ModelPe } from '../document/model.js';
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
export function colorMemory(model: Model, order: NodeId[], buffers: Buffers, table: BufferTable, plan: PhasePlan, lat: LatencyResult, overlap: boolean): Record<PeId, MemoryReport> {
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
  for (const id of order) {
    const n = model.node.get(id)!;
    const pos = (overlap ? 0 : plan.fire) + firesOn[model.pe.get(n.pe)!.index]++;
    for (const edge of n.inputs) {
      const b = table.read[edge.index];
      if (lat.inputLag[edge.index] === 0) readAt[b] = Math.max(readAt[b], pos);
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
  const whole: number[] = [];
  const ranged: number[] = [];
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
      whole.push(number);
      continue;
    }
    const w = writeAt[number];
    const end = Math.max(w, readAt[number]);
    const wraps = wrapAt[number];
    const i = ranged.length;
    ranged.push(number);
    if (wraps < 0) mark(i, w, end, bytes[number]);
    else {
      mark(i, w, length - 1, bytes[number]);
      mark(i, 0, Math.min(wraps, w - 1), bytes[number]);
    }
  }

  // Colours: one per multi-slot buffer, then DSatur over the single buffers.
  let colors = 0;
  for (const b of whole) buffers.color[b] = colors++;
  const base = colors;
  // Buffers live at exactly the same positions have the same neighbours (and conflict with
  // each other): DSatur runs on these classes, which keeps it linear in the buffers of a
  // busy PE (a host CPU relaying hundreds of copies) while choosing exactly as it would
  // buffer by buffer.
  const n = ranged.length;
  const members: number[][] = [];
  const patterns: number[] = [];
  const seen = new Map<string | number, number>();
  for (let i = 0; i < n; i++) {
    // A PE with up to 32 positions (most of them) keys by the word itself: no string built.
    const key = words === 1 ? bits[i] : Array.prototype.slice.call(bits, i * words, (i + 1) * words).join(',');
    const c = seen.get(key);
    if (c !== undefined) members[c].push(i);
    else {
      seen.set(key, members.length);
      members.push([i]);
      for (let k = 0; k < words; k++) patterns.push(bits[i * words + k]);
    }
  }
  const m = members.length;
  const neighbours: number[][] = members.map(() => []);
  for (let a = 0; a < m; a++) {
    for (let b = a; b < m; b++) {
      let hit = false;
      for (let k = 0; k < words && !hit; k++) hit = (patterns[a * words + k] & patterns[b * words + k]) !== 0;
      if (!hit) continue;
      neighbours[a].push(b);
      if (b !== a) neighbours[b].push(a);
    }
  }
  // A buffer's degree: every buffer of every class it meets, itself excluded.
  const degree = scratch.int(1, m);
  const next = scratch.int(2, m); // first uncoloured member of each class
  const head = scratch.int(3, m); // that member's number
  // Classes with uncoloured members (the order does not matter: the pick is a strict maximum).
  const alive = scratch.int(4, m);
  for (let a = 0; a < m; a++) {
    let d = -1;
    for (const b of neighbours[a]) d += members[b].length;
    degree[a] = d;
    head[a] = members[a][0];
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
    if (++next[pick] < members[pick].length) head[pick] = members[pick][next[pick]];
    else alive[at] = alive[--alives];
    const word = c >>> 5;
    const bit = 1 << (c & 31);
    for (const b of neighbours[pick]) {
      const k = b * row + word;
      if (!(satBits[k] & bit)) {
        satBits[k] |= bit;
        satCount[b]++;
      }
    }
  }
  let used = 0;
  ranged.forEach((b, i) => {
    buffers.color[b] = base + color[i];
    used = Math.max(used, color[i] + 1);
  });
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
    lowerBound: whole.reduce((a, b) => a + bytes[b] * depth[b], 0) + peak,
    colorBytes: sizes,
    capacity: pe.memory,
  };
}

/**
 * Working arrays reused from PE to PE: a compile colours every PE (1,024 on the bench graph),
 * and eight fresh typed arrays for each were most of the pass's 8 MB of garbage per compile.
 * Each array handed out is zeroed over the length asked for, and only that part is read.
 */
class Scratch {
  private readonly ints: Int32Array[] = [];
  private floats = new Float64Array(64);

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
