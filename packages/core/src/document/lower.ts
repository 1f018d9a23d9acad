import type { Diagnostic } from '../diagnostics.js';
import { hasErrors } from '../diagnostics.js';
import { prepareDelays } from './delays.js';
import { flattenComposites } from './flatten.js';
import { documentScope } from './params.js';
import { expandRates } from './rates.js';
import { expandScans, takeScanMappings } from './scan.js';
import { expandTasks } from './tasks.js';
import type { WrittenDocument } from './types.js';
import type { Lowered } from './stage.js';

// Lowering: the document as written -> the form the compiler reads. Each step is a module of
// its own and reads the previous one's output:
//   params.ts   the document's parameters evaluated (with the overrides), in dependency order
//   flatten.ts  composite nodes -> their inner graphs, ids `seg/open`, mapping expanded; each
//               node and edge has its expressions (params, rates, delays) replaced by numbers
//               (params.ts), read in the scope of the composite it is written in
//   delays.ts   init nodes leave the graph; each delayed edge's `init` becomes an InitSpec
//   tasks.ts    a node with `tasks: K` -> K shares `X[j]` and a combine `X` (generic.sum);
//               a mapping's PE lists -> one PE per node
//   rates.ts    port rates -> repetition vector -> one node per firing (`slice#3`), edges
//               between firings carrying token ranges, delays in whole iterations
//   scan.ts     scan nodes -> the operator's nodes per worker (`scan1/local.w3`, `scan1/ks.r2.w5`,
//               `scan1/prop.w3`), blocks and results as token ranges (their PE lists set aside
//               before tasks)
// The result is a ProjectDocument without composites, expressions, tasks or rates above 1 (types.ts
// "lowered form"), with, for every lowered node and edge, the path of what the user wrote, so
// every later diagnostic names the element as written.

export interface LowerOptions {
  /** Parameter values that replace the document's (`--param N=4`, the designer's panel). */
  params?: Record<string, number>;
}

/** Lowers a document that passed the shape check; `lowered` is absent when any step found an error. */
export function lowerDocument(doc: WrittenDocument, opts: LowerOptions = {}): { lowered?: Lowered; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  // Parameters and composites go together: each composite instance has a scope of its own, so
  // the flatten step substitutes every node and edge with the scope it is written in.
  const scope = documentScope(doc, opts.params ?? {}, diagnostics);
  const flat = flattenComposites(doc, diagnostics, scope);
  if (!flat || hasErrors(diagnostics)) return { diagnostics };
  const delayed = prepareDelays(flat, diagnostics);
  if (!delayed || hasErrors(diagnostics)) return { diagnostics };
  // Scan nodes' PE lists wait for the scan step (tasks allows lists only on nodes with tasks).
  const { stage: unscanned, scans } = takeScanMappings(delayed);
  const split = expandTasks(unscanned, diagnostics);
  if (!split || hasErrors(diagnostics)) return { diagnostics };
  const rated = expandRates(split.doc, split.nodePaths, split.edgePaths, diagnostics);
  if (!rated || hasErrors(diagnostics)) return { diagnostics };
  const expanded = expandScans(rated, scans, diagnostics);
  if (!expanded || hasErrors(diagnostics)) return { diagnostics };
  return { lowered: { ...expanded, params: Object.fromEntries(scope.values) }, diagnostics };
}

/** The paths of a document's own nodes and edges (`app.nodes[i]`, `app.edges[i]`). */
export function ownPaths(doc: WrittenDocument): { nodePaths: string[]; edgePaths: string[] } {
  return { nodePaths: doc.app.nodes.map((_, i) => `app.nodes[${i}]`), edgePaths: doc.app.edges.map((_, i) => `app.edges[${i}]`) };
}
