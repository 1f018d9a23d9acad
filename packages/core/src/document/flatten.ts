import { findKernel, specFor, withDefaults } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import { nearestName } from '../util/nearest.js';
import type { Stage } from './stage.js';
import { compositeScope, documentScope, substituteEdge, substituteNode, type ParamScope } from './params.js';
import type { AppEdge, AppNode, CompositeDef, PortRef, ProjectDocument, WrittenDocument } from './types.js';

// Hierarchy: composite nodes -> their inner graphs, at any depth. An inner node's id becomes
// `outer/inner` (`seg/open`, `a/b/c`); an edge to a composite's input becomes one edge to each
// inner input the input is bound to, an edge from its output starts at the bound inner output.
// Each node and edge is substituted (params.ts) with the scope it is written in, and keeps the
// path where it is written (`defs.seg.nodes[1]`): a def used twice gives two nodes with one path,
// told apart by their ids in the messages. The mapping may name a whole composite: its inner
// nodes not named themselves go where it goes.

/** Deepest composite nesting accepted (documents arrive from the network). */
export const MAX_COMPOSITE_DEPTH = 64;
/** Most nodes a document may flatten to: a def using another twice, 20 deep, is a million nodes. */
export const MAX_FLAT_NODES = 200_000;

const KINDS = ['kernel', 'composite', 'graph', 'type'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An inner input a composite input is bound to, with the path of the binding. */
interface Target {
  node: string;
  port: string;
  path: string;
}

/** A node of the graph being flattened, by its id as written there. */
type Local =
  | { kind: 'kernel'; id: string; path: string; inputs?: string[]; outputs?: string[]; kernel?: string }
  | { kind: 'composite'; id: string; path: string; def: string; inputs: Map<string, Target[] | undefined>; outputs: Map<string, PortRef | undefined> }
  // A node already reported (unknown def, recursion...): what names it is not reported again.
  | { kind: 'broken'; id: string; path: string };

interface Level {
  nodes: unknown;
  edges: unknown;
  /** Where the graph is written: `app`, `defs.seg`, `app.nodes[2].graph`. */
  base: string;
  /** Prepended to every id of the graph: '' or `seg/`. */
  prefix: string;
  scope: ParamScope;
  /** The defs being expanded around this graph (recursion check). */
  defs: string[];
  depth: number;
}

/** What flattening one graph gives: its nodes by id, and the edges feeding each of their inputs. */
interface LevelResult {
  locals: Map<string, Local>;
  /** `node\0port` -> paths of the edges of this graph feeding it. */
  fedBy: Map<string, string[]>;
}

class Flattener {
  readonly nodes: AppNode[] = [];
  readonly nodePaths: string[] = [];
  readonly edges: AppEdge[] = [];
  readonly edgePaths: string[] = [];
  /** Flattened ids of the composite instances. */
  readonly composites = new Set<string>();
  private readonly seen = new Set<string>();
  private readonly cycles = new Set<string>();
  private tooBig = false;

  constructor(
    private readonly doc: WrittenDocument,
    private readonly root: ParamScope,
    private readonly out: Diagnostic[],
  ) {}

  /** Reports once per path and message (a def used twice would repeat its own mistakes). */
  fail(path: string, message: string, hint?: string) {
    const key = `${path}\n${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.out.push(error(path, message, hint));
  }

  level(l: Level): LevelResult {
    const locals = new Map<string, Local>();
    const fedBy = new Map<string, string[]>();
    const nodes = Array.isArray(l.nodes) ? l.nodes : [];
    const inner = l.prefix !== '';
    for (let i = 0; i < nodes.length && !this.tooBig; i++) {
      const n = nodes[i] as AppNode;
      const path = `${l.base}.nodes[${i}]`;
      if (!isObject(n) || typeof n.id !== 'string' || n.id === '') {
        // The document's own nodes passed the shape check; a def's are checked here.
        this.fail(inner ? path : `${path}.id`, 'a node needs an id (a non-empty string)', 'write { "id": "...", "kernel": "..." }');
        continue;
      }
      // A loop-free count: this runs once per node of documents of 10,000 nodes.
      const count = (n.kernel !== undefined ? 1 : 0) + (n.composite !== undefined ? 1 : 0) + (n.graph !== undefined ? 1 : 0) + (n.type !== undefined ? 1 : 0);
      if (count > 1) {
        const kinds = KINDS.filter((k) => n[k] !== undefined);
        this.fail(
          path,
          `node "${l.prefix}${n.id}" has ${kinds.join(' and ')}: a node is one of a kernel node, a composite from defs or an inline graph`,
          `keep only one of ${kinds.join(', ')}`,
        );
        this.broken(locals, n, path, l.prefix);
        continue;
      }
      if (count === 0) {
        this.fail(
          path,
          `node "${l.prefix}${n.id}" has no kernel, composite or graph`,
          'name its kernel ("kernel": "matrix.increment") or its composite ("composite": "<defs name>")',
        );
        this.broken(locals, n, path, l.prefix);
        continue;
      }
      if (locals.has(n.id)) {
        // Bindings and edges use the first. Validation reports a duplicate kernel node on the
        // flattened ids; a composite one is not expanded, so it is reported here.
        if (n.kernel !== undefined || n.type !== undefined) this.push(substituteNode(inner ? { ...n, id: l.prefix + n.id } : n, path, l.scope, this.out), path);
        else this.fail(`${path}.id`, `duplicate node id "${l.prefix}${n.id}"`, 'give each node its own id');
        continue;
      }
      if (n.type !== undefined) {
        // A scan node (document/scan.ts expands it after rates): a node of its own ports here.
        const id = l.prefix + n.id;
        this.push(substituteNode(inner ? { ...n, id } : n, path, l.scope, this.out), path);
        locals.set(n.id, { kind: 'kernel', id, path });
      } else if (n.kernel !== undefined) {
        if (typeof n.kernel !== 'string' || n.kernel === '') {
          this.fail(
            `${path}.kernel`,
            `node "${l.prefix}${n.id}": kernel must be a kernel id, not ${JSON.stringify(n.kernel)}`,
            'name a registered kernel, e.g. matrix.increment',
          );
          this.broken(locals, n, path, l.prefix);
          continue;
        }
        const id = l.prefix + n.id;
        const flat = substituteNode(inner ? { ...n, id } : n, path, l.scope, this.out);
        this.push(flat, path);
        const local: Local = { kind: 'kernel', id, path };
        // Inside a composite, bindings name inner ports: know them (a node of an unknown kernel
        // or with params that give no ports is reported by validation, not here).
        const kernel = inner ? findKernel(n.kernel) : undefined;
        if (kernel) {
          try {
            const spec = specFor(kernel, withDefaults(kernel, flat.params));
            local.inputs = spec.inputs.map((p) => p.name);
            local.outputs = spec.outputs.map((p) => p.name);
            local.kernel = kernel.id;
          } catch {
            // its ports cannot be known: bindings to it are not checked
          }
        }
        locals.set(n.id, local);
      } else {
        const c = this.instance(n, path, l);
        if (c) locals.set(n.id, c);
        else this.broken(locals, n, path, l.prefix);
      }
      if (this.nodes.length > MAX_FLAT_NODES) {
        this.tooBig = true;
        this.fail(path, `flattening composites gives more than ${MAX_FLAT_NODES} nodes`, 'use fewer or smaller composites');
      }
    }

    const edges = Array.isArray(l.edges) ? l.edges : [];
    for (let j = 0; j < edges.length && !this.tooBig; j++) {
      const e = edges[j] as AppEdge;
      const path = `${l.base}.edges[${j}]`;
      if (!isObject(e) || !isPortRef(e.from) || !isPortRef(e.to)) {
        this.fail(
          path,
          'an edge needs from and to, each { "node", "port" }',
          'write { "from": { "node": "a", "port": "out" }, "to": { "node": "b", "port": "in" } }',
        );
        continue;
      }
      const from = this.source(e.from, `${path}.from.port`, locals, l.prefix);
      const to = this.targets(e.to, `${path}.to.port`, locals, l.prefix, path);
      const key = `${e.to.node}\0${e.to.port}`;
      const fed = fedBy.get(key);
      if (fed) fed.push(path);
      else fedBy.set(key, [path]);
      if (!from || !to) continue;
      let edge = substituteEdge(e, path, l.scope, this.out);
      // A delay's init node is a node of the same graph.
      if (inner && isObject(edge.init) && 'node' in edge.init && typeof edge.init.node === 'string')
        edge = { ...edge, init: { ...edge.init, node: l.prefix + edge.init.node } };
      if (!inner && to.length === 1 && to[0].node === e.to.node && from.node === e.from.node) this.pushEdge(edge, path);
      else for (const t of to) this.pushEdge({ ...edge, from: { node: from.node, port: from.port }, to: { node: t.node, port: t.port } }, t.path);
    }
    return { locals, fedBy };
  }

  /** Records a node already reported, so what names it is not reported again. */
  private broken(locals: Map<string, Local>, n: AppNode, path: string, prefix: string) {
    if (typeof n.id === 'string' && !locals.has(n.id)) locals.set(n.id, { kind: 'broken', id: prefix + n.id, path });
  }

  private push(n: AppNode, path: string) {
    this.nodes.push(n);
    this.nodePaths.push(path);
  }

  private pushEdge(e: AppEdge, path: string) {
    this.edges.push(e);
    this.edgePaths.push(path);
  }

  /** The flattened output an edge starts at; undefined after a diagnostic. */
  private source(ref: PortRef, at: string, locals: Map<string, Local>, prefix: string): PortRef | undefined {
    const local = locals.get(ref.node);
    // A node that is not in the graph: validation reports the edge (by the flattened id).
    if (!local) return { node: prefix + ref.node, port: ref.port };
    if (local.kind === 'kernel') return { node: local.id, port: ref.port };
    if (local.kind === 'broken') return undefined;
    const o = local.outputs.get(ref.port);
    if (!local.outputs.has(ref.port))
      this.fail(
        at,
        `composite node "${local.id}" has no output "${ref.port}"`,
        local.outputs.size ? `outputs: ${[...local.outputs.keys()].join(', ')}` : `declare it in ${local.def}.outputs`,
      );
    return o;
  }

  /** The flattened inputs an edge (or a binding) reaches; undefined after a diagnostic. */
  private targets(ref: PortRef, at: string, locals: Map<string, Local>, prefix: string, path: string): Target[] | undefined {
    const local = locals.get(ref.node);
    if (!local) return [{ node: prefix + ref.node, port: ref.port, path }];
    if (local.kind === 'kernel') return [{ node: local.id, port: ref.port, path }];
    if (local.kind === 'broken') return undefined;
    const t = local.inputs.get(ref.port);
    if (!t) {
      if (local.inputs.has(ref.port)) return undefined;
      this.fail(
        at,
        `composite node "${local.id}" has no input "${ref.port}"`,
        local.inputs.size ? `inputs: ${[...local.inputs.keys()].join(', ')}` : `declare it in ${local.def}.inputs`,
      );
      return undefined;
    }
    // One inner input: the edge keeps its own path. Several: each flattened edge is named by its
    // binding, where a type mismatch between the inner inputs is to be fixed.
    return t.length === 1 ? [{ ...t[0], path }] : t;
  }

  /** Expands one composite node; what its ports are bound to, or undefined after a diagnostic. */
  private instance(n: AppNode, path: string, l: Level): Local | undefined {
    const id = l.prefix + n.id;
    let def: CompositeDef;
    let defPath: string;
    let lexical: ParamScope;
    let defs = l.defs;
    if (n.composite !== undefined) {
      const name = n.composite;
      const all = isObject(this.doc.defs) ? this.doc.defs : {};
      if (typeof name !== 'string' || !Object.hasOwn(all, name)) {
        const near = nearestName(String(name), Object.keys(all));
        this.fail(
          `${path}.composite`,
          `node "${id}": no composite "${String(name)}" in defs`,
          near ? `did you mean "${near}"?` : 'define it in the document\'s defs, or write the graph inline ("graph")',
        );
        return undefined;
      }
      if (l.defs.includes(name)) {
        const cycle = [...l.defs.slice(l.defs.indexOf(name)), name];
        const key = [...new Set(cycle)].sort().join('\0');
        if (!this.cycles.has(key)) {
          this.cycles.add(key);
          this.fail(
            `${path}.composite`,
            `defs recursion: ${cycle.map((d) => `defs.${d}`).join(' -> ')}`,
            'a composite cannot contain itself, directly or through other composites: break the cycle',
          );
        }
        return undefined;
      }
      def = all[name] as CompositeDef;
      defPath = `defs.${name}`;
      lexical = this.root;
      defs = [...l.defs, name];
    } else {
      def = n.graph as CompositeDef;
      defPath = `${path}.graph`;
      // An inline graph reads the params of the graph it is written in.
      lexical = l.scope;
    }
    if (!isObject(def) || !Array.isArray(def.nodes) || !Array.isArray(def.edges)) {
      this.fail(defPath, `composite ${defPath} needs nodes and edges (arrays)`, 'write { "inputs": [...], "outputs": [...], "nodes": [...], "edges": [...] }');
      return undefined;
    }
    if (l.depth >= MAX_COMPOSITE_DEPTH) {
      this.fail(path, `composite node "${id}" is nested more than ${MAX_COMPOSITE_DEPTH} deep`, 'flatten some of the levels');
      return undefined;
    }
    this.composites.add(id);
    const scope = compositeScope(def, defPath, n, path, lexical, l.scope, id, this.out);
    const inner = this.level({ nodes: def.nodes, edges: def.edges, base: defPath, prefix: `${id}/`, scope, defs, depth: l.depth + 1 });

    // Inputs: each bound to one or more inner inputs, none bound twice.
    const inputs = new Map<string, Target[] | undefined>();
    const bound = new Map<string, string>();
    const list =
      def.inputs === undefined
        ? []
        : Array.isArray(def.inputs)
          ? def.inputs
          : (this.fail(`${defPath}.inputs`, 'inputs must be an array of { name, to: [{ node, port }] }'), []);
    list.forEach((input, k) => {
      const at = `${defPath}.inputs[${k}]`;
      if (!isObject(input) || typeof input.name !== 'string' || input.name === '' || !Array.isArray(input.to)) {
        return this.fail(
          at,
          `an input of ${defPath} needs a name and "to", the inner inputs it feeds`,
          'write { "name": "in", "to": [{ "node": "<inner node>", "port": "<its input>" }] }',
        );
      }
      if (inputs.has(input.name)) return this.fail(`${at}.name`, `${defPath} declares input "${input.name}" twice`, 'give each input its own name');
      const targets: Target[] = [];
      let whole = true;
      input.to.forEach((ref, j) => {
        const bp = `${at}.to[${j}]`;
        const t = this.binding(ref, bp, 'input', inner.locals, defPath, input.name);
        if (!t) return void (whole = false);
        const key = `${(ref as PortRef).node}\0${(ref as PortRef).port}`;
        const earlier = bound.get(key);
        if (earlier)
          return this.fail(
            bp,
            `inner input ${id}/${(ref as PortRef).node}.${(ref as PortRef).port} is bound twice (also by ${earlier})`,
            'bind each inner input to one input of the composite',
          );
        bound.set(key, bp);
        if (t === 'broken') return void (whole = false);
        for (const x of t) targets.push({ ...x, path: t.length === 1 ? bp : x.path });
      });
      if (input.to.length === 0)
        this.fail(`${at}.to`, `input "${input.name}" of ${defPath} is bound to no inner input`, 'list the inner inputs it feeds in "to"');
      inputs.set(input.name, whole ? targets : undefined);
    });

    // Outputs: each one inner output.
    const outputs = new Map<string, PortRef | undefined>();
    const outs =
      def.outputs === undefined
        ? []
        : Array.isArray(def.outputs)
          ? def.outputs
          : (this.fail(`${defPath}.outputs`, 'outputs must be an array of { name, from: { node, port } }'), []);
    outs.forEach((output, k) => {
      const at = `${defPath}.outputs[${k}]`;
      if (!isObject(output) || typeof output.name !== 'string' || output.name === '' || !isPortRef(output.from)) {
        return this.fail(
          at,
          `an output of ${defPath} needs a name and "from", the inner output it is`,
          'write { "name": "out", "from": { "node": "<inner node>", "port": "<its output>" } }',
        );
      }
      if (outputs.has(output.name)) return this.fail(`${at}.name`, `${defPath} declares output "${output.name}" twice`, 'give each output its own name');
      const t = this.binding(output.from, `${at}.from`, 'output', inner.locals, defPath, output.name);
      outputs.set(output.name, t && t !== 'broken' ? { node: t[0].node, port: t[0].port } : undefined);
    });

    // Every inner input is bound or fed by an inner edge, not both.
    for (const local of inner.locals.values()) {
      if (local.kind === 'broken') continue;
      const names = local.kind === 'kernel' ? local.inputs : [...local.inputs.keys()];
      const local_ = local.id.slice(id.length + 1);
      for (const port of names ?? []) {
        const key = `${local_}\0${port}`;
        const fed = inner.fedBy.get(key);
        const by = bound.get(key);
        if (by && fed)
          this.fail(
            by,
            `inner input ${local.id}.${port} is bound to an input of ${defPath} and also fed by ${fed[0]}`,
            'an input takes one edge: remove the binding or the edge',
          );
        else if (!by && !fed)
          this.fail(
            local.path,
            `input "${port}" of ${local.kind === 'composite' ? 'composite ' : ''}node "${local.id}" is neither bound to an input of ${defPath} nor fed by an edge of its graph`,
            `add { "node": "${local_}", "port": "${port}" } to an input's "to" in ${defPath}.inputs, or an edge to ${local_}.${port} in ${defPath}.edges`,
          );
      }
    }
    return { kind: 'composite', id, path, def: defPath, inputs, outputs };
  }

  /**
   * The flattened ports a binding names (an inner composite's port expands to its own bindings);
   * 'broken' for a right binding to something already reported, undefined after a diagnostic.
   */
  private binding(
    ref: unknown,
    at: string,
    side: 'input' | 'output',
    locals: Map<string, Local>,
    defPath: string,
    name: string,
  ): Target[] | 'broken' | undefined {
    if (!isPortRef(ref)) {
      this.fail(at, `the binding of ${side} "${name}" of ${defPath} needs { "node", "port" }`, `name an inner node of ${defPath} and its ${side}`);
      return undefined;
    }
    const local = locals.get(ref.node);
    if (!local) {
      const near = nearestName(ref.node, locals.keys());
      this.fail(
        `${at}.node`,
        `${side} "${name}" of ${defPath} is bound to node "${ref.node}", which its graph does not have`,
        near ? `did you mean "${near}"?` : `add the node to ${defPath}.nodes`,
      );
      return undefined;
    }
    if (local.kind === 'broken') return 'broken';
    if (local.kind === 'kernel') {
      const ports = side === 'input' ? local.inputs : local.outputs;
      if (ports && !ports.includes(ref.port)) {
        this.fail(
          `${at}.port`,
          `${side} "${name}" of ${defPath} is bound to ${ref.node}.${ref.port}, but ${local.kernel} has no ${side} "${ref.port}"`,
          `${side}s of ${ref.node}: ${ports.join(', ') || 'none'}`,
        );
        return undefined;
      }
      return [{ node: local.id, port: ref.port, path: at }];
    }
    if (side === 'input') {
      const t = local.inputs.get(ref.port);
      if (!local.inputs.has(ref.port))
        this.fail(
          `${at}.port`,
          `input "${name}" of ${defPath} is bound to ${ref.node}.${ref.port}, but composite node "${local.id}" has no input "${ref.port}"`,
          `inputs of ${ref.node}: ${[...local.inputs.keys()].join(', ') || 'none'}`,
        );
      else if (!t) return 'broken';
      return t;
    }
    const o = local.outputs.get(ref.port);
    if (!local.outputs.has(ref.port))
      this.fail(
        `${at}.port`,
        `output "${name}" of ${defPath} is bound to ${ref.node}.${ref.port}, but composite node "${local.id}" has no output "${ref.port}"`,
        `outputs of ${ref.node}: ${[...local.outputs.keys()].join(', ') || 'none'}`,
      );
    else if (!o) return 'broken';
    return o && [{ ...o, path: at }];
  }
}

