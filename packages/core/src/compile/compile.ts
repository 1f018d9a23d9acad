import { error, warning, type Diagnostic } from '../diagnostics.js';
import type { Model, ModelNode } from '../document/model.js';
import { analyze } from '../document/validate.js';
import { formatBytes } from '../util/units.js';
import { insertBuffers } from './buffers.js';
import { assignDepth, MAX_DEPTH } from './depth.js';
import { computeLatency, type LoopProblem } from './latency.js';
import { initialFills, markInitial } from './initial.js';
import { colorMemory } from './memory.js';
import { planPhases } from './phases.js';
import { buildPrograms } from './programs.js';
import { Router } from './route.js';
import { schedule } from './schedule.js';
import { layoutJoins, reportJoins } from './views.js';
import type { NodeId } from '../ids.js';
import type { BufferTable } from './table.js';
import type { Buffers, CompileResult, ImplementationGraph } from './types.js';

export interface CompileOptions {
  /** Overrides the document's options.overlap. */
  overlap?: boolean;
  /** Values replacing the document's params (`--param N=4`, the designer's parameter panel). */
  params?: Record<string, number>;
}

/**
 * Project document -> implementation graph and per-PE programs (paper 4.2-4.3). Never throws
 * for a user mistake: an invalid document gives `{ ok: false, diagnostics }`.
 */
export function compile(doc: unknown, opts: CompileOptions = {}): CompileResult {
  const { diagnostics, model } = analyze(doc, { params: opts.params });
  if (!model) return { ok: false, diagnostics };
  return compileModel(model, opts.overlap ?? model.doc.options.overlap, diagnostics);
}

/** The passes in order, on a validated model. */
export function compileModel(model: Model, overlap: boolean, diagnostics: Diagnostic[] = [], router = new Router(model)): CompileResult {
  const { schedule: order_, order, nodes } = schedule(model);
  const { buffers, links, table } = insertBuffers(model, nodes, router);
  const initial = markInitial(model, buffers, table);
  assignDepth(buffers, overlap);
  const plan = planPhases(model, nodes, buffers, table, overlap, links);
  const lat = computeLatency(model, nodes, buffers, table, plan, overlap);
  if (initial.length || lat.loops.length) return { ok: false, diagnostics: [...diagnostics, ...initial, ...loopDiagnostics(model, lat.loops, overlap)] };
  const joins = layoutJoins(model, nodes, buffers, table, lat);
  const memory = colorMemory(model, nodes, buffers, table, plan, lat, overlap);
  reportJoins(model, joins, memory);
  const programs = buildPrograms(model, nodes, buffers, table, plan, lat, memory);
  if (model.edges.delay.some((d) => d > 0)) programs.initial = initialFills(model, buffers, table, lat, programs);

  const problems = [...diagnostics, ...checkCapacity(model, order, buffers, memory), ...deepDelays(model, buffers, table)];
  if (problems.some((d) => d.severity === 'error')) return { ok: false, diagnostics: problems };
  let fillCycles = 0;
  for (let i = 0; i < order.length; i++) fillCycles = Math.max(fillCycles, lat.start[i] + 1);
  const ig: ImplementationGraph = { overlap, schedule: order_, order, buffers, latency: lat.latency, memory, programs, fillCycles, phases: plan.names };
  // Only a scan's firing has phases without a cluster-wide barrier; other IGs keep their shape.
  if (plan.barrier.some((b) => !b)) ig.phaseBarriers = plan.barrier;
  const scans = scanFirings(nodes);
  if (scans) ig.scans = scans;
  return { ok: true, ig, diagnostics: problems };
}

/** Each scan's expanded nodes, as schedule positions by level (undefined without scans). */
function scanFirings(nodes: readonly ModelNode[]): ImplementationGraph['scans'] {
  let out: NonNullable<ImplementationGraph['scans']> | undefined;
  nodes.forEach((n, s) => {
    if (!n.scan) return;
    out ??= {};
    const levels = (out[n.scan.node] ??= Array.from({ length: n.scan.levels }, () => []));
    levels[n.scan.level].push(s);
  });
  return out;
}

