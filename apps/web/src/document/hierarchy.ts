import { findKernel } from '@pipeloom/kernels';
import type { AppEdge, AppNode, CompositeDef, DocumentParams, Expr, ParamDef, PortRef, WrittenDocument } from '@pipeloom/core';
import type { Bindings, Change } from './changes.js';
import { compositeOf, enclosingParams, graphAt, instancePrefixes, isApp, mappingKeysOf, type Graph, type GraphAt } from './graphs.js';
import { edgeKey } from './records.js';
import { expressionNames, substituteNames } from '../lib/expressions.js';

// Group and ungroup: each builds the primitive changes of one user action, dispatched as one
// batch, so one undo restores everything. Group makes an inline composite of the selected
// nodes: its inputs and outputs are the edges crossing the selection's boundary, the outer
// edges are rewired to its ports in place, and the mapping keeps every inner node where it was
// (`a` becomes `g/a`). Ungroup is the inverse: the composite's nodes come back in its place
// (ids that would collide get the composite's name in front), edges to its ports are rewired
// to the inner ports they are bound to, and a whole-composite mapping entry maps the inner
// nodes not mapped themselves (core flatten's rule). Ungrouping what was grouped restores the
// document exactly when the grouped nodes were consecutive and their edges listed in flow
// order (inputs, inner, outputs); otherwise the same graph, nodes and edges reordered.

type Result = { changes: Change[]; id: string } | { error: string };

const at$ = (at: GraphAt | undefined) => (at && !isApp(at) ? { at } : {});

/** `base`, `base2`, ... not in `taken`. */
export function freshId(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}${i}`)) return `${base}${i}`;
}

const samePort = (a: PortRef, b: PortRef) => a.node === b.node && a.port === b.port;

/** The changes that group nodes `ids` of the graph at `at` into one inline composite node. */
export function groupChanges(doc: WrittenDocument, at: GraphAt | undefined, ids: readonly string[]): Result {
  const g = graphAt(doc, at);
  if (!g) return { error: 'the graph shown is no longer in the document' };
  const sel = new Set(ids);
  const nodes = g.nodes.filter((n) => sel.has(n.id));
  if (!nodes.length || nodes.length !== sel.size) return { error: 'select the nodes to group on the canvas' };
  const gid = freshId('group', new Set(g.nodes.map((n) => n.id)));

  // Inputs: one per outer producer port (a delayed edge keeps an input of its own, with its delay).
  const inputs: NonNullable<CompositeDef['inputs']> = [];
  const outputs: NonNullable<CompositeDef['outputs']> = [];
  const portName = (list: { name: string }[], first: string, second: string) => {
    const taken = new Set(list.map((p) => p.name));
    return taken.has(first) ? freshId(second, taken) : first;
  };
  const inputFor = new Map<string, string>();
  const inner: AppEdge[] = [];
  // The outer edges in their new order: kept ones, and rewired ones where the first they replace was.
  const outer: { edge: AppEdge; added: boolean }[] = [];
  g.edges.forEach((e, i) => {
    const fromIn = sel.has(e.from.node);
    const toIn = sel.has(e.to.node);
    if (fromIn && toIn) inner.push(e);
    else if (!fromIn && !toIn) outer.push({ edge: e, added: false });
    else if (toIn) {
      const key = e.delay !== undefined ? `${edgeKey(e)}#${i}` : `${e.from.node}.${e.from.port}`;
      const existing = inputFor.get(key);
      if (existing) {
        inputs.find((p) => p.name === existing)!.to.push({ ...e.to });
        return;
      }
      const name = portName(inputs, e.to.port, `${e.to.node}_${e.to.port}`);
      inputFor.set(key, name);
      inputs.push({ name, to: [{ ...e.to }] });
      outer.push({ edge: { ...e, to: { node: gid, port: name } }, added: true });
    } else {
      let out = outputs.find((o) => samePort(o.from, e.from));
      if (!out) {
        out = { name: portName(outputs, e.from.port, `${e.from.node}_${e.from.port}`), from: { ...e.from } };
        outputs.push(out);
      }
      outer.push({ edge: { ...e, from: { node: gid, port: out.name } }, added: true });
    }
  });

  // Inside a composite, its own bindings into the selection now go through the group's ports.
  const changes: Change[] = [];
  const ports = rebindInto(g, sel, gid, inputs, outputs);
  g.edges.forEach((e) => {
    if (sel.has(e.from.node) || sel.has(e.to.node)) changes.push({ type: 'edge/remove', key: edgeKey(e), ...at$(at) });
  });
  if (ports) changes.push({ type: 'graph/ports', at: at!, ...ports });
  for (const p of instancePrefixes(doc, at)) {
    for (const n of nodes) {
      for (const k of mappingKeysOf(doc.mapping, [p], n.id)) {
        changes.push({ type: 'mapping/set', node: k, pe: null }, { type: 'mapping/set', node: `${p}${gid}/${k.slice(p.length)}`, pe: doc.mapping[k] });
      }
    }
  }
  for (const n of nodes) changes.push({ type: 'node/remove', id: n.id, ...at$(at) });

  // Inner positions are relative to the group's, which sits at the selection's top-left corner.
  const placed = nodes.filter((n) => n.position);
  const origin = placed.length ? { x: Math.min(...placed.map((n) => n.position!.x)), y: Math.min(...placed.map((n) => n.position!.y)) } : undefined;
  const graph: CompositeDef = {
    ...(inputs.length ? { inputs } : {}),
    ...(outputs.length ? { outputs } : {}),
    nodes: nodes.map((n) => (n.position && origin ? { ...n, position: { x: n.position.x - origin.x, y: n.position.y - origin.y } } : n)),
    edges: inner,
  };
  const first = g.nodes.findIndex((n) => sel.has(n.id));
  changes.push({ type: 'node/add', node: { id: gid, graph, ...(origin ? { position: origin } : {}) }, index: first, ...at$(at) });
  outer.forEach((o, i) => {
    if (o.added) changes.push({ type: 'edge/add', edge: o.edge, index: i, ...at$(at) });
  });
  return { changes, id: gid };
}

