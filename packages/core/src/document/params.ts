import type { Diagnostic } from '../diagnostics.js';
import { ownPaths, type Stage } from './lower.js';
import type { ProjectDocument } from './types.js';

// Parameters and expressions (issue 20, in progress): the document as written still passes
// through unchanged here; params.ts is being written.

export function resolveParams(doc: ProjectDocument, _overrides: Record<string, number>, _out: Diagnostic[]): (Stage & { params: Record<string, number> }) | undefined {
  return { doc, ...ownPaths(doc), params: {} };
}
