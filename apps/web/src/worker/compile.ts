import { predict } from '@pipeloom/core';
import type { ProjectDocument } from '@pipeloom/core/document/types';
import type { ImplementationGraph } from '@pipeloom/core/compile/types';
import { layoutIg } from '../ig/layout.js';
import type { CompileOutput, Strategy } from './protocol.js';

// Compiles and predicts a document under both strategies and lays each IG out. A plain
// function: the worker exposes it, tests call it directly.

export async function compileBoth(doc: ProjectDocument, now: () => number = () => performance.now()): Promise<CompileOutput> {
  const t0 = now();
  // predict() validates once and compiles both strategies (paper 4.3) before timing them.
  const r = predict(doc);
  const compileMs = now() - t0;
  if (!r.ok) return { diagnostics: r.diagnostics, overlap: null, noOverlap: null, prediction: null, compileMs, ms: now() - t0 };
  const order = doc.arch.pes.map((p) => p.id);
  const lay = async (ig: ImplementationGraph): Promise<Strategy> => ({ ig, layout: await layoutIg(ig, doc.mapping, order) });
  const [overlap, noOverlap] = await Promise.all([lay(r.prediction.overlap.ig), lay(r.prediction.noOverlap.ig)]);
  return { diagnostics: r.diagnostics, overlap, noOverlap, prediction: r.prediction, compileMs, ms: now() - t0 };
}
