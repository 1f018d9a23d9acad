import type { PeId } from '../ids.js';
import type { Model, ModelNode } from '../document/model.js';
import { ArcColoring } from './color.js';
import type { LatencyResult } from './latency.js';
import { firePhase, type PhasePlan } from './phases.js';
import type { BufferTable } from './table.js';
import type { Buffers, MemoryReport } from './types.js';
import { viewUnits } from './views.js';

/**
 * Paper 4.2.4, memory sharing per PE: buffers that are never live at the same time share
 * storage. The paper's rule (two buffers connected to the same computation node are
 * incompatible) is not enough once transfers and cycles are in play, so liveness is computed
 * on one cycle of the PE, as positions: each transfer phase, then each firing on this PE in
 * schedule order (with overlap only the firings: transfers run beside them).
 *
 * What is coloured are items (`memoryItems`): a buffer, or a view unit (a join's parts laid
 * out in one storage, compile/views.ts) taken as one item of the unit's span (bytes x slots),
 * live from its members' first write to the last read of any of them, so it shares storage
 * with other buffers where they are not live together (the parts keep their offsets in it).
 *   - An item with 2 or more slots keeps data across the cycle boundary (a transfer or a later
 *     firing reads last cycle's slot while this cycle's is written), and one holding initial
 *     tokens (a delay) is filled before the run: live the whole cycle, a colour of its own.
 *   - A single item is live from its first write to its last read; a read one cycle later (a
 *     transfer phase reading what a firing wrote last cycle) wraps round the cycle's end, so
 *     liveness is an arc of the cycle.
 * Two items live at a common position (ends included: a firing reading one and writing the
 * other is the paper's rule) are incompatible. A colour is allocated at its largest member
 * (bytes x slots); color.ts colours each PE's arcs to make the sum small (weighted interval
 * colouring, then local search, exactly where the PE has few items). The lower bound is the
 * heaviest set of items live at one position, a clique.
 *
 * `order`: the model's nodes in schedule order (schedule.ts).
 */
export function colorMemory(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  plan: PhasePlan,
  lat: LatencyResult,
  overlap: boolean,
): Record<PeId, MemoryReport> {
  const items = memoryItems(model, order, buffers, table, plan, lat, overlap);
  const itemColor = new Int32Array(items.buffer.length);
  const coloring = new ArcColoring();
  // The global colour of each of a PE's arc colours (at most one per item).
  let most = 0;
  for (let p = 0; p < model.pes.length; p++) most = Math.max(most, items.start[p + 1] - items.start[p]);
  const global = new Int32Array(most);
  const byIndex = model.pes.map((pe) => colorPe(pe.index, pe.memory, items, itemColor, coloring, global));
  // Every buffer takes its item's colour; `before` counts each buffer, views included.
  const { bytes, depth, color } = buffers;
  for (let i = 0; i < buffers.count; i++) {
    color[i] = itemColor[items.item[i]];
    byIndex[table.pe[i]].before += bytes[i] * depth[i];
  }
  const reports = Object.create(null) as Record<PeId, MemoryReport>;
  for (const pe of model.pes) reports[pe.id] = byIndex[pe.index];
  return reports;
}

/**
 * What the memory pass colours, by PE: items (a buffer, or a view unit) with their liveness
 * on one cycle of positions and their size. Items of the PE at index p are the numbers
 * start[p] .. start[p + 1]), in the order of their first buffer.
 */
export interface MemoryItems {
  start: Int32Array;
  /** Positions in one cycle of each PE (at least 1). */
  length: Int32Array;
  /** By buffer number: its item (a view unit's members all have the base's). */
  item: Int32Array;
  /** By item: its first buffer (a unit's base). */
  buffer: Int32Array;
  /** Bytes x slots; a unit's span (from its base to the end of its last part) x slots. */
  weight: Float64Array;
  /**
   * Where the item is live: -1 in `from` for the whole cycle (a colour of its own); else
   * positions from .. to, and 0 .. wrap too where wrap >= 0 (then to is the cycle's last
   * position). An item live at every position but kept single is [0, length - 1].
   */
  from: Int32Array;
  to: Int32Array;
  wrap: Int32Array;
}