function isPortRef(v: unknown): v is PortRef {
  return isObject(v) && typeof v.node === 'string' && v.node !== '' && typeof v.port === 'string' && v.port !== '';
}

/**
 * Flattens composite nodes and substitutes parameter expressions: every node and edge of the
 * result is a kernel node or an edge between kernel nodes, with numbers where expressions were,
 * and the path where it is written. `scope` holds the document's evaluated params (default: as
 * written, no overrides). Never throws; undefined only when the document has no app graph.
 */
export function flattenComposites<D extends WrittenDocument>(doc: D, out: Diagnostic[], scope?: ParamScope): Stage<D> | undefined {
  if (!isObject(doc.app)) return undefined;
  const root = scope ?? documentScope(doc, {}, out);
  // Counted before anything is built: a def using another twice, 20 deep, is a million nodes.
  const size = flatSize(doc.app, isObject(doc.defs) ? doc.defs : {}, new Map(), new Set(), 0);
  if (size > MAX_FLAT_NODES) {
    out.push(
      error(
        'app.nodes',
        `flattening the composites gives ${size > 1e15 ? 'over 10^15' : size} nodes, more than ${MAX_FLAT_NODES}`,
        'use fewer or smaller composites',
      ),
    );
    return undefined;
  }
  const f = new Flattener(doc, root, out);
  const top = f.level({ nodes: doc.app.nodes, edges: doc.app.edges, base: 'app', prefix: '', scope: root, defs: [], depth: 0 });
  // A composite's inputs are fed in the document's graph (its kernel nodes' inputs are validation's).
  for (const local of top.locals.values()) {
    if (local.kind !== 'composite') continue;
    for (const port of local.inputs.keys()) {
      if (!top.fedBy.has(`${local.id}\0${port}`))
        f.fail(local.path, `input "${port}" of composite node "${local.id}" is not connected`, `add an edge to ${local.id}.${port}`);
    }
  }
  const mapping = f.composites.size ? expandMapping(doc.mapping, f.nodes, f.composites) : doc.mapping;
  const { defs: _defs, ...rest } = doc;
  return { doc: { ...rest, app: { nodes: f.nodes, edges: f.edges }, mapping } as D, nodePaths: f.nodePaths, edgePaths: f.edgePaths };
}

