import { findKernel, specFor } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import type { Model } from '../document/model.js';
import type { InitSpec } from '../document/types.js';
import type { LatencyResult } from './latency.js';
import type { BufferTable } from './table.js';
import type { Buffers, InitialFill, Programs } from './types.js';

// Initial tokens (delays): where they live and what the agents put there before the run.
// A delayed edge's consumer reads, in its first d firings, what its producer's iterations
// -d .. -1 would have written into the buffer it reads. Those slots are filled before cycle
// 0: slot (written - j) mod depth holds iteration -j, which the consumer of a delay-d edge
// reads as initial token d - j. The buffer keeps its slots to itself (the memory pass gives it
// a colour of its own), and the latency pass gives it at least d slots (the d initial
// iterations are held at once) and lag + 1 (no write reaches a filled slot before its read).

/**
 * Marks every buffer a delayed edge reads with the iterations of initial tokens it holds
 * (`buffers.initial`), before the latency pass. Readers of one buffer share its filled slots,
 * so their initial tokens must agree: one constant, or one source node at one delay.
 */
export function markInitial(model: Model, buffers: Buffers, table: BufferTable): Diagnostic[] {
  const { delay, init } = model.edges;
  const out: Diagnostic[] = [];
  // The first delayed edge reading each buffer: what the others must agree with.
  const first = new Map<number, number>();
  for (let e = 0; e < delay.length; e++) {
    if (delay[e] === 0) continue;
    const b = table.read[e];
    buffers.initial[b] = Math.max(buffers.initial[b], delay[e]);
    const f = first.get(b);
    if (f === undefined) {
      first.set(b, e);
      continue;
    }
    if (!agree(init[f]!, delay[f], init[e]!, delay[e])) {
      const at = model.lowered.edgePaths[e] ?? `app.edges[${e}]`;
      const other = model.lowered.edgePaths[f] ?? `app.edges[${f}]`;
      const source = model.nodes[model.edges.from[e]].id;
      out.push(error(`${at}.init`, `the initial tokens of this edge and of ${other} are read from one buffer of ${source}.${model.edges.fromPort[e]} on ${model.nodes[model.edges.to[e]].pe}, but their values differ (${describe(init[e]!, delay[e])} here, ${describe(init[f]!, delay[f])} there)`, 'give both edges the same init (a source node init also needs the same delay), or map one consumer to another PE'));
    }
  }
  return out;
}

function agree(a: InitSpec, da: number, b: InitSpec, db: number): boolean {
  if ('value' in a || 'value' in b) return 'value' in a && 'value' in b && a.value === b.value;
  return da === db && a.kernel === b.kernel && JSON.stringify(a.params) === JSON.stringify(b.params);
}

const describe = (i: InitSpec, d: number) => ('value' in i ? `the constant ${i.value}` : `node "${i.node}" at delay ${d}`);

/**
 * Per PE (architecture order), the slots to fill before the run, after the programs are built
 * (a slot is counted in its storage's slots: `programs.pes[p].slots[colour]`).
 */
export function initialFills(model: Model, buffers: Buffers, table: BufferTable, lat: LatencyResult, programs: Programs): InitialFill[][] {
  const fills: InitialFill[][] = model.pes.map(() => []);
  const { delay, init } = model.edges;
  const done = new Set<string>();
  for (let e = 0; e < delay.length; e++) {
    const d = delay[e];
    if (d === 0) continue;
    const b = table.read[e];
    const pe = table.pe[b];
    const slots = programs.pes[pe].slots[buffers.color[b]];
    const spec = init[e]!;
    for (let j = 1; j <= d; j++) {
      const slot = (((lat.written[b] - j) % slots) + slots) % slots;
      const key = `${b}/${slot}`;
      if (done.has(key)) continue;
      done.add(key);
      const fill: InitialFill = { buffer: buffers.id[b], slot };
      if ('value' in spec) fill.value = spec.value;
      else Object.assign(fill, { kernel: spec.kernel, params: spec.params, port: sourcePort(spec), token: d - j });
      fills[pe].push(fill);
    }
  }
  return fills;
}

/** The one output of an init's source kernel (delays.ts checked there is exactly one). */
function sourcePort(spec: Extract<InitSpec, { kernel: string }>): string {
  return specFor(findKernel(spec.kernel)!, spec.params).outputs[0].name;
}
