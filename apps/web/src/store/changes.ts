import type { AppEdge, AppNode, Host, Link, ProcessingElement, ProjectDocument, DocumentOptions } from '@pipeloom/core';
import { edgeKey, linkKey, type EdgeKey, type LinkKey } from './records.js';

// Every edit is a plain-data change object. The store applies it, records its inverse for
// undo, and the same object could be validated or sent elsewhere. Primitive changes touch one
// record; removals that cascade (a node takes its edges and mapping entry with it) are
// expanded into primitives first, so every primitive has a one-record inverse.

type Pos = { x: number; y: number };

export type Change =
  | { type: 'node/add'; node: AppNode; index?: number }
  | { type: 'node/remove'; id: string }
  | { type: 'node/update'; id: string; kernel?: string; params?: AppNode['params'] }
  | { type: 'node/move'; id: string; position: Pos }
  | { type: 'node/rename'; id: string; to: string }
  | { type: 'edge/add'; edge: AppEdge; index?: number }
  | { type: 'edge/remove'; key: EdgeKey }
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
  | { type: 'mapping/set'; node: string; pe: string | null }
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
export function expand(doc: ProjectDocument, c: Change): Change[] {
  switch (c.type) {
    case 'node/remove': {
      const edges = doc.app.edges.filter((e) => e.from.node === c.id || e.to.node === c.id);
      const out: Change[] = edges.map((e) => ({ type: 'edge/remove', key: edgeKey(e) }));
      if (c.id in doc.mapping) out.push({ type: 'mapping/set', node: c.id, pe: null });
      out.push(c);
      return out;
    }
    case 'pe/remove': {
      const out: Change[] = [];
      for (const l of doc.arch.links) if (l.a === c.id || l.b === c.id) out.push({ type: 'link/remove', key: linkKey(l) });
      for (const [node, pe] of Object.entries(doc.mapping)) if (pe === c.id) out.push({ type: 'mapping/set', node, pe: null });
      out.push(c);
      return out;
    }
    case 'host/remove': {
      // Links between two PEs of the host are removed once, not once per end.
      const pes = new Set(doc.arch.pes.filter((p) => p.host === c.id).map((p) => p.id));
      const out: Change[] = [];
      for (const l of doc.arch.links) if (pes.has(l.a) || pes.has(l.b)) out.push({ type: 'link/remove', key: linkKey(l) });
      for (const [node, pe] of Object.entries(doc.mapping)) if (pes.has(pe)) out.push({ type: 'mapping/set', node, pe: null });
      for (const id of pes) out.push({ type: 'pe/remove', id });
      out.push(c);
      return out;
    }
    default:
      return [c];
  }
}

const insert = <T,>(list: T[], item: T, index?: number) => {
  const out = list.slice();
  out.splice(index === undefined || index < 0 || index > out.length ? out.length : index, 0, item);
  return out;
};

const replaceAt = <T,>(list: T[], i: number, item: T) => list.map((x, j) => (j === i ? item : x));

function indexOrThrow<T>(list: T[], pred: (x: T) => boolean, c: Change, what: string): number {
  const i = list.findIndex(pred);
  if (i < 0) throw new ChangeError(c, `no ${what}`);
  return i;
}

const withApp = (d: ProjectDocument, app: Partial<ProjectDocument['app']>): ProjectDocument => ({ ...d, app: { ...d.app, ...app } });
const withArch = (d: ProjectDocument, arch: Partial<ProjectDocument['arch']>): ProjectDocument => ({ ...d, arch: { ...d.arch, ...arch } });

function pick<T extends object>(obj: T, keys: string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = (obj as Record<string, unknown>)[k];
  return out as Partial<T>;
}

/** Applies one primitive change; returns the new document and the changes that undo it. */
export function applyPrimitive(doc: ProjectDocument, c: Change): { doc: ProjectDocument; inverse: Change[] } {
  switch (c.type) {
    case 'node/add': {
      if (doc.app.nodes.some((n) => n.id === c.node.id)) throw new ChangeError(c, `node "${c.node.id}" exists`);
      return { doc: withApp(doc, { nodes: insert(doc.app.nodes, c.node, c.index) }), inverse: [{ type: 'node/remove', id: c.node.id }] };
    }
    case 'node/remove': {
      const i = indexOrThrow(doc.app.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      return {
        doc: withApp(doc, { nodes: doc.app.nodes.filter((_, j) => j !== i) }),
        inverse: [{ type: 'node/add', node: doc.app.nodes[i], index: i }],
      };
    }
    case 'node/update': {
      const i = indexOrThrow(doc.app.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      const old = doc.app.nodes[i];
      const next: AppNode = { ...old };
      if (c.kernel !== undefined) next.kernel = c.kernel;
      if (c.params !== undefined) next.params = c.params;
      return {
        doc: withApp(doc, { nodes: replaceAt(doc.app.nodes, i, next) }),
        inverse: [{ type: 'node/update', id: c.id, ...(c.kernel !== undefined ? { kernel: old.kernel } : {}), ...(c.params !== undefined ? { params: old.params ?? {} } : {}) }],
      };
    }
    case 'node/move': {
      const i = indexOrThrow(doc.app.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      const old = doc.app.nodes[i];
      return {
        doc: withApp(doc, { nodes: replaceAt(doc.app.nodes, i, { ...old, position: c.position }) }),
        inverse: [{ type: 'node/move', id: c.id, position: old.position ?? { x: 0, y: 0 } }],
      };
    }
    case 'node/rename': {
      const i = indexOrThrow(doc.app.nodes, (n) => n.id === c.id, c, `node "${c.id}"`);
      if (doc.app.nodes.some((n) => n.id === c.to)) throw new ChangeError(c, `node "${c.to}" exists`);
      const r = (id: string) => (id === c.id ? c.to : id);
      const mapping: Record<string, string> = {};
      for (const [k, v] of Object.entries(doc.mapping)) mapping[r(k)] = v;
      return {
        doc: {
          ...doc,
          app: {
            nodes: replaceAt(doc.app.nodes, i, { ...doc.app.nodes[i], id: c.to }),
            edges: doc.app.edges.map((e) => ({ from: { ...e.from, node: r(e.from.node) }, to: { ...e.to, node: r(e.to.node) } })),
          },
          mapping,
        },
        inverse: [{ type: 'node/rename', id: c.to, to: c.id }],
      };
    }
    case 'edge/add': {
      const k = edgeKey(c.edge);
      if (doc.app.edges.some((e) => edgeKey(e) === k)) throw new ChangeError(c, `edge ${k} exists`);
      return { doc: withApp(doc, { edges: insert(doc.app.edges, c.edge, c.index) }), inverse: [{ type: 'edge/remove', key: k }] };
    }
    case 'edge/remove': {
      const i = indexOrThrow(doc.app.edges, (e) => edgeKey(e) === c.key, c, `edge ${c.key}`);
      return {
        doc: withApp(doc, { edges: doc.app.edges.filter((_, j) => j !== i) }),
        inverse: [{ type: 'edge/add', edge: doc.app.edges[i], index: i }],
      };
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
      const mapping: Record<string, string> = {};
      for (const [k, v] of Object.entries(doc.mapping)) mapping[k] = r(v);
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
export function applyChanges(doc: ProjectDocument, changes: readonly Change[]): { doc: ProjectDocument; forward: Change[]; inverse: Change[] } {
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