/** A document flattened for display: the graph the compiler reads, or the problems found. */
export interface Flattened {
  /** The document with every composite replaced by its inner graph and numbers for expressions; absent after an error. */
  doc?: ProjectDocument;
  /** By flattened node index: where the node is written (`defs.seg.nodes[1]`). */
  nodePaths: string[];
  /** By flattened edge index: where the edge (or, for an input bound to several inner inputs, the binding) is written. */
  edgePaths: string[];
  diagnostics: Diagnostic[];
}

/** The designer's flattened view: params evaluated (with `overrides`), composites expanded, mapping of whole composites expanded. */
export function flattenDocument(doc: ProjectDocument, overrides: Record<string, number> = {}): Flattened {
  const diagnostics: Diagnostic[] = [];
  const flat = flattenComposites(doc, diagnostics, documentScope(doc, overrides, diagnostics));
  if (!flat || diagnostics.some((d) => d.severity === 'error')) return { nodePaths: flat?.nodePaths ?? [], edgePaths: flat?.edgePaths ?? [], diagnostics };
  return { doc: flat.doc, nodePaths: flat.nodePaths, edgePaths: flat.edgePaths, diagnostics };
}

/** Nodes the graph flattens to (a def in a cycle, or nested too deep, counts 0: the flattener reports it). */
function flatSize(graph: unknown, defs: Record<string, unknown>, memo: Map<string, number>, open: Set<string>, depth: number): number {
  if (!isObject(graph) || !Array.isArray(graph.nodes) || depth > MAX_COMPOSITE_DEPTH) return 0;
  let total = 0;
  for (const n of graph.nodes) {
    if (!isObject(n)) continue;
    if (typeof n.composite === 'string' && Object.hasOwn(defs, n.composite)) {
      const name = n.composite;
      if (open.has(name)) continue;
      let size = memo.get(name);
      if (size === undefined) {
        open.add(name);
        size = flatSize(defs[name], defs, memo, open, depth + 1);
        open.delete(name);
        memo.set(name, size);
      }
      total += size;
    } else if (n.graph !== undefined) total += flatSize(n.graph, defs, memo, open, depth + 1);
    else total += 1;
  }
  return total;
}

/**
 * The mapping with each entry naming a composite (`seg`) replaced by entries for its inner nodes
 * not named themselves (the nearest enclosing composite named wins). Other entries are kept,
 * including ones naming no node (validation reports them).
 */
function expandMapping<V>(mapping: Record<string, V>, nodes: AppNode[], composites: Set<string>): Record<string, V> {
  if (!isObject(mapping)) return mapping;
  const out: Record<string, V> = {};
  for (const k of Object.keys(mapping)) if (!composites.has(k)) out[k] = mapping[k];
  for (const n of nodes) {
    if (Object.hasOwn(out, n.id)) continue;
    for (let cut = n.id.lastIndexOf('/'); cut > 0; cut = n.id.lastIndexOf('/', cut - 1)) {
      const outer = n.id.slice(0, cut);
      if (composites.has(outer) && Object.hasOwn(mapping, outer)) {
        out[n.id] = mapping[outer];
        break;
      }
    }
  }
  return out;
}
