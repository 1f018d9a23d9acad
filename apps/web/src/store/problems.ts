import { useMemo } from 'react';
import { useCompile } from './compiler.js';
import { useProject } from './project.js';
import { selectionForDiagnostic } from '../document/selection.js';
import { graphKey, isApp } from '../document/graphs.js';
import type { Selection } from '../document/records.js';

/** The key a selection's problems are counted under: `node:p`, `pe:cpu@h0`; inside a composite `node:defs.stage:add`. */
export function problemKey(s: Selection): string {
  const inGraph = (s.kind === 'node' || s.kind === 'edge') && !isApp(s.at) ? `${graphKey(s.at)}:` : '';
  return s.kind === 'node'
    ? `node:${inGraph}${s.id}`
    : s.kind === 'pe'
      ? `pe:${s.id}`
      : s.kind === 'host'
        ? `host:${s.id}`
        : s.kind === 'mapping'
          ? `mapping:${s.node}`
          : s.kind === 'edge'
            ? `edge:${inGraph}${s.key}`
            : s.kind === 'link'
              ? `link:${s.key}`
              : s.kind === 'param'
                ? `param:${s.name}`
                : 'options';
}

/** Count of error diagnostics per selected element key (`problemKey`). */
export function useProblemCounts(): Map<string, number> {
  const diags = useCompile((s) => s.result?.diagnostics);
  const doc = useProject((s) => s.doc);
  return useMemo(() => {
    const m = new Map<string, number>();
    for (const d of diags ?? []) {
      if (d.severity !== 'error') continue;
      const s = selectionForDiagnostic(doc, d);
      if (!s) continue;
      const k = problemKey(s);
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return m;
  }, [diags, doc]);
}