/** The enclosing composite's bindings with those into the selection routed through the group's new ports (added to `inputs`/`outputs`). */
function rebindInto(
  g: Graph,
  sel: Set<string>,
  gid: string,
  inputs: NonNullable<CompositeDef['inputs']>,
  outputs: NonNullable<CompositeDef['outputs']>,
): Bindings | undefined {
  const hitsIn = (g.inputs ?? []).some((b) => b.to.some((t) => sel.has(t.node)));
  const hitsOut = (g.outputs ?? []).some((b) => sel.has(b.from.node));
  if (!hitsIn && !hitsOut) return undefined;
  const names = (list: { name: string }[]) => new Set(list.map((p) => p.name));
  const boundIn = (g.inputs ?? []).map((b) => {
    const inside = b.to.filter((t) => sel.has(t.node));
    if (!inside.length) return b;
    const name = freshId(b.name, names(inputs));
    inputs.push({ name, to: inside.map((t) => ({ ...t })) });
    return { ...b, to: [...b.to.filter((t) => !sel.has(t.node)), { node: gid, port: name }] };
  });
  const boundOut = (g.outputs ?? []).map((b) => {
    if (!sel.has(b.from.node)) return b;
    let out = outputs.find((o) => samePort(o.from, b.from));
    if (!out) {
      out = { name: freshId(b.name, names(outputs)), from: { ...b.from } };
      outputs.push(out);
    }
    return { ...b, from: { node: gid, port: out.name } };
  });
  return { inputs: boundIn, outputs: boundOut };
}

