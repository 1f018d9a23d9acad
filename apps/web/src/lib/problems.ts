import { useMemo } from 'react';
import { useCompile } from '../worker/client.js';
import { useProject } from '../store/project.js';
import { selectionForDiagnostic } from '../store/selection.js';

/** Count of error diagnostics per selected element key (`node:p`, `pe:cpu@h0`, ...). */
export function useProblemCounts(): Map<string, number> {
  const diags = useCompile((s) => s.result?.diagnostics);
  const doc = useProject((s) => s.doc);
  return useMemo(() => {
    const m = new Map<string, number>();
    for (const d of diags ?? []) {
      if (d.severity !== 'error') continue;
      const s = selectionForDiagnostic(doc, d);
      if (!s) continue;
      const k = s.kind === 'node' ? `node:${s.id}` : s.kind === 'pe' ? `pe:${s.id}` : s.kind === 'host' ? `host:${s.id}` : s.kind === 'mapping' ? `mapping:${s.node}` : s.kind === 'edge' ? `edge:${s.key}` : s.kind === 'link' ? `link:${s.key}` : 'options';
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return m;
  }, [diags, doc]);
}
