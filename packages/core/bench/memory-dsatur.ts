// The memory pass as it was before the tight colouring (commit e6f00b8: DSatur per PE, views
// coloured apart, each unit its own colour live the whole cycle), kept for bench:memory's
// baseline only (its liveness profile is color.ts's): nothing in src/ imports it.
import type { PeId } from '../src/ids.js';
import type { Model, ModelNode, ModelPe } from '../src/document/model.js';
import type { LatencyResult } from '../src/compile/latency.js';
import type { PhasePlan } from '../src/compile/phases.js';
import type { BufferTable } from '../src/compile/table.js';
import type { Buffers, MemoryReport } from '../src/compile/types.js';
import { viewUnits } from '../src/compile/views.js';
import { addArc, peakLive } from '../src/compile/color.js';

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
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function colorMemoryDsatur(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  plan: PhasePlan,
  lat: LatencyResult,
  overlap: boolean,
): Record<PeId, MemoryReport> {
  const reports = Object.create(null) as Record<PeId, MemoryReport>;
  // Buffer numbers per PE index, in buffer order.
  const byPe: number[][] = model.pes.map(() => []);
  // Buffers laid out as views of a base (joins, views.ts) are coloured apart: colorViewUnits.
  const unit = viewUnits(buffers);
  for (let i = 0; i < buffers.count; i++) if (unit[i] < 0) byPe[table.pe[i]].push(i);
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
  colorViewUnits(model, buffers, unit, reports);
  return reports;
}

/**
 * Views (compile/views.ts): each base with the buffers laid out in it gets a colour of its own
 * on its PE, sized to the span they cover (the joined input) times their slots, and counted as
 * live the whole cycle. Safe and simple, not tight: the colouring proper is to treat a unit as
 * one buffer of that span and liveness.
 */
function colorViewUnits(model: Model, buffers: Buffers, unit: Int32Array, reports: Record<PeId, MemoryReport>): void {
  const span = new Float64Array(buffers.count);
  for (let i = 0; i < buffers.count; i++) {
    const base = unit[i];
    if (base >= 0) span[base] = Math.max(span[base], (buffers.view[i] >= 0 ? buffers.viewOffset[i] : 0) + buffers.bytes[i]);
  }
  for (let i = 0; i < buffers.count; i++) {
    const base = unit[i];
    if (base < 0) continue;
    const report = reports[model.pes[buffers.pe[i]].id];
    report.before += buffers.bytes[i] * buffers.depth[i];
    if (base !== i) continue;
    const size = span[i] * buffers.depth[i];
    buffers.color[i] = report.colorBytes.push(size) - 1;
    report.after += size;
    report.lowerBound += size;
  }
  for (let i = 0; i < buffers.count; i++) if (unit[i] >= 0 && unit[i] !== i) buffers.color[i] = buffers.color[unit[i]];
}

/**
 * One PE's colouring and report. Its own function, called once per PE, so that V8 optimises
 * it after a few PEs: as the body of one loop run once per compile, it ran mostly unoptimised.
 */
