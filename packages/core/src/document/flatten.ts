import type { Diagnostic } from '../diagnostics.js';
import type { Stage } from './lower.js';
import type { ProjectDocument } from './types.js';

// Composite nodes -> their inner graphs (issue 20, in progress).

export function flattenComposites(doc: ProjectDocument, nodePaths: string[], edgePaths: string[], _out: Diagnostic[]): Stage | undefined {
  return { doc, nodePaths, edgePaths };
}