/** The changes that put composite node `gid`'s inner nodes in its place in the graph at `at`. */
export function ungroupChanges(doc: WrittenDocument, at: GraphAt | undefined, gid: string): Result {
  const g = graphAt(doc, at);
  const node = g?.nodes.find((n) => n.id === gid);
  const c = node && compositeOf(doc, node);
  if (!g || !node || !c) return { error: `${gid} is not a composite node` };

  // The composite's params become the instance's values (or the defaults) written into the inner expressions.
  const values = paramTexts(c.params, node.params);
  const enclosing = enclosingParams(doc, at);
  let inner = c.nodes;
  let innerEdges = c.edges;
  if (values.size || enclosing.size) {
    const captured = new Set<string>();
    inner = c.nodes.map((n) => substituteNode(n, values, captured));
    innerEdges = c.edges.map((e) => (typeof e.delay === 'string' ? { ...e, delay: sub(e.delay, values, captured) } : e));
    // A def's inner expression reads the document's params; inlined into another composite it
    // would read that composite's param of the same name instead.
    const shadowed = [...captured].filter((n) => node.composite !== undefined && enclosing.has(n));
    if (shadowed.length)
      return {
        error: `cannot ungroup ${gid} here: its expressions read the document's ${shadowed.join(', ')}, which the enclosing composite's params of the same name would hide`,
      };
  }

  const taken = new Set(g.nodes.filter((n) => n.id !== gid).map((n) => n.id));
  const rename = new Map<string, string>();
  for (const n of inner) {
    const id = taken.has(n.id) ? freshId(`${gid}_${n.id}`, taken) : n.id;
    taken.add(id);
    rename.set(n.id, id);
  }
  const r = (p: PortRef): PortRef => ({ ...p, node: rename.get(p.node) ?? p.node });
  const bound = (port: string) => (c.inputs ?? []).find((b) => b.name === port)?.to ?? [];
  const source = (port: string) => (c.outputs ?? []).find((b) => b.name === port)?.from;

  // Outer edges: an edge to an input becomes one edge per inner input it is bound to, an edge
  // from an output starts at its inner output; the inner edges go after the last edge into the composite.
  const outer: { edge: AppEdge; added: boolean; into: boolean }[] = [];
  for (const e of g.edges) {
    if (e.from.node !== gid && e.to.node !== gid) {
      outer.push({ edge: e, added: false, into: false });
      continue;
    }
    const froms = e.from.node === gid ? [source(e.from.port)].filter((x): x is PortRef => !!x).map(r) : [e.from];
    const tos = e.to.node === gid ? bound(e.to.port).map(r) : [e.to];
    for (const from of froms) for (const to of tos) outer.push({ edge: { ...e, from, to }, added: true, into: e.to.node === gid });
  }
  const lastInto = outer.map((o) => o.into).lastIndexOf(true);
  const firstOut = outer.findIndex((o) => o.added && !o.into);
  const at0 = lastInto >= 0 ? lastInto + 1 : firstOut >= 0 ? firstOut : outer.length;
  const edges = [
    ...outer.slice(0, at0),
    ...innerEdges.map((e) => ({ edge: { ...e, from: r(e.from), to: r(e.to) }, added: true, into: false })),
    ...outer.slice(at0),
  ];

  const changes: Change[] = [];
  for (const e of g.edges) if (e.from.node === gid || e.to.node === gid) changes.push({ type: 'edge/remove', key: edgeKey(e), ...at$(at) });
  const ports = rebindOut(g, gid, c, r);
  if (ports) changes.push({ type: 'graph/ports', at: at!, ...ports });
  for (const p of instancePrefixes(doc, at)) {
    const whole = doc.mapping[`${p}${gid}`];
    for (const k of mappingKeysOf(doc.mapping, [p], gid)) {
      changes.push({ type: 'mapping/set', node: k, pe: null });
      if (!k.startsWith(`${p}${gid}/`)) continue;
      const rest = k.slice(p.length + gid.length + 1);
      const first = /^[^/#]+/.exec(rest)![0];
      changes.push({ type: 'mapping/set', node: `${p}${rename.get(first) ?? first}${rest.slice(first.length)}`, pe: doc.mapping[k] });
    }
    if (whole === undefined) continue;
    for (const n of inner)
      if (!Object.hasOwn(doc.mapping, `${p}${gid}/${n.id}`)) changes.push({ type: 'mapping/set', node: `${p}${rename.get(n.id)}`, pe: whole });
  }
  changes.push({ type: 'node/remove', id: gid, ...at$(at) });
  const index = g.nodes.indexOf(node);
  const offset = node.position ?? { x: 0, y: 0 };
  inner.forEach((n, k) => {
    const placed: AppNode = { ...n, id: rename.get(n.id)! };
    if (n.position) placed.position = { x: n.position.x + offset.x, y: n.position.y + offset.y };
    changes.push({ type: 'node/add', node: placed, index: index + k, ...at$(at) });
  });
  edges.forEach((o, i) => {
    if (o.added) changes.push({ type: 'edge/add', edge: o.edge, index: i, ...at$(at) });
  });
  return { changes, id: gid };
}

/** The enclosing composite's bindings to the ungrouped node's ports, rebound to the inner ports behind them. */
function rebindOut(g: Graph, gid: string, c: CompositeDef, r: (p: PortRef) => PortRef): Bindings | undefined {
  const hits = (g.inputs ?? []).some((b) => b.to.some((t) => t.node === gid)) || (g.outputs ?? []).some((b) => b.from.node === gid);
  if (!hits) return undefined;
  return {
    inputs: (g.inputs ?? []).map((b) => ({
      ...b,
      to: b.to.flatMap((t) => (t.node === gid ? ((c.inputs ?? []).find((x) => x.name === t.port)?.to ?? []).map(r) : [t])),
    })),
    outputs: (g.outputs ?? []).flatMap((b) => {
      if (b.from.node !== gid) return [b];
      const from = (c.outputs ?? []).find((x) => x.name === b.from.port)?.from;
      return from ? [{ ...b, from: r(from) }] : [];
    }),
  };
}

const written = (v: Expr | ParamDef): Expr => (typeof v === 'object' && v !== null ? v.value : v);
const text = (v: Expr) => (typeof v === 'number' ? String(v) : `(${v})`);

/**
 * Each composite param's value as text to write where it is read: the instance's value (read
 * where the instance is written, so it stays as it is), or the default, itself with the other
 * params written in (defaults may read each other).
 */
function paramTexts(params: DocumentParams | undefined, given: AppNode['params']): Map<string, string> {
  const out = new Map<string, string>();
  const defaults = new Map<string, Expr>();
  for (const [name, v] of Object.entries(params ?? {})) {
    const g = given?.[name];
    if (typeof g === 'number' || typeof g === 'string') out.set(name, text(g));
    else defaults.set(name, written(v));
  }
  for (const [name, v] of defaults) out.set(name, text(v));
  // Defaults reading other params: substitute until none is left (a cycle is validation's to report).
  for (let round = 0; round < 64; round++) {
    let changed = false;
    for (const name of defaults.keys()) {
      const t = out.get(name)!;
      const next = substituteNames(t, out);
      if (next !== t && !expressionNames(next).includes(name)) {
        out.set(name, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return out;
}

function sub(expr: string, values: Map<string, string>, free: Set<string>): string {
  for (const n of expressionNames(expr)) if (!values.has(n)) free.add(n);
  return substituteNames(expr, values);
}

/** A node with the composite's params written into its expressions: numeric kernel params, rates, an instance's values, an inline graph's inside (where not shadowed by its own params). */
function substituteNode(n: AppNode, values: Map<string, string>, free: Set<string>): AppNode {
  const out: AppNode = { ...n };
  const kernel = n.kernel !== undefined ? findKernel(n.kernel) : undefined;
  if (n.params) {
    out.params = Object.fromEntries(
      Object.entries(n.params).map(([k, v]) => {
        const numeric = kernel ? kernel.params[k]?.type === 'int' || kernel.params[k]?.type === 'float' : true;
        return [k, numeric && typeof v === 'string' ? sub(v, values, free) : v];
      }),
    );
  }
  if (n.rates) out.rates = Object.fromEntries(Object.entries(n.rates).map(([k, v]) => [k, typeof v === 'string' ? sub(v, values, free) : v]));
  if (n.graph) {
    const own = new Set(Object.keys(n.graph.params ?? {}));
    const visible = new Map([...values].filter(([k]) => !own.has(k)));
    const innerFree = new Set<string>();
    const params =
      n.graph.params &&
      Object.fromEntries(
        Object.entries(n.graph.params).map(([k, v]) => [
          k,
          typeof v === 'string'
            ? sub(v, visible, innerFree)
            : typeof v === 'object' && typeof v.value === 'string'
              ? { ...v, value: sub(v.value, visible, innerFree) }
              : v,
        ]),
      );
    out.graph = {
      ...n.graph,
      ...(params ? { params } : {}),
      nodes: n.graph.nodes.map((x) => substituteNode(x, visible, innerFree)),
      edges: n.graph.edges.map((e) => (typeof e.delay === 'string' ? { ...e, delay: sub(e.delay, visible, innerFree) } : e)),
    };
    for (const f of innerFree) if (!own.has(f)) free.add(f);
  }
  return out;
}
