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
      out.push(
        error(
          `${at}.init`,
          `the initial tokens of this edge and of ${other} are read from one buffer of ${source}.${model.edges.fromPort[e]} on ${model.nodes[model.edges.to[e]].pe}, but their values differ (${describe(init[e]!, delay[e])} here, ${describe(init[f]!, delay[f])} there)`,
          'give both edges the same init (a source node init also needs the same delay), or map one consumer to another PE',
        ),
      );
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
 * (a slot is counted in its storage's slots: `programs.pes[p].slots[colour]`). A buffer's d
 * initial iterations fill d consecutive slots, ending just before the one its writer fills first,
 * tokens 0 .. d - 1 in slot order: one fill with a `count`, two where the range wraps round the
 * storage's slots. So a delay's size never makes work here, whatever it is.
 */
export function initialFills(model: Model, buffers: Buffers, table: BufferTable, lat: LatencyResult, programs: Programs): InitialFill[][] {
  const fills: InitialFill[][] = model.pes.map(() => []);
  const { delay, init } = model.edges;
  // Readers of one buffer agree on its tokens (markInitial): the first one's init describes them.
  const done = new Set<number>();
  for (let e = 0; e < delay.length; e++) {
    if (delay[e] === 0) continue;
    const b = table.read[e];
    if (done.has(b)) continue;
    done.add(b);
    const d = buffers.initial[b];
    const pe = table.pe[b];
    const slots = programs.pes[pe].slots[buffers.color[b]];
    const spec = init[e]!;
    // Iteration -j sits in slot (written - j) mod slots: token d - j, so token 0 (j = d) first.
    const first = (((lat.written[b] - d) % slots) + slots) % slots;
    const head = Math.min(d, slots - first);
    const range = (slot: number, count: number, token: number): InitialFill => {
      const fill: InitialFill = { buffer: buffers.id[b], slot };
      if (count > 1) fill.count = count;
      if ('value' in spec) fill.value = spec.value;
      else Object.assign(fill, { kernel: spec.kernel, params: spec.params, port: sourcePort(spec), token });
      return fill;
    };
    fills[pe].push(range(first, head, 0));
    if (head < d) fills[pe].push(range(0, d - head, head));
  }
  return fills;
}

/** The one output of an init's source kernel (delays.ts checked there is exactly one). */
function sourcePort(spec: Extract<InitSpec, { kernel: string }>): string {
  return specFor(findKernel(spec.kernel)!, spec.params).outputs[0].name;
}
