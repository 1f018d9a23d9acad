import type { AppEdge, AppNode, CompositeDef, MappingTarget, WrittenDocument } from '@pipeloom/core';

// Where a graph is written. The document holds DFGs at three kinds of places: its own `app`,
// each of its `defs`, and the inline `graph` of a composite node inside either (any depth).
// Node and edge changes name the graph they edit with a `GraphAt`; the canvas names the graph
// it shows by the composite instances entered from the top (`level`, e.g. ['s1', 'inner']),
// which resolves to the GraphAt where that graph is written (a def shared by instances is one
// graph: editing inside s1 edits defs.stage, which s2 uses too).

export interface GraphAt {
  /** A def's graph; absent: the document's app graph. */
  def?: string;
  /** Then into the inline graph of each of these nodes in turn. */
  inline?: string[];
}

export const APP: GraphAt = {};

/** A graph as the editor reads it: nodes and edges, and for a composite its ports. */
export type Graph = { nodes: AppNode[]; edges: AppEdge[] } & Partial<Pick<CompositeDef, 'inputs' | 'outputs' | 'params'>>;

/** `app`, `defs.stage`, `app/s1/inner`: one string per graph (problem counts, React keys). */
export const graphKey = (at: GraphAt | undefined) => [at?.def === undefined ? 'app' : `defs.${at.def}`, ...(at?.inline ?? [])].join('/');

export const isApp = (at: GraphAt | undefined) => at?.def === undefined && !at?.inline?.length;

/** The graph written at `at`; undefined when it is not there (a stale level after an undo). */
export function graphAt(doc: WrittenDocument, at: GraphAt | undefined): Graph | undefined {
  let g: Graph | undefined = at?.def === undefined ? doc.app : doc.defs && Object.hasOwn(doc.defs, at.def) ? doc.defs[at.def] : undefined;
  for (const id of at?.inline ?? []) {
    const n: AppNode | undefined = g?.nodes.find((x) => x.id === id);
    g = n?.graph;
  }
  return g;
}

/** The document with the graph at `at` replaced by `fn` of it. */
export function withGraph(doc: WrittenDocument, at: GraphAt | undefined, fn: (g: Graph) => Graph): WrittenDocument {
  const inline = at?.inline ?? [];
  const step = (g: Graph, i: number): Graph => {
    if (i === inline.length) return fn(g);
    return { ...g, nodes: g.nodes.map((n) => (n.id === inline[i] && n.graph ? { ...n, graph: step(n.graph, i + 1) as CompositeDef } : n)) };
  };
  if (at?.def === undefined) return { ...doc, app: step(doc.app, 0) as WrittenDocument['app'] };
  const def = doc.defs?.[at.def];
  if (!def) return doc;
  return { ...doc, defs: { ...doc.defs, [at.def]: step(def, 0) as CompositeDef } };
}

/** The graph inside composite node `node` of the graph at `at`: its def's, or its inline graph. */
export function innerAt(at: GraphAt | undefined, node: AppNode): GraphAt | undefined {
  if (node.composite !== undefined) return { def: node.composite };
  if (node.graph) return { def: at?.def, inline: [...(at?.inline ?? []), node.id] };
  return undefined;
}

export const isComposite = (n: AppNode) => n.composite !== undefined || n.graph !== undefined;

/** The composite a node stands for (its def or its inline graph). */
export function compositeOf(doc: WrittenDocument, n: AppNode): CompositeDef | undefined {
  if (n.graph) return n.graph;
  if (n.composite !== undefined && doc.defs && Object.hasOwn(doc.defs, n.composite)) return doc.defs[n.composite];
  return undefined;
}

/** Resolves a canvas level (instance ids from the top) to where its graph is written; undefined when a step is not a composite. */
export function levelAt(doc: WrittenDocument, level: readonly string[]): GraphAt | undefined {
  let at: GraphAt | undefined = APP;
  for (const id of level) {
    const g: Graph | undefined = at && graphAt(doc, at);
    const n: AppNode | undefined = g?.nodes.find((x) => x.id === id);
    at = n ? innerAt(at, n) : undefined;
    if (!at) return undefined;
  }
  return at;
}

/** The longest leading part of `level` that still resolves (after an undo removed a composite). */
export function validLevel(doc: WrittenDocument, level: readonly string[]): string[] {
  for (let k = level.length; k > 0; k--) if (levelAt(doc, level.slice(0, k))) return level.slice(0, k);
  return [];
}

