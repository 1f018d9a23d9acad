import type {
  AppEdge,
  AppNode,
  CompositeDef,
  DocumentParams,
  Expr,
  Host,
  Link,
  MappingTarget,
  ParamDef,
  ProcessingElement,
  WrittenDocument,
  DocumentOptions,
} from '@pipeloom/core';
import { edgeKey, linkKey, type EdgeKey, type LinkKey } from './records.js';
import { graphAt, graphKey, instancePrefixes, isApp, mappingKeysOf, withGraph, type Graph, type GraphAt } from './graphs.js';
import { renamePes, withoutPes } from './targets.js';

// Every edit is a plain-data change object. The store applies it, records its inverse for
// undo, and the same object could be validated or sent elsewhere. Primitive changes touch one
// record; removals that cascade (a node takes its edges and mapping entry with it) are
// expanded into primitives first, so every primitive has a one-record inverse.
//
// Node and edge changes name the graph they edit (`at`, document/graphs.ts): the app graph when
// absent, else a def's or an inline composite's. A node's mapping entries are found through
// every instance of that graph (`s1/inc` and `s2/inc` for a node of a def used twice).

type Pos = { x: number; y: number };

/** Composite ports: what `graph/ports` sets. */
export type Bindings = Pick<CompositeDef, 'inputs' | 'outputs'>;

export type Change =
  | { type: 'node/add'; node: AppNode; index?: number; at?: GraphAt }
  | { type: 'node/remove'; id: string; at?: GraphAt }
  /**
   * `null` removes the field (params, rates; collapsed back to the default, drawn collapsed).
   * Removing `tasks` also turns the node's PE lists back to their first PE (expand).
   */
  | {
      type: 'node/update';
      id: string;
      at?: GraphAt;
      kernel?: string;
      params?: AppNode['params'] | null;
      rates?: AppNode['rates'] | null;
      collapsed?: boolean | null;
      requires?: AppNode['requires'] | null;
      tasks?: AppNode['tasks'] | null;
    }
  | { type: 'node/move'; id: string; position: Pos; at?: GraphAt }
  | { type: 'node/rename'; id: string; to: string; at?: GraphAt }
  | { type: 'edge/add'; edge: AppEdge; index?: number; at?: GraphAt }
  | { type: 'edge/remove'; key: EdgeKey; at?: GraphAt }
  /** A DFG edge's delay (initial tokens) and their init values; `null` removes the field. */
  | { type: 'edge/update'; key: EdgeKey; at?: GraphAt; delay?: AppEdge['delay'] | null; init?: AppEdge['init'] | null }
  /** A composite's (def's or inline graph's) input and output bindings, each replaced whole when given. */
  | { type: 'graph/ports'; at: GraphAt; inputs?: Bindings['inputs'] | null; outputs?: Bindings['outputs'] | null }
  /** A document parameter set (added at `index` of the params' order when new) or removed (`null`). */
  | { type: 'param/set'; name: string; value: Expr | ParamDef | null; index?: number }
  | { type: 'host/add'; host: Host; index?: number }
  | { type: 'host/remove'; id: string }
  | { type: 'host/update'; id: string; patch: Partial<Omit<Host, 'id'>> }
  | { type: 'host/move'; id: string; position: Pos }
  | { type: 'host/rename'; id: string; to: string }
  | { type: 'pe/add'; pe: ProcessingElement; index?: number }
  | { type: 'pe/remove'; id: string }
  | { type: 'pe/update'; id: string; patch: Partial<Omit<ProcessingElement, 'id' | 'host'>> }
  | { type: 'pe/move'; id: string; position: Pos }
  | { type: 'pe/rename'; id: string; to: string }
  | { type: 'link/add'; link: Link; index?: number }
  | { type: 'link/remove'; key: LinkKey }
  | { type: 'link/update'; key: LinkKey; patch: Partial<Omit<Link, 'a' | 'b'>> }
  /** A node's entry: one PE, a list of PEs (a node with tasks), or none (`null`). */
  | { type: 'mapping/set'; node: string; pe: MappingTarget | null }
  | { type: 'options/update'; patch: Partial<DocumentOptions> }
  | { type: 'doc/update'; patch: { name?: string; description?: string } };

