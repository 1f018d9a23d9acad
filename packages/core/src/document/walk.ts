import type { AppNode, CompositeDef, ProjectDocument } from './types.js';

/** Every kernel node of a document as written: the top level, inline composites and defs, at any depth. */
export function kernelNodes(doc: Pick<ProjectDocument, 'app' | 'defs'>): AppNode[] {
  const out: AppNode[] = [];
  const seen = new Set<CompositeDef>();
  const visit = (nodes: readonly AppNode[] | undefined) => {
    for (const n of nodes ?? []) {
      if (n.kernel !== undefined) out.push(n);
      else if (n.graph && !seen.has(n.graph)) {
        seen.add(n.graph);
        visit(n.graph.nodes);
      }
    }
  };
  visit(doc.app?.nodes);
  for (const def of Object.values(doc.defs ?? {})) {
    if (!seen.has(def)) {
      seen.add(def);
      visit(def.nodes);
    }
  }
  return out;
}

/** The distinct kernel ids a document uses anywhere, in first-use order. */
export function kernelIds(doc: Pick<ProjectDocument, 'app' | 'defs'>): string[] {
  return [...new Set(kernelNodes(doc).map((n) => n.kernel!))];
}
