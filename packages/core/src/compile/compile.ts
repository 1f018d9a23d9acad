import { error, type Diagnostic } from '../diagnostics.js';
import type { Model } from '../document/model.js';
import { analyze } from '../document/validate.js';
import { formatBytes } from '../util/units.js';
import { insertBuffers } from './buffers.js';
import { assignDepth } from './depth.js';
import { computeLatency } from './latency.js';
import { colorMemory } from './memory.js';
import { planPhases } from './phases.js';
import { buildPrograms } from './programs.js';
import { Router } from './route.js';
import { schedule } from './schedule.js';
import type { NodeId } from '../ids.js';
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
  assignDepth(buffers, overlap);
  const plan = planPhases(model, buffers, table, overlap, links);
  const lat = computeLatency(model, nodes, buffers, table, plan, overlap);
  const memory = colorMemory(model, nodes, buffers, table, plan, lat, overlap);
  const programs = buildPrograms(model, nodes, buffers, table, plan, lat, memory);

  const problems = [...diagnostics, ...checkCapacity(model, order, buffers, memory)];
  if (problems.some((d) => d.severity === 'error')) return { ok: false, diagnostics: problems };
  let fillCycles = 0;
  for (let i = 0; i < order.length; i++) fillCycles = Math.max(fillCycles, lat.start[i] + 1);
  const ig: ImplementationGraph = { overlap, schedule: order_, order, buffers, latency: lat.latency, memory, programs, fillCycles, phases: plan.names };
  return { ok: true, ig, diagnostics: problems };
}

function checkCapacity(model: Model, order: NodeId[], buffers: Buffers, memory: ImplementationGraph['memory']): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (let i = 0; i < buffers.count; i++) {
    const pe = model.pes[buffers.pe[i]];
    const size = buffers.bytes[i] * buffers.depth[i];
    if (size > pe.memory) {
      out.push(error(pe.path, `buffer ${buffers.id[i]} (${formatBytes(size)}) exceeds memory of ${pe.id} (${formatBytes(pe.memory)})`, `raise the memory of ${pe.id}, shrink the data of "${order[buffers.source[i]]}", or map its readers elsewhere`));
    }
  }
  for (const pe of model.pes) {
    const m = memory[pe.id];
    if (m.after > pe.memory && !out.some((d) => d.path === pe.path && d.message.includes(` of ${pe.id} `))) {
      out.push(error(pe.path, `buffers on ${pe.id} need ${formatBytes(m.after)} after sharing, more than its memory (${formatBytes(pe.memory)})`, `raise the memory of ${pe.id} or map some nodes elsewhere`));
    }
  }
  return out;
}