function colorPe(
  pe: ModelPe,
  numbers: number[],
  length: number,
  buffers: Buffers,
  writeAt: Int32Array,
  readAt: Int32Array,
  wrapAt: Int32Array,
  scratch: Scratch,
): MemoryReport {
  const { bytes, depth } = buffers;
  // Buffer numbers: those live the whole cycle, and those live over a range of positions.
  const whole = scratch.int(S.whole, numbers.length);
  const ranged = scratch.int(S.ranged, numbers.length);
  let wholes = 0;
  let n = 0;
  // Where each single buffer is live: [from, to], and for one read again next cycle also
  // [0, wrap] (wrap -1 for none; a wrap reaching `from` makes the whole cycle, kept as
  // [0, length - 1], so equal position sets have equal triples). And the live-weight profile.
  const from = scratch.int(S.from, numbers.length);
  const to = scratch.int(S.to, numbers.length);
  const wrap = scratch.int(S.wrap, numbers.length);
  const live = scratch.float(length + 1);
  for (const number of numbers) {
    if (depth[number] >= 2) {
      whole[wholes++] = number;
      continue;
    }
    const w = writeAt[number];
    const wraps = wrapAt[number];
    const i = n++;
    ranged[i] = number;
    if (wraps < 0) {
      from[i] = w;
      to[i] = Math.max(w, readAt[number]);
      wrap[i] = -1;
    } else {
      const r = Math.min(wraps, w - 1);
      from[i] = r === w - 1 ? 0 : w;
      to[i] = length - 1;
      wrap[i] = r === w - 1 ? -1 : r;
    }
    addArc(live, from[i], to[i], wrap[i], bytes[number]);
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
  // buffer by buffer. Classes are found through an open-addressing table over the
  // (from, to, wrap) triples: cls[i] is the class of single buffer i, m counts them, and
  // each class keeps its triple.
  const cls = scratch.int(S.cls, n);
  const classFrom = scratch.int(S.classFrom, n);
  const classTo = scratch.int(S.classTo, n);
  const classWrap = scratch.int(S.classWrap, n);
  const size = tableSize(n);
  const slots = scratch.int(S.slots, size).fill(-1, 0, size);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const h = Math.imul(Math.imul(Math.imul(from[i] + 1, 0x9e3779b1) ^ to[i], 0x85ebca6b) ^ (wrap[i] + 1), 0xc2b2ae35);
    let at = (h ^ (h >>> 15)) & (size - 1);
    for (;;) {
      const c = slots[at];
      if (c < 0) {
        slots[at] = m;
        classFrom[m] = from[i];
        classTo[m] = to[i];
        classWrap[m] = wrap[i];
        cls[i] = m++;
        break;
      }
      if (classFrom[c] === from[i] && classTo[c] === to[i] && classWrap[c] === wrap[i]) {
        cls[i] = c;
        break;
      }
      at = (at + 1) & (size - 1);
    }
  }
  // Each class's members in buffer order: members[memberStart[a] .. memberStart[a + 1]).
  const memberStart = scratch.int(S.memberStart, m + 1);
  for (let i = 0; i < n; i++) memberStart[cls[i] + 1]++;
  for (let a = 0; a < m; a++) memberStart[a + 1] += memberStart[a];
  const members = scratch.int(S.members, n);
  const fill = scratch.int(S.fill, m);
  for (let i = 0; i < n; i++) members[memberStart[cls[i]] + fill[cls[i]]++] = i;

  // The classes each class meets (shares a position with, itself included), as a bitset row
  // of W words per class, built in one sweep over the positions. Two intervals meet when each
  // starts before the other ends; with `started` (classes begun by x: a plain interval's from,
  // a wrapped class's from) and `ended` (classes over before x: a plain interval's to, a
  // wrapped class's low part [0, wrap]), a plain class [s, e] meets
  //   the plain classes in started(e) & ~ended(s), and the wrapped ones in started(e) | ~ended(s);
  // a wrapped class [from, end] + [0, wrap] meets every wrapped class, the classes started by
  // its wrap and those not ended before its from. Each row costs O(W) words; testing every
  // pair of classes had been quadratic in the classes of a busy PE (hundreds per PE on a
  // 64-PE cluster without overlap, 10,000 on a single CPU).
  const W = (m + 31) >>> 5;
  const last = m & 31 ? (1 << (m & 31)) - 1 : -1; // the valid bits of a row's last word
  // Classes by where they start (from) and where their first part ends (to, or wrap): CSR by position.
  const startAt = scratch.int(S.startAt, length + 1);
  const endAt = scratch.int(S.endAt, length + 1);
  for (let a = 0; a < m; a++) {
    startAt[classFrom[a] + 1]++;
    endAt[(classWrap[a] < 0 ? classTo[a] : classWrap[a]) + 1]++;
  }
  for (let x = 0; x < length; x++) {
    startAt[x + 1] += startAt[x];
    endAt[x + 1] += endAt[x];
  }
  const starting = scratch.int(S.starting, m);
  const ending = scratch.int(S.ending, m);
  const placed = scratch.int(S.placed, 2 * length);
  for (let a = 0; a < m; a++) {
    const x = classFrom[a];
    starting[startAt[x] + placed[x]++] = a;
    const y = classWrap[a] < 0 ? classTo[a] : classWrap[a];
    ending[endAt[y] + placed[length + y]++] = a;
  }
  const wrapped = scratch.int(S.wrapped, W);
  for (let a = 0; a < m; a++) if (classWrap[a] >= 0) wrapped[a >>> 5] |= 1 << (a & 31);
  const started = scratch.int(S.started, W);
  const ended = scratch.int(S.ended, W);
  const meets = scratch.int(S.meets, m * W);
  for (let x = 0; x < length; x++) {
    for (let k = startAt[x]; k < startAt[x + 1]; k++) started[starting[k] >>> 5] |= 1 << (starting[k] & 31);
    for (let k = startAt[x]; k < startAt[x + 1]; k++) {
      // Not ended before x: plain classes keep it to AND with started(e); wrapped ones OR it in.
      const row = starting[k] * W;
      if (classWrap[starting[k]] < 0) for (let w = 0; w < W; w++) meets[row + w] = ~ended[w];
      else for (let w = 0; w < W; w++) meets[row + w] |= ~ended[w] | wrapped[w];
      meets[row + W - 1] &= last;
    }
    for (let k = endAt[x]; k < endAt[x + 1]; k++) {
      const row = ending[k] * W;
      if (classWrap[ending[k]] < 0) {
        for (let w = 0; w < W; w++) {
          const open = meets[row + w];
          meets[row + w] = (started[w] & open) | (wrapped[w] & (started[w] | open));
        }
      } else for (let w = 0; w < W; w++) meets[row + w] = started[w];
    }
    for (let k = endAt[x]; k < endAt[x + 1]; k++) ended[ending[k] >>> 5] |= 1 << (ending[k] & 31);
  }
  // A buffer's degree: every buffer of every class it meets, itself excluded.
  const degree = scratch.int(S.degree, m);
  const next = scratch.int(S.next, m); // position in `members` of each class's first uncoloured member
  const head = scratch.int(S.head, m); // that member's number
  // Classes with uncoloured members (the order does not matter: the pick is a strict maximum).
  const alive = scratch.int(S.alive, m);
  for (let a = 0; a < m; a++) {
    let d = -1;
    for (let k = 0; k < W; k++) {
      for (let bits = meets[a * W + k]; bits !== 0; bits &= bits - 1) {
        const b = (k << 5) + 31 - Math.clz32(bits & -bits);
        d += memberStart[b + 1] - memberStart[b];
      }
    }
    degree[a] = d;
    next[a] = memberStart[a];
    head[a] = members[memberStart[a]];
    alive[a] = a;
  }
  const color = scratch.int(S.color, n).fill(-1, 0, n);
  const satCount = scratch.int(S.satCount, m);
  // A buffer's colour is the lowest not in its saturation, which holds at most its degree's
  // worth: colours stay below the largest degree + 1, and the saturation rows need no more bits.
  let colorsAtMost = 1;
  for (let a = 0; a < m; a++) colorsAtMost = Math.max(colorsAtMost, degree[a] + 1);
  // Saturation bits, a row of `row` words per class.
  const row = (colorsAtMost >>> 5) + 1;
  const satBits = scratch.int(S.satBits, m * row);
  // The same by colour: a row of W words per colour, the classes whose saturation holds it.
  const saturated = scratch.int(S.saturated, colorsAtMost * W);
  let alives = m;
  for (let step = 0; step < n; step++) {
    let at = 0;
    let pick = alive[0];
    for (let k = 1; k < alives; k++) {
      const a = alive[k];
      if (
        satCount[a] > satCount[pick] ||
        (satCount[a] === satCount[pick] && (degree[a] > degree[pick] || (degree[a] === degree[pick] && head[a] < head[pick])))
      ) {
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
    // Every class the pick meets now has colour c in its saturation: those new to it, a
    // word of classes at a time.
    const word = c >>> 5;
    const bit = 1 << (c & 31);
    for (let k = 0; k < W; k++) {
      const met = meets[pick * W + k];
      let fresh = met & ~saturated[c * W + k];
      if (fresh === 0) continue;
      saturated[c * W + k] |= met;
      for (; fresh !== 0; fresh &= fresh - 1) {
        const b = (k << 5) + 31 - Math.clz32(fresh & -fresh);
        satBits[b * row + word] |= bit;
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
  return {
    before,
    after,
    lowerBound: wholeBytes + peakLive(live, length),
    colorBytes: sizes,
    capacity: pe.memory,
  };
}

/** A power of two at least twice `n` (an open-addressing table that stays at most half full). */
function tableSize(n: number): number {
  let size = 16;
  while (size < 2 * n) size *= 2;
  return size;
}

/** The working arrays of colorPe, by name (Scratch keeps one of each). */
const S = {
  whole: 0,
  ranged: 1,
  from: 2,
  to: 3,
  wrap: 4,
  cls: 5,
  classFrom: 6,
  classTo: 7,
  classWrap: 8,
  slots: 9,
  memberStart: 10,
  members: 11,
  fill: 12,
  startAt: 13,
  endAt: 14,
  starting: 15,
  ending: 16,
  placed: 17,
  wrapped: 18,
  started: 19,
  ended: 20,
  meets: 21,
  degree: 22,
  next: 23,
  head: 24,
  alive: 25,
  color: 26,
  satCount: 27,
  satBits: 28,
  saturated: 29,
} as const;

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