/** A change that names a record the document does not hold: a programming error in the caller. */
export class ChangeError extends Error {
  constructor(change: Change, why: string) {
    super(`${change.type}: ${why}`);
    this.name = 'ChangeError';
  }
}

/** Turns cascading removals into primitives, in an order whose inverse restores everything. */
export function expand(doc: WrittenDocument, c: Change): Change[] {
  switch (c.type) {
    case 'node/remove': {
      const g = graphAt(doc, c.at);
      if (!g) return [c];
      const edges = g.edges.filter((e) => e.from.node === c.id || e.to.node === c.id);
      const out: Change[] = edges.map((e) => ({ type: 'edge/remove', key: edgeKey(e), ...(c.at ? { at: c.at } : {}) }));
      // Inside a composite, the bindings naming the node go with it.
      const ports = c.at && !isApp(c.at) ? unbind(g, c.id) : undefined;
      if (ports) out.push({ type: 'graph/ports', at: c.at!, ...ports });
      for (const k of mappingKeysOf(doc.mapping, instancePrefixes(doc, c.at), c.id)) out.push({ type: 'mapping/set', node: k, pe: null });
      out.push(c);
      return out;
    }
    case 'node/update': {
      // Without tasks a node may not name a list (core refuses it): each instance's list goes
      // back to its first PE, which also ran the combine.
      if (c.tasks !== null) return [c];
      const out: Change[] = [c];
      for (const p of instancePrefixes(doc, c.at)) {
        const t = Object.hasOwn(doc.mapping, `${p}${c.id}`) ? doc.mapping[`${p}${c.id}`] : undefined;
        if (Array.isArray(t) && t.length) out.push({ type: 'mapping/set', node: `${p}${c.id}`, pe: t[0] });
      }
      return out;
    }
    case 'pe/remove': {
      const out: Change[] = [];
      for (const l of doc.arch.links) if (l.a === c.id || l.b === c.id) out.push({ type: 'link/remove', key: linkKey(l) });
      // A list keeps its other PEs; an entry left with none goes.
      for (const [node, t] of Object.entries(doc.mapping)) {
        const left = withoutPes(t, new Set([c.id]));
        if (left !== undefined) out.push({ type: 'mapping/set', node, pe: left });
      }
      out.push(c);
      return out;
    }
    case 'host/remove': {
      // Links between two PEs of the host are removed once, not once per end.
      const pes = new Set(doc.arch.pes.filter((p) => p.host === c.id).map((p) => p.id));
      const out: Change[] = [];
      for (const l of doc.arch.links) if (pes.has(l.a) || pes.has(l.b)) out.push({ type: 'link/remove', key: linkKey(l) });
      for (const [node, t] of Object.entries(doc.mapping)) {
        const left = withoutPes(t, pes);
        if (left !== undefined) out.push({ type: 'mapping/set', node, pe: left });
      }
      for (const id of pes) out.push({ type: 'pe/remove', id });
      out.push(c);
      return out;
    }
    default:
      return [c];
  }
}

/** A composite's bindings without those naming inner node `id` (an input left binding nothing is dropped); undefined when none named it. */
function unbind(g: Graph, id: string): Bindings | undefined {
  const names = (g.inputs ?? []).some((i) => i.to.some((t) => t.node === id)) || (g.outputs ?? []).some((o) => o.from.node === id);
  if (!names) return undefined;
  return {
    inputs: (g.inputs ?? []).map((i) => ({ ...i, to: i.to.filter((t) => t.node !== id) })).filter((i) => i.to.length),
    outputs: (g.outputs ?? []).filter((o) => o.from.node !== id),
  };
}

const insert = <T>(list: T[], item: T, index?: number) => {
  const out = list.slice();
  out.splice(index === undefined || index < 0 || index > out.length ? out.length : index, 0, item);
  return out;
};

