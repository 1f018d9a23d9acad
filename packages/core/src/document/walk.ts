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

/**
 * How much of a diagnostic's path (`app.edges[3].toTokens.of`) the document as written holds:
 * `at`, the longest prefix it walks (keys, the longest that fits as ids may hold dots; indices
 * in range; a last key missing from an object that is there counts, a missing field being named
 * by its path), and `rest`, what lowering derived below it ('' when the whole path is written).
 */
export function writtenPrefix(doc: unknown, path: string): { at: string; rest: string } {
  let node: unknown = doc;
  let i = 0;
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  while (i < path.length) {
    const rest = path.slice(i);
    const index = /^\[(\d+)\]/.exec(rest);
    if (index) {
      if (!Array.isArray(node) || Number(index[1]) >= node.length) break;
      node = node[Number(index[1])];
      i += index[0].length;
      continue;
    }
    const dot = rest.startsWith('.') && i > 0 ? 1 : 0;
    const tail = rest.slice(dot);
    if (!isObject(node)) break;
    const o = node;
    // The longest key ending where the tail ends or at one of its separators (a lookup each, not a scan of the object's keys).
    let key: string | undefined;
    for (let end = tail.length; end > 0 && key === undefined; end--)
      if ((end === tail.length || tail[end] === '.' || tail[end] === '[') && Object.hasOwn(o, tail.slice(0, end))) key = tail.slice(0, end);
    if (key === undefined) {
      if (!/[.[]/.test(tail)) i = path.length;
      break;
    }
    node = o[key];
    i += dot + key.length;
  }
  return { at: path.slice(0, i), rest: path.slice(i).replace(/^\./, '') };
}