/** Flattened id prefix of a level: `s1/inner/` (empty at the top), as core's flatten names inner nodes. */
export const levelPrefix = (level: readonly string[]) => (level.length ? `${level.join('/')}/` : '');

/** The deepest composites nest (core MAX_COMPOSITE_DEPTH); a walk stops there, as flatten does. */
const MAX_DEPTH = 64;

/**
 * Every node of the flattened document as written, with its flattened id (`s1/inc`), the graph
 * it is written in and its instance path; composites are visited before their inner nodes.
 * Defs in a recursion (which validation reports) are not entered again.
 */
export function walkInstances(doc: WrittenDocument, visit: (n: AppNode, flatId: string, at: GraphAt, level: string[]) => void): void {
  const open: string[] = [];
  const walk = (g: Graph, at: GraphAt, level: string[], depth: number) => {
    for (const n of g.nodes) {
      const path = [...level, n.id];
      visit(n, path.join('/'), at, level);
      const inner = innerAt(at, n);
      const c = compositeOf(doc, n);
      if (!inner || !c || depth >= MAX_DEPTH || (n.composite !== undefined && open.includes(n.composite))) continue;
      if (n.composite !== undefined) open.push(n.composite);
      walk(c, inner, path, depth + 1);
      if (n.composite !== undefined) open.pop();
    }
  };
  walk(doc.app, APP, [], 0);
}

/** The node written for flattened id `flatId` (`s1/inc`: inc of the graph s1 instantiates); undefined when none. */
export function flatNode(doc: WrittenDocument, flatId: string): AppNode | undefined {
  let g: Graph | undefined = doc.app;
  let at: GraphAt | undefined = APP;
  let n: AppNode | undefined;
  for (const id of flatId.split('/')) {
    n = g?.nodes.find((x) => x.id === id);
    if (!n) return undefined;
    at = innerAt(at, n);
    g = at && graphAt(doc, at);
  }
  return n;
}

/** The flattened id prefixes under which the graph at `at` is instantiated (`''` for the app graph; `s1/`, `s2/` for a def used twice). */
export function instancePrefixes(doc: WrittenDocument, at: GraphAt | undefined): string[] {
  if (isApp(at)) return [''];
  const key = graphKey(at);
  const out: string[] = [];
  walkInstances(doc, (n, flatId, nAt) => {
    if (!isComposite(n)) return;
    const inner = innerAt(nAt, n);
    if (inner && graphKey(inner) === key) out.push(`${flatId}/`);
  });
  return out;
}

/** Mapping keys that name node `id` of a graph instantiated under `prefixes`, itself, its firings (`S#3`) or anything inside it (`s1/add`). */
export function mappingKeysOf(mapping: Record<string, MappingTarget>, prefixes: readonly string[], id: string): string[] {
  const out: string[] = [];
  for (const p of prefixes) {
    const base = `${p}${id}`;
    for (const k of Object.keys(mapping)) if (k === base || k.startsWith(`${base}/`) || k.startsWith(`${base}#`)) out.push(k);
  }
  return out;
}

/** The PE (or, for a node with tasks, the PEs) a flattened node runs on: its own entry, else the nearest enclosing composite's (core flatten's rule). */
export function effectivePe(mapping: Record<string, MappingTarget>, flatId: string): { pe?: MappingTarget; from?: string } {
  if (Object.hasOwn(mapping, flatId)) return { pe: mapping[flatId], from: flatId };
  for (let cut = flatId.lastIndexOf('/'); cut > 0; cut = flatId.lastIndexOf('/', cut - 1)) {
    const outer = flatId.slice(0, cut);
    if (Object.hasOwn(mapping, outer)) return { pe: mapping[outer], from: outer };
  }
  return {};
}

/** Names of params declared by the composites the graph at `at` is written in (a def's, and each inline graph's on the way). */
export function enclosingParams(doc: WrittenDocument, at: GraphAt | undefined): Set<string> {
  const out = new Set<string>();
  if (!at || isApp(at)) return out;
  for (let k = 0; k <= (at.inline?.length ?? 0); k++) {
    const g = graphAt(doc, { def: at.def, inline: at.inline?.slice(0, k) });
    for (const name of Object.keys(g?.params ?? {})) out.add(name);
  }
  return out;
}

/** The parameter names an expression written in the graph at `at` may read: its composites' and the document's. */
export function scopeNames(doc: WrittenDocument, at: GraphAt | undefined): Set<string> {
  const out = enclosingParams(doc, at);
  for (const name of Object.keys(doc.params ?? {})) out.add(name);
  return out;
}