const replaceAt = <T>(list: T[], i: number, item: T) => list.map((x, j) => (j === i ? item : x));

function indexOrThrow<T>(list: T[], pred: (x: T) => boolean, c: Change, what: string): number {
  const i = list.findIndex(pred);
  if (i < 0) throw new ChangeError(c, `no ${what}`);
  return i;
}

/** `{ at }` when the change names a graph, so inverses name the same one and app-graph changes stay as written. */
const atOf = (c: { at?: GraphAt }) => (c.at ? { at: c.at } : {});

function graphOrThrow(doc: WrittenDocument, c: Change & { at?: GraphAt }): Graph {
  const g = graphAt(doc, c.at);
  if (!g) throw new ChangeError(c, `no graph ${graphKey(c.at)}`);
  return g;
}
const withArch = (d: WrittenDocument, arch: Partial<WrittenDocument['arch']>): WrittenDocument => ({ ...d, arch: { ...d.arch, ...arch } });

function pick<T extends object>(obj: T, keys: string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = (obj as Record<string, unknown>)[k];
  return out as Partial<T>;
}

/** Applies one primitive change; returns the new document and the changes that undo it. */
export function applyPrimitive(doc: WrittenDocument, c: Change): { doc: WrittenDocument; inverse: Change[] } {
  switch (c.type) {
    case 'node/add': {
      const g = graphOrThrow(doc, c);
      if (g.nodes.some((n) => n.id === c.node.id)) throw new ChangeError(c, `node "${c.node.id}" exists`);
      return {
        doc: withGraph(doc, c.at, (x) => ({ ...x, nodes: insert(x.nodes, c.node, c.index) })),
        inverse: [{ type: 'node/remove', id: c.node.id, ...atOf(c) }],
      };
    }
    case 'node/remove': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      return {
        doc: withGraph(doc, c.at, (x) => ({ ...x, nodes: x.nodes.filter((_, j) => j !== i) })),
        inverse: [{ type: 'node/add', node: g.nodes[i], index: i, ...atOf(c) }],
      };
    }
    case 'node/update': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      const old = g.nodes[i];
      const next: AppNode = { ...old };
      const inverse: Change = { type: 'node/update', id: c.id, ...atOf(c) };
      if (c.kernel !== undefined) {
        next.kernel = c.kernel;
        inverse.kernel = old.kernel;
      }
      patchFields(next, old, c, inverse, ['params', 'rates', 'collapsed', 'requires', 'tasks']);
      return { doc: withGraph(doc, c.at, (x) => ({ ...x, nodes: replaceAt(x.nodes, i, next) })), inverse: [inverse] };
    }
    case 'node/move': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      const old = g.nodes[i];
      return {
        doc: withGraph(doc, c.at, (x) => ({ ...x, nodes: replaceAt(x.nodes, i, { ...old, position: c.position }) })),
        inverse: [{ type: 'node/move', id: c.id, position: old.position ?? { x: 0, y: 0 }, ...atOf(c) }],
      };
    }
    case 'node/rename': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      if (g.nodes.some((n) => n.id === c.to)) throw new ChangeError(c, `node "${c.to}" exists`);
      const r = (id: string) => (id === c.id ? c.to : id);
      const ref = <T extends { node: string }>(p: T): T => ({ ...p, node: r(p.node) });
      // Mapping entries of every instance: `s1/inc` -> `s1/inc2`, firings `S#3` and inner `s1/add` alike.
      const prefixes = instancePrefixes(doc, c.at);
      const renamed = new Map<string, string>();
      for (const k of mappingKeysOf(doc.mapping, prefixes, c.id)) {
        const p = prefixes.find((x) => k.startsWith(`${x}${c.id}`) && /^($|[/#])/.test(k.slice(x.length + c.id.length)))!;
        renamed.set(k, `${p}${c.to}${k.slice(p.length + c.id.length)}`);
      }
      const mapping: Record<string, MappingTarget> = {};
      for (const [k, v] of Object.entries(doc.mapping)) mapping[renamed.get(k) ?? k] = v;
      const next = withGraph(doc, c.at, (x) => ({
        ...x,
        nodes: replaceAt(x.nodes, i, { ...x.nodes[i], id: c.to }),
        edges: x.edges.map((e) => ({ ...e, from: ref(e.from), to: ref(e.to) })),
        ...(x.inputs ? { inputs: x.inputs.map((b) => ({ ...b, to: b.to.map(ref) })) } : {}),
        ...(x.outputs ? { outputs: x.outputs.map((b) => ({ ...b, from: ref(b.from) })) } : {}),
      }));
      return { doc: { ...next, mapping }, inverse: [{ type: 'node/rename', id: c.to, to: c.id, ...atOf(c) }] };
    }
    case 'edge/add': {
      const g = graphOrThrow(doc, c);
      const k = edgeKey(c.edge);
      if (g.edges.some((e) => edgeKey(e) === k)) throw new ChangeError(c, `edge ${k} exists`);
      return { doc: withGraph(doc, c.at, (x) => ({ ...x, edges: insert(x.edges, c.edge, c.index) })), inverse: [{ type: 'edge/remove', key: k, ...atOf(c) }] };
    }
    case 'edge/remove': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.edges, (e) => edgeKey(e) === c.key, c, `edge ${c.key}`);
      return {
        doc: withGraph(doc, c.at, (x) => ({ ...x, edges: x.edges.filter((_, j) => j !== i) })),
        inverse: [{ type: 'edge/add', edge: g.edges[i], index: i, ...atOf(c) }],
      };
    }
    case 'edge/update': {
      const g = graphOrThrow(doc, c);
      const i = indexOrThrow(g.edges, (e) => edgeKey(e) === c.key, c, `edge ${c.key}`);
      const old = g.edges[i];
      const next: AppEdge = { ...old };
      const inverse: Change = { type: 'edge/update', key: c.key, ...atOf(c) };
      patchFields(next, old, c, inverse, ['delay', 'init']);
      return { doc: withGraph(doc, c.at, (x) => ({ ...x, edges: replaceAt(x.edges, i, next) })), inverse: [inverse] };
    }
    case 'graph/ports': {
      const g = graphOrThrow(doc, c);
      if (isApp(c.at)) throw new ChangeError(c, 'the app graph has no ports');
      const inverse: Change = { type: 'graph/ports', at: c.at };
      const next: Graph = { ...g };
      patchFields(next, g, c, inverse, ['inputs', 'outputs']);
      return { doc: withGraph(doc, c.at, () => next), inverse: [inverse] };
    }
    case 'param/set': {
      const params: DocumentParams = doc.params ?? {};
      const names = Object.keys(params);
      const at = names.indexOf(c.name);
      if (c.value === null && at < 0) throw new ChangeError(c, `no param "${c.name}"`);
      // Rebuilt in order: a new param goes where asked, an existing one keeps its place.
      const entries = Object.entries(params).filter(([k]) => k !== c.name);
      if (c.value !== null)
        entries.splice(at >= 0 ? at : c.index === undefined || c.index < 0 || c.index > entries.length ? entries.length : c.index, 0, [c.name, c.value]);
      const next: WrittenDocument = { ...doc, params: Object.fromEntries(entries) };
      if (!entries.length && doc.params === undefined) delete next.params;
      return { doc: next, inverse: [{ type: 'param/set', name: c.name, value: at >= 0 ? params[c.name] : null, ...(at >= 0 ? { index: at } : {}) }] };
    }
    case 'host/add': {
      if (doc.arch.hosts.some((h) => h.id === c.host.id)) throw new ChangeError(c, `host "${c.host.id}" exists`);
      return { doc: withArch(doc, { hosts: insert(doc.arch.hosts, c.host, c.index) }), inverse: [{ type: 'host/remove', id: c.host.id }] };
    }
    case 'host/remove': {
      const i = indexOrThrow(doc.arch.hosts, (h) => h.id === c.id, c, `host "${c.id}"`);
      if (doc.arch.pes.some((p) => p.host === c.id)) throw new ChangeError(c, `host "${c.id}" still holds PEs (expand first)`);
      return {
        doc: withArch(doc, { hosts: doc.arch.hosts.filter((_, j) => j !== i) }),
        inverse: [{ type: 'host/add', host: doc.arch.hosts[i], index: i }],
      };
    }
    case 'host/update': {
      const i = indexOrThrow(doc.arch.hosts, (h) => h.id === c.id, c, `host "${c.id}"`);
      const old = doc.arch.hosts[i];
      return {
        doc: withArch(doc, { hosts: replaceAt(doc.arch.hosts, i, { ...old, ...c.patch }) }),
        inverse: [{ type: 'host/update', id: c.id, patch: pick(old, Object.keys(c.patch)) }],
      };
    }
    case 'host/move': {
      const i = indexOrThrow(doc.arch.hosts, (h) => h.id === c.id, c, `host "${c.id}"`);
      const old = doc.arch.hosts[i];
      return {
        doc: withArch(doc, { hosts: replaceAt(doc.arch.hosts, i, { ...old, position: c.position }) }),
        inverse: [{ type: 'host/move', id: c.id, position: old.position ?? { x: 0, y: 0 } }],
      };
    }
    case 'host/rename': {
      const i = indexOrThrow(doc.arch.hosts, (h) => h.id === c.id, c, `host "${c.id}"`);
      if (doc.arch.hosts.some((h) => h.id === c.to)) throw new ChangeError(c, `host "${c.to}" exists`);
      return {
        doc: withArch(doc, {
          hosts: replaceAt(doc.arch.hosts, i, { ...doc.arch.hosts[i], id: c.to }),
          pes: doc.arch.pes.map((p) => (p.host === c.id ? { ...p, host: c.to } : p)),
        }),
        inverse: [{ type: 'host/rename', id: c.to, to: c.id }],
      };
    }
    case 'pe/add': {
      if (doc.arch.pes.some((p) => p.id === c.pe.id)) throw new ChangeError(c, `PE "${c.pe.id}" exists`);
      return { doc: withArch(doc, { pes: insert(doc.arch.pes, c.pe, c.index) }), inverse: [{ type: 'pe/remove', id: c.pe.id }] };
    }
    case 'pe/remove': {
      const i = indexOrThrow(doc.arch.pes, (p) => p.id === c.id, c, `PE "${c.id}"`);
      return {
        doc: withArch(doc, { pes: doc.arch.pes.filter((_, j) => j !== i) }),
        inverse: [{ type: 'pe/add', pe: doc.arch.pes[i], index: i }],
      };
    }
    case 'pe/update': {
      const i = indexOrThrow(doc.arch.pes, (p) => p.id === c.id, c, `PE "${c.id}"`);
      const old = doc.arch.pes[i];
      return {
        doc: withArch(doc, { pes: replaceAt(doc.arch.pes, i, { ...old, ...c.patch }) }),
        inverse: [{ type: 'pe/update', id: c.id, patch: pick(old, Object.keys(c.patch)) }],
      };
    }
    case 'pe/move': {
      const i = indexOrThrow(doc.arch.pes, (p) => p.id === c.id, c, `PE "${c.id}"`);
      const old = doc.arch.pes[i];
      return {
        doc: withArch(doc, { pes: replaceAt(doc.arch.pes, i, { ...old, position: c.position }) }),
        inverse: [{ type: 'pe/move', id: c.id, position: old.position ?? { x: 0, y: 0 } }],
      };
    }
    case 'pe/rename': {
      const i = indexOrThrow(doc.arch.pes, (p) => p.id === c.id, c, `PE "${c.id}"`);
      if (doc.arch.pes.some((p) => p.id === c.to)) throw new ChangeError(c, `PE "${c.to}" exists`);
      const r = (id: string) => (id === c.id ? c.to : id);
      const mapping: Record<string, MappingTarget> = {};
      for (const [k, v] of Object.entries(doc.mapping)) mapping[k] = renamePes(v, r);
      return {
        doc: {
          ...doc,
          arch: {
            ...doc.arch,
            pes: replaceAt(doc.arch.pes, i, { ...doc.arch.pes[i], id: c.to }),
            links: doc.arch.links.map((l) => ({ ...l, a: r(l.a), b: r(l.b) })),
          },
          mapping,
        },
        inverse: [{ type: 'pe/rename', id: c.to, to: c.id }],
      };
    }
    case 'link/add': {
      const k = linkKey(c.link);
      if (doc.arch.links.some((l) => linkKey(l) === k || linkKey({ a: l.b, b: l.a }) === k)) throw new ChangeError(c, `link ${k} exists`);
      return { doc: withArch(doc, { links: insert(doc.arch.links, c.link, c.index) }), inverse: [{ type: 'link/remove', key: k }] };
    }
    case 'link/remove': {
      const i = indexOrThrow(doc.arch.links, (l) => linkKey(l) === c.key, c, `link ${c.key}`);
      return {
        doc: withArch(doc, { links: doc.arch.links.filter((_, j) => j !== i) }),
        inverse: [{ type: 'link/add', link: doc.arch.links[i], index: i }],
      };
    }
    case 'link/update': {
      const i = indexOrThrow(doc.arch.links, (l) => linkKey(l) === c.key, c, `link ${c.key}`);
      const old = doc.arch.links[i];
      return {
        doc: withArch(doc, { links: replaceAt(doc.arch.links, i, { ...old, ...c.patch }) }),
        inverse: [{ type: 'link/update', key: c.key, patch: pick(old, Object.keys(c.patch)) }],
      };
    }
    case 'mapping/set': {
      const old = doc.mapping[c.node];
      const mapping = { ...doc.mapping };
      if (c.pe === null) delete mapping[c.node];
      else mapping[c.node] = c.pe;
      return { doc: { ...doc, mapping }, inverse: [{ type: 'mapping/set', node: c.node, pe: old ?? null }] };
    }
    case 'options/update': {
      return {
        doc: { ...doc, options: { ...doc.options, ...c.patch } },
        inverse: [{ type: 'options/update', patch: pick(doc.options, Object.keys(c.patch)) }],
      };
    }
    case 'doc/update': {
      const old = pick(doc, Object.keys(c.patch)) as { name?: string; description?: string };
      return { doc: { ...doc, ...c.patch }, inverse: [{ type: 'doc/update', patch: old }] };
    }
  }
}