/** Liveness of every buffer and view unit of every PE, as `colorMemory` colours them. */
export function memoryItems(
  model: Model,
  order: readonly ModelNode[],
  buffers: Buffers,
  table: BufferTable,
  plan: PhasePlan,
  lat: LatencyResult,
  overlap: boolean,
): MemoryItems {
  // Per buffer number: the position of its write, of its last read in the same cycle (-1 for
  // none) and of its last read in the next cycle (-1 for none). Firings are numbered per PE.
  const count = buffers.count;
  const writeAt = new Int32Array(count);
  const readAt = new Int32Array(count).fill(-1);
  const wrapAt = new Int32Array(count).fill(-1);
  // Positions per PE, in the order of the cycle's phases: a copy phase takes one, a fire phase
  // one per firing of the PE in it (the overlap phase: its copies at its first position).
  const phases = plan.names.length;
  const pes = model.pes.length;
  const firing = new Uint8Array(phases);
  for (const f of plan.fires) firing[f] = 1;
  const at = new Int32Array(pes * phases);
  for (const n of order) at[n.peIndex * phases + firePhase(plan, n)]++;
  const length = new Int32Array(pes);
  for (let p = 0; p < pes; p++) {
    let cursor = 0;
    for (let f = 0; f < phases; f++) {
      const fires = at[p * phases + f];
      at[p * phases + f] = cursor;
      cursor += firing[f] ? fires : 1;
    }
    length[p] = Math.max(1, cursor);
  }
  const firesOn = new Int32Array(pes * phases);
  const inputs = model.inputs;
  for (const n of order) {
    const slot = n.peIndex * phases + firePhase(plan, n);
    const pos = at[slot] + firesOn[slot]++;
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
    const f = plan.phase[i];
    writeAt[i] = at[table.pe[i] * phases + f];
    const read = at[table.pe[from] * phases + f];
    if (lat.transferLag[i] === 0) readAt[from] = Math.max(readAt[from], read);
    else wrapAt[from] = Math.max(wrapAt[from], read);
  }

  // Items: every buffer that is not a view of another; a unit's views join their base's item.
  const unit = viewUnits(buffers);
  const start = new Int32Array(pes + 1);
  for (let i = 0; i < count; i++) if (unit[i] < 0 || unit[i] === i) start[table.pe[i] + 1]++;
  for (let p = 0; p < pes; p++) start[p + 1] += start[p];
  const items = start[pes];
  const fill = start.slice(0, pes);
  const item = new Int32Array(count);
  const buffer = new Int32Array(items);
  for (let i = 0; i < count; i++) {
    if (unit[i] >= 0 && unit[i] !== i) continue;
    const k = fill[table.pe[i]]++;
    item[i] = k;
    buffer[k] = i;
  }
  for (let i = 0; i < count; i++) if (unit[i] >= 0 && unit[i] !== i) item[i] = item[unit[i]];

  // Over each item's members: its span (in `weight` until the end), slots, first write (`from`),
  // last read this cycle (`to`) and next cycle (`wrap`); then each is made one of the three forms.
  const { bytes, depth, initial, view, viewOffset } = buffers;
  const weight = new Float64Array(items);
  const slots = new Int32Array(items);
  const whole = new Uint8Array(items);
  const from = new Int32Array(items).fill(0x7fffffff);
  const to = new Int32Array(items);
  const wrap = new Int32Array(items).fill(-1);
  for (let i = 0; i < count; i++) {
    const k = item[i];
    weight[k] = Math.max(weight[k], (view[i] >= 0 ? viewOffset[i] : 0) + bytes[i]);
    slots[k] = Math.max(slots[k], depth[i]);
    if (depth[i] >= 2 || initial[i] > 0) whole[k] = 1;
    from[k] = Math.min(from[k], writeAt[i]);
    to[k] = Math.max(to[k], writeAt[i], readAt[i]);
    wrap[k] = Math.max(wrap[k], wrapAt[i]);
  }
  for (let p = 0; p < pes; p++) {
    const last = length[p] - 1;
    for (let k = start[p]; k < start[p + 1]; k++) {
      weight[k] *= slots[k];
      if (whole[k]) {
        from[k] = -1;
        to[k] = last;
        wrap[k] = -1;
      } else if (wrap[k] >= 0 && wrap[k] >= from[k] - 1) {
        // Read next cycle at or after its write: live at every position.
        from[k] = 0;
        to[k] = last;
        wrap[k] = -1;
      } else if (wrap[k] >= 0) to[k] = last;
    }
  }
  return { start, length, item, buffer, weight, from, to, wrap };
}

/**
 * One PE's colouring and report (colours in `itemColor`, by item). Its own function, called once
 * per PE, so that V8 optimises it after a few PEs.
 */
function colorPe(p: number, capacity: number, items: MemoryItems, itemColor: Int32Array, coloring: ArcColoring, global: Int32Array): MemoryReport {
  const { start, weight, from, to, wrap } = items;
  const first = start[p];
  const last = start[p + 1];
  // Whole-cycle items take a colour each; the others are arcs for color.ts.
  let arcs = 0;
  let wholeBytes = 0;
  for (let k = first; k < last; k++) {
    if (from[k] < 0) wholeBytes += weight[k];
    else arcs++;
  }
  coloring.reserve(arcs);
  for (let k = first, a = 0; k < last; k++) {
    if (from[k] < 0) continue;
    coloring.from[a] = from[k];
    coloring.to[a] = to[k];
    coloring.wrap[a] = wrap[k];
    coloring.weight[a++] = weight[k];
  }
  coloring.colour(arcs, items.length[p]);
  // Colours numbered in the order of the items (by first buffer), whole-cycle ones included:
  // the arcs' colours come numbered by their first item, so each is new when first met.
  const number = coloring.color;
  let colors = 0;
  let seen = 0;
  for (let k = first, a = 0; k < last; k++) {
    if (from[k] < 0) itemColor[k] = colors++;
    else {
      const c = number[a++];
      // An arc colour met for the first time is the next one; an earlier one was numbered then.
      if (c === seen) {
        global[c] = colors++;
        seen++;
      }
      itemColor[k] = global[c];
    }
  }
  const sizes: number[] = new Array(colors).fill(0);
  for (let k = first; k < last; k++) if (weight[k] > sizes[itemColor[k]]) sizes[itemColor[k]] = weight[k];
  let after = 0;
  for (let c = 0; c < colors; c++) after += sizes[c];
  // `before` is summed over the buffers by the caller (a unit's members each count).
  return { before: 0, after, lowerBound: wholeBytes + coloring.clique, colorBytes: sizes, capacity };
}
