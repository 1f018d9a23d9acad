import type { Diagnostic } from '../diagnostics.js';
import type { Stage } from './lower.js';

// Delays and their initial values (issue 20, in progress): init nodes leave the graph, each
// delayed edge's `init` becomes an InitSpec.

export function prepareDelays(stage: Stage, _out: Diagnostic[]): Stage | undefined {
  return stage;
}