/**
 * A loop whose data takes longer round than its delay cannot fire once per cycle: named with
 * the path round (the consumer of the delayed edge back to its producer) and the delay it needs.
 */
function loopDiagnostics(model: Model, loops: LoopProblem[], overlap: boolean): Diagnostic[] {
  // One message per edge as written: a split node's K shares make K loops through one edge, and
  // the user needs the worst of them (the delay it needs), not K near-copies.
  const worst = new Map<string, { loop: LoopProblem; count: number }>();
  for (const loop of loops) {
    const at = model.lowered.edgePaths[loop.edge] ?? `app.edges[${loop.edge}]`;
    const seen = worst.get(at);
    if (!seen) worst.set(at, { loop, count: 1 });
    else worst.set(at, { loop: loop.cycles > seen.loop.cycles ? loop : seen.loop, count: seen.count + 1 });
  }
  return [...worst.values()].map(({ loop: { edge, cycles }, count }) => {
    const { edges } = model;
    const at = model.lowered.edgePaths[edge] ?? `app.edges[${edge}]`;
    const round = loopPath(model, edges.to[edge], edges.from[edge]);
    const names = [...round.map((i) => model.nodes[i].id), model.nodes[edges.to[edge]].id];
    const pes = [...new Set(round.map((i) => model.nodes[i].pe))];
    const d = edges.delay[edge];
    // The document writes a delay in tokens: an iteration is T of them (a multi-rate edge's).
    const written = model.doc.app.edges[edge];
    const producer = model.doc.app.nodes[edges.from[edge]];
    const T = (producer.firing?.of ?? 1) * (written.fromTokens?.of ?? Number(producer.rates?.[edges.fromPort[edge]] ?? 1));
    const need = T === 1 ? `${cycles}` : `${cycles * T} (${cycles} iterations of ${T} tokens)`;
    return error(
      `${at}.delay`,
      `the loop ${names.join(' -> ')} carries ${d} iteration${d === 1 ? '' : 's'} of initial tokens, but its data takes ${cycles} cycles to go round on ${pes.join(', ')}${overlap ? ' with overlap' : ''}: every node fires once per cycle, so a loop needs at least as many iterations of delay as cycles round${count > 1 ? ` (the longest of ${count} loops through this edge)` : ''}`,
      `raise the delay to ${need}, map the loop's nodes onto one PE${overlap ? ', or turn overlap off' : ''}`,
    );
  });
}

/** Node indices on a path from `from` to `to` along edges without a delay (both ends included; [from] when none is found). */
function loopPath(model: Model, from: number, to: number): number[] {
  const { edges } = model;
  const back = new Map<number, number>([[from, -1]]);
  const queue = [from];
  for (let q = 0; q < queue.length && !back.has(to); q++) {
    const a = queue[q];
    for (let k = model.outputs.start[a]; k < model.outputs.start[a + 1]; k++) {
      const e = model.outputs.edge[k];
      if (edges.delay[e] > 0 || back.has(edges.to[e])) continue;
      back.set(edges.to[e], a);
      queue.push(edges.to[e]);
    }
  }
  if (!back.has(to)) return [from];
  const path: number[] = [];
  for (let x = to; x >= 0; x = back.get(x)!) path.push(x);
  return path.reverse();
}

/**
 * Static mode keeps a delay's initial iterations in the slots of the buffer its consumer reads,
 * and agents take at most MAX_DEPTH slots per buffer (one SharedArrayBuffer or
 * GPUBuffer each): a deeper one compiles, but its static run is refused at deploy. Said here, at
 * the edge as written, with the delay that fits and the mode that needs no slots for it.
 */