/**
 * Applies a batch of changes (expanding cascades) and returns the new document with the
 * changes that undo the whole batch, in the order to apply them.
 */
export function applyChanges(doc: WrittenDocument, changes: readonly Change[]): { doc: WrittenDocument; forward: Change[]; inverse: Change[] } {
  let d = doc;
  const forward: Change[] = [];
  const inverse: Change[] = [];
  for (const c of changes) {
    for (const p of expand(d, c)) {
      const r = applyPrimitive(d, p);
      d = r.doc;
      forward.push(p);
      inverse.unshift(...r.inverse);
    }
  }
  return { doc: d, forward, inverse };
}

/** True when a change only moves things on a canvas: the compiler ignores it. */
export const isLayoutOnly = (c: Change) => c.type === 'node/move' || c.type === 'host/move' || c.type === 'pe/move';

/**
 * The optional fields of an update change applied to `next` (a copy of `old`): a value sets the
 * field, `null` removes it, absent leaves it; `inverse` gets what undoes each (the old value, or
 * `null` where there was none).
 */
function patchFields<T extends object, K extends keyof T & string>(
  next: T,
  old: T,
  change: Partial<Record<K, unknown>>,
  inverse: Change,
  fields: readonly K[],
): void {
  for (const field of fields) {
    const v = change[field];
    if (v === undefined) continue;
    if (v === null) delete next[field];
    else (next as Record<string, unknown>)[field] = v;
    (inverse as Record<string, unknown>)[field] = old[field] ?? null;
  }
}
