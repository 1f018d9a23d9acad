import type { Diagnostic } from '../diagnostics.js';
import type { ProjectDocument } from './types.js';

// Port rates -> repetition vector -> one node per firing (issue 20, in progress).

export function expandRates(doc: ProjectDocument, nodePaths: string[], edgePaths: string[], _out: Diagnostic[]): { doc: ProjectDocument; nodePaths: string[]; edgePaths: string[]; repetitions: Record<string, number> } | undefined {
  return { doc, nodePaths, edgePaths, repetitions: Object.fromEntries(doc.app.nodes.map((n) => [n.id, 1])) };
}