function deepDelays(model: Model, buffers: Buffers, table: BufferTable): Diagnostic[] {
  if (model.doc.options.mode === 'taskbag') return [];
  const maxDepth = MAX_DEPTH;
  const out = new Map<string, Diagnostic>();
  const { delay } = model.edges;
  for (let e = 0; e < delay.length; e++) {
    const b = table.read[e];
    if (delay[e] === 0 || buffers.depth[b] <= maxDepth) continue;
    const at = `${model.lowered.edgePaths[e] ?? `app.edges[${e}]`}.delay`;
    if (out.has(at)) continue;
    // The slots beyond the delay are the cycles its data takes to arrive: the same at any delay.
    const fits = maxDepth - (buffers.depth[b] - buffers.initial[b]);
    out.set(
      at,
      warning(
        at,
        `static mode keeps this edge's ${delay[e]} iterations of initial tokens in ${buffers.depth[b]} slots of buffer ${buffers.id[b]} on ${model.pes[buffers.pe[b]].id}; agents hold at most ${maxDepth} slots per buffer, so they refuse a static run of it`,
        `run it in task-bag mode ("mode": "taskbag" in options, or --mode taskbag), which keeps no slots for initial tokens${fits > 0 ? `, or lower the delay to at most ${fits} iterations` : ''}`,
      ),
    );
  }
  return [...out.values()];
}

function checkCapacity(model: Model, order: NodeId[], buffers: Buffers, memory: ImplementationGraph['memory']): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (let i = 0; i < buffers.count; i++) {
    const pe = model.pes[buffers.pe[i]];
    const size = buffers.bytes[i] * buffers.depth[i];
    if (size > pe.memory) {
      out.push(
        error(
          pe.path,
          `buffer ${buffers.id[i]} (${formatBytes(size)}) exceeds memory of ${pe.id} (${formatBytes(pe.memory)})`,
          `raise the memory of ${pe.id}, shrink the data of "${order[buffers.source[i]]}", or map its readers elsewhere`,
        ),
      );
    }
  }
  for (const pe of model.pes) {
    const m = memory[pe.id];
    if (m.after > pe.memory && !out.some((d) => d.path === pe.path && d.message.includes(` of ${pe.id} `))) {
      out.push(
        error(
          pe.path,
          `buffers on ${pe.id} need ${formatBytes(m.after)} after sharing, more than its memory (${formatBytes(pe.memory)})`,
          `raise the memory of ${pe.id} or map some nodes elsewhere`,
        ),
      );
    }
  }
  // CPU PEs of one host share its memory: the sum over them, each after its own sharing.
  const hosts = new Map<string, { shared: NonNullable<Model['pes'][number]['shared']>; pes: Model['pes'] }>();
  for (const pe of model.pes) {
    if (!pe.shared) continue;
    const h = hosts.get(pe.host) ?? { shared: pe.shared, pes: [] };
    h.pes.push(pe);
    hosts.set(pe.host, h);
  }
  for (const [host, { shared, pes }] of hosts) {
    const total = pes.reduce((sum, pe) => sum + memory[pe.id].after, 0);
    if (total <= shared.bytes || pes.some((pe) => out.some((d) => d.path === pe.path))) continue;
    const most = pes.filter((pe) => memory[pe.id].after > 0).sort((a, b) => memory[b.id].after - memory[a.id].after);
    const parts = most.slice(0, 4).map((pe) => `${pe.id} ${formatBytes(memory[pe.id].after)}`);
    out.push(
      error(
        shared.path,
        `the CPU PEs of host "${host}" share its memory (${formatBytes(shared.bytes)}), and their buffers need ${formatBytes(total)} after sharing (${parts.join(', ')}${most.length > 4 ? `, and ${most.length - 4} more` : ''})`,
        `raise cpuMemory of host "${host}" or map some nodes to another host`,
      ),
    );
  }
  return out;
}
