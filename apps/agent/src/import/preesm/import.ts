import { statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { evaluateExpression, parseExpression, type AppEdge, type AppNode, type CompositeDef, type DocumentParams, type ProjectDocument } from '@pipeloom/core';
import { GENERIC_WORK } from '@pipeloom/kernels';
import { inputByteLimit, readInputFile } from '../../input-file.js';
import { parseXml, XML_LIMITS, XmlError } from '../xml.js';
import { Issues, type ImportIssue } from './issues.js';
import { mapActors, type MappedNode } from './mapping.js';
import { readPi, type PiFifo, type PiGraph, type PiVertex } from './pi.js';
import { readScenario, type Scenario } from './scenario.js';
import { readSlam, slamArchitecture } from './slam.js';

// `pipeloom import preesm ALGO.pi ARCH.slam [SCENARIO.scenario]`: a PREESM project as a
// Pipeloom document. Actors (special actors included) become generic.work nodes with their
// ports, rates and token sizes; hierarchical actors composites (defs); delays an edge's delay
// with zeros as initial tokens; parameters document or composite params; the S-LAM operators
// PEs (slam.ts); the scenario's constraints and timings the mapping (mapping.ts) and each
// node's cost. What cannot be carried over is a warning naming the element.

export interface PreesmFiles {
  algorithm: string;
  architecture: string;
  scenario?: string;
  /** Seconds of one PREESM time unit (timings, speeds); default 1e-9. */
  timeUnit?: number;
}

export interface PreesmImport {
  /** Absent when an error stopped the import. */
  doc?: ProjectDocument;
  issues: ImportIssue[];
}

/** Hierarchy levels followed (a .pi refinement inside a .pi ...). */
export const MAX_HIERARCHY_DEPTH = 32;
/** Graph instances expanded in all (each hierarchical actor is one). */
export const MAX_GRAPH_INSTANCES = 10_000;
/** PREESM's time of an actor the scenario gives no timing for. */
export const DEFAULT_TIMING = 100;

/** C types' sizes in bytes, for FIFO types the scenario does not list. */
const C_TYPES: Record<string, number> = {
  char: 1,
  uchar: 1,
  'unsigned char': 1,
  int8_t: 1,
  uint8_t: 1,
  bool: 1,
  short: 2,
  ushort: 2,
  'unsigned short': 2,
  int16_t: 2,
  uint16_t: 2,
  int: 4,
  uint: 4,
  'unsigned int': 4,
  int32_t: 4,
  uint32_t: 4,
  float: 4,
  long: 8,
  ulong: 8,
  'unsigned long': 8,
  'long long': 8,
  int64_t: 8,
  uint64_t: 8,
  double: 8,
};

const SPECIAL = new Set(['broadcast', 'fork', 'join', 'roundbuffer']);

export function importPreesm(files: PreesmFiles): PreesmImport {
  const issues = new Issues();
  const timeUnit = files.timeUnit ?? 1e-9;
  const shown = (path: string) => {
    const r = relative(process.cwd(), path);
    return r && !r.startsWith('..') ? r : path;
  };
  const load = <T>(path: string, what: string, read: (x: ReturnType<typeof parseXml>) => T): T | undefined => {
    const file = shown(path);
    // Each file is bounded as a document is (PIPELOOM_MAX_DOCUMENT_BYTES), and so is the XML read from it.
    const max = inputByteLimit();
    if (!max.ok) {
      issues.error(file, undefined, what, max.message);
      return undefined;
    }
    const text = readInputFile(path, max.limit);
    if (!text.ok) {
      issues.error(file, undefined, what, text.tooLarge ? text.reason : `cannot be read: ${text.reason}`, text.hint);
      return undefined;
    }
    try {
      return read(parseXml(text.text, { ...XML_LIMITS, maxLength: max.limit }));
    } catch (e) {
      if (e instanceof XmlError) issues.error(file, e.line, what, `malformed XML: ${e.reason}`, 'fix the XML at that position');
      else issues.error(file, undefined, what, (e as Error).message);
      return undefined;
    }
  };

  const scenario = files.scenario ? load(files.scenario, 'scenario', readScenario) : undefined;
  const slam = load(files.architecture, 'architecture', readSlam);
  const top = load(files.algorithm, 'algorithm', readPi);
  if (!slam || !top || (files.scenario && !scenario)) return { issues: issues.list };
  const archFile = shown(files.architecture);
  const imported = slamArchitecture(slam, timeUnit, archFile, issues);
  if (!imported) return { issues: issues.list };

  const ctx = new Context(
    issues,
    scenario,
    files.scenario ? shown(files.scenario) : undefined,
    top.name || basename(files.algorithm, '.pi'),
    imported.definitionOf,
    load,
    shown,
  );
  const params: DocumentParams = {};
  const app = ctx.graph(top, files.algorithm, '', new Map(), params, 0);
  if (!app || issues.errors.length) return { issues: issues.list };

  const doc: ProjectDocument = {
    format: 'pipeloom/v2',
    name: ctx.topName,
    description: `Imported from PREESM: ${basename(files.algorithm)}, ${basename(files.architecture)}${files.scenario ? `, ${basename(files.scenario)}` : ''} (one time unit = ${timeUnit} s).`,
    ...(Object.keys(params).length ? { params } : {}),
    ...(ctx.defs.size ? { defs: Object.fromEntries(ctx.defs) } : {}),
    app: { nodes: app.nodes, edges: app.edges },
    arch: imported.arch,
    mapping: {},
    options: { overlap: true, iterations: scenario?.numberOfTopExecutions && scenario.numberOfTopExecutions > 1 ? scenario.numberOfTopExecutions : 100 },
  };
  doc.mapping = mapActors(doc, ctx.mapped, imported, scenario, ctx.topName, files.scenario ? shown(files.scenario) : undefined, issues);
  if (ctx.rateParams.size) {
    issues.warn(
      shown(files.algorithm),
      undefined,
      'parameters',
      `port sizes were computed with the values at import (${[...ctx.rateParams].sort().join(', ')}); the rates stay expressions, so --param changes them but not the sizes`,
      'to change a parameter, set it in the scenario (parameterValues) and import again',
    );
  }
  return { doc, issues: issues.list };
}

type Loader = <T>(path: string, what: string, read: (x: ReturnType<typeof parseXml>) => T) => T | undefined;

interface GraphOut {
  nodes: AppNode[];
  edges: AppEdge[];
  inputs: { name: string; to: { node: string; port: string }[] }[];
  outputs: { name: string; from: { node: string; port: string } }[];
}

class Context {
  readonly defs = new Map<string, CompositeDef>();
  /** Every generic.work node by flattened id, with what the mapping needs. */
  readonly mapped: MappedNode[] = [];
  /** Parameters a port size depends on. */
  readonly rateParams = new Set<string>();
  private instances = 0;
  private typeWarned = new Set<string>();
  private bits: boolean;

  constructor(
    private issues: Issues,
    private scenario: Scenario | undefined,
    private scenarioFile: string | undefined,
    readonly topName: string,
    private definitionOf: Map<string, string>,
    private load: Loader,
    private shown: (p: string) => string,
  ) {
    // PREESM 3.x writes type sizes in bits (char 8), earlier versions in bytes (char 1).
    const known = [...(scenario?.dataTypes ?? [])].filter(([n]) => Object.hasOwn(C_TYPES, n));
    this.bits = known.length > 0 && known.every(([n, s]) => s === 8 * C_TYPES[n]);
  }

  /**
   * One graph instance: its nodes and edges (ids local to the graph), its interfaces, its params
   * written into `params`. `prefix` is the flattened path of the instance (`Filter/`), `outer`
   * the values its configuration inputs receive.
   */
  graph(g: PiGraph, path: string, prefix: string, outer: Map<string, number>, params: DocumentParams, depth: number): GraphOut | undefined {
    const file = this.shown(path);
    const issues = this.issues;
    if (++this.instances > MAX_GRAPH_INSTANCES) {
      issues.error(file, undefined, `graph ${g.name}`, `more than ${MAX_GRAPH_INSTANCES} graph instances in the hierarchy`, 'import a smaller application');
      return undefined;
    }
    const byId = new Map<string, PiVertex>();
    for (const v of g.vertices) {
      if (byId.has(v.id)) issues.error(file, v.line, `${v.kind} ${v.id}`, 'has the id of another vertex', 'give every vertex its own id');
      byId.set(v.id, v);
    }
    const scenarioGraph = prefix ? g.name : this.topName;

    // Parameters: expressions over this graph's parameters (and configuration inputs).
    const exprs = new Map<string, { text: string; line: number; element: string }>();
    for (const v of g.vertices) {
      if (v.kind === 'param' || v.kind === 'malleable_param') {
        const set = this.scenario?.parameterValues.get(`${scenarioGraph}/${v.id}`);
        let text = v.expr ?? '0';
        if (v.kind === 'malleable_param')
          issues.warn(file, v.line, `param ${v.id}`, 'is malleable: Pipeloom keeps one value, its expression', 'the mapping and sizes follow that value');
        const setByActor = g.dependencies.some(
          (d) =>
            d.target === v.id &&
            byId.get(d.source)?.kind !== 'param' &&
            byId.get(d.source)?.kind !== 'cfg_in_iface' &&
            byId.get(d.source)?.kind !== 'malleable_param',
        );
        if (set) {
          if (set.type === 'INDEPENDENT' || set.type === 'PARAMETER_DEPENDENT') text = set.value;
          else {
            const first = /-?\d+(\.\d+)?/.exec(set.value)?.[0];
            issues.warn(
              this.scenarioFile!,
              set.line,
              `param ${v.id}`,
              `is set by an actor at run time (values ${set.value}): Pipeloom's parameters are static, so ${first ?? 'its expression'} is used`,
              'each value is a separate import: set it in the scenario as INDEPENDENT',
            );
            if (first) text = first;
          }
        } else if (setByActor) {
          issues.warn(
            file,
            v.line,
            `param ${v.id}`,
            `is set by an actor at run time: Pipeloom's parameters are static, so its expression ${JSON.stringify(text)} is used`,
            'give its value in the scenario (parameterValues)',
          );
        }
        exprs.set(v.id, { text, line: v.line, element: `param ${v.id}` });
      } else if (v.kind === 'cfg_in_iface') {
        const given = outer.get(v.id);
        exprs.set(v.id, { text: given !== undefined ? String(given) : v.defaultValue || '0', line: v.line, element: `configuration input ${v.id}` });
      } else if (v.kind === 'cfg_out_iface') {
        issues.warn(file, v.line, `configuration output ${v.id}`, 'is not carried over: Pipeloom parameters are not set by actors');
      }
    }
    const values = new Map<string, number>();
    const evaluating = new Set<string>();
    const valueOf = (name: string): number | undefined => {
      if (values.has(name)) return values.get(name);
      const e = exprs.get(name);
      if (!e || evaluating.has(name)) return undefined;
      evaluating.add(name);
      const r = this.evaluate(e.text, valueOf, file, e.line, e.element);
      evaluating.delete(name);
      if (r !== undefined) values.set(name, r);
      return r;
    };
    for (const [name, e] of exprs) {
      if (!this.translatable(e.text, file, e.line, e.element)) continue;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name === 'min' || name === 'max') {
        issues.error(
          file,
          e.line,
          e.element,
          `the name "${name}" is not a Pipeloom parameter name (letters, digits and _, not min or max)`,
          'rename it in PREESM',
        );
        continue;
      }
      if (valueOf(name) === undefined) continue;
      // Configuration inputs are the composite's params, given by the instance; others keep their expression.
      params[name] = byId.get(name)?.kind === 'cfg_in_iface' ? Number(exprs.get(name)!.text) || 0 : asExpr(e.text);
    }

    const out: GraphOut = { nodes: [], edges: [], inputs: [], outputs: [] };
    const fifoFrom = new Map<string, PiFifo>();
    const fifoTo = new Map<string, PiFifo>();
    for (const f of g.fifos) {
      for (const [end, node, port] of [
        ['source', f.source, f.sourcePort],
        ['target', f.target, f.targetPort],
      ] as const) {
        if (!byId.has(node))
          issues.error(file, f.line, `fifo ${fifoName(f)}`, `its ${end} "${node}" is no vertex of graph ${g.name}`, 'connect vertices of this graph');
        const map = end === 'source' ? fifoFrom : fifoTo;
        if (map.has(`${node}.${port}`))
          issues.error(file, f.line, `fifo ${fifoName(f)}`, `port ${node}.${port} has a second fifo`, 'a PiSDF data port takes one fifo');
        map.set(`${node}.${port}`, f);
      }
    }
    // Configuration input ports: port name -> the parameter that feeds it.
    const cfgSource = (v: PiVertex, port: string): string | undefined => {
      const d = g.dependencies.find((x) => x.target === v.id && (x.targetPort ?? '') === port);
      return d?.source;
    };

    for (const v of g.vertices) {
      const element = `${v.kind === 'actor' ? 'actor' : v.kind} ${v.id}`;
      if (v.kind === 'src') {
        const f = fifoFrom.get(`${v.id}.${v.ports.find((p) => p.kind === 'output')?.name ?? v.id}`) ?? g.fifos.find((x) => x.source === v.id);
        if (!prefix)
          issues.error(
            file,
            v.line,
            `data input ${v.id}`,
            'is an interface of the top graph: the top graph has no outside to read from',
            'import the graph that contains this one',
          );
        else if (f) out.inputs.push({ name: v.id, to: [{ node: f.target, port: f.targetPort }] });
        continue;
      }
      if (v.kind === 'snk') {
        const f = g.fifos.find((x) => x.target === v.id);
        if (!prefix)
          issues.error(
            file,
            v.line,
            `data output ${v.id}`,
            'is an interface of the top graph: the top graph has no outside to write to',
            'import the graph that contains this one',
          );
        else if (f) out.outputs.push({ name: v.id, from: { node: f.source, port: f.sourcePort } });
        continue;
      }
      if (v.kind === 'init' || v.kind === 'end') {
        issues.error(
          file,
          v.line,
          element,
          `special actor "${v.kind}" is not carried over`,
          'Pipeloom carries state across iterations by delays: replace the init/end pair by a delay in PREESM',
        );
        continue;
      }
      if (v.kind !== 'actor' && !SPECIAL.has(v.kind)) continue;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v.id)) {
        issues.error(file, v.line, element, `the id "${v.id}" is not a Pipeloom node id here`, 'use letters, digits and _');
        continue;
      }
      // The names this vertex's expressions use, renamed to the parameters that feed them.
      const rename = new Map<string, string>();
      for (const p of v.ports.filter((p) => p.kind === 'cfg_input')) {
        const src = cfgSource(v, p.name);
        if (!src)
          issues.error(file, p.line, `${element} port ${p.name}`, 'is a configuration input fed by no parameter', 'connect a parameter to it (a dependency)');
        else rename.set(p.name, src);
      }
      for (const p of v.ports.filter((p) => p.kind === 'cfg_output')) {
        issues.warn(file, p.line, `${element} port ${p.name}`, 'is a configuration output: Pipeloom parameters are not set by actors, so it is left out');
      }
      if (v.refinement?.endsWith('.pi')) {
        const node = this.hierarchical(v, path, prefix, rename, valueOf, depth, element);
        if (node) out.nodes.push(node);
        continue;
      }
      const node = this.actor(v, prefix, rename, valueOf, fifoFrom, fifoTo, file, element);
      if (node) out.nodes.push(node);
    }

    for (const f of g.fifos) {
      const s = byId.get(f.source);
      const t = byId.get(f.target);
      if (!s || !t || s.kind === 'src' || t.kind === 'snk') continue;
      const edge: AppEdge = { from: { node: f.source, port: f.sourcePort }, to: { node: f.target, port: f.targetPort } };
      const delay = this.delayOf(f, byId, valueOf, file);
      if (delay === null) continue;
      if (delay !== undefined) {
        edge.delay = delay;
        edge.init = 0;
      }
      out.edges.push(edge);
    }
    return out;
  }

  /** A data actor (or broadcast, fork, join, round buffer) as a generic.work node. */
  private actor(
    v: PiVertex,
    prefix: string,
    rename: Map<string, string>,
    valueOf: (n: string) => number | undefined,
    fifoFrom: Map<string, PiFifo>,
    fifoTo: Map<string, PiFifo>,
    file: string,
    element: string,
  ): AppNode | undefined {
    const issues = this.issues;
    if (v.kind === 'roundbuffer')
      issues.warn(
        file,
        v.line,
        element,
        'is a round buffer: it becomes a node with its ports and rates, whose output holds zeros, not the last tokens of its input',
      );
    const decl: { side: 'in' | 'out'; name: string; bytes: number }[] = [];
    const rates: Record<string, number | string> = {};
    let ok = true;
    for (const p of v.ports) {
      if (p.kind !== 'input' && p.kind !== 'output') continue;
      const side = p.kind === 'input' ? 'in' : 'out';
      const f = (side === 'in' ? fifoTo : fifoFrom).get(`${v.id}.${p.name}`);
      if (!f) {
        issues.error(file, p.line, `${element} port ${p.name}`, `is connected to no fifo`, 'connect every data port in PREESM');
        ok = false;
        continue;
      }
      const text = renamed(p.expr || '0', rename);
      const used = this.names(text);
      if (!this.translatable(text, file, p.line, `${element} port ${p.name}`)) {
        ok = false;
        continue;
      }
      const r = this.evaluate(text, valueOf, file, p.line, `${element} port ${p.name}`);
      if (r === undefined) {
        ok = false;
        continue;
      }
      if (!Number.isInteger(r) || r < 1) {
        issues.error(
          file,
          p.line,
          `${element} port ${p.name}`,
          `rate ${JSON.stringify(p.expr)} is ${r}: Pipeloom needs a positive whole number of tokens per firing`,
          r === 0 ? 'remove the port, or give it a rate of 1 or more' : 'write a whole number of tokens',
        );
        ok = false;
        continue;
      }
      for (const n of used) this.rateParams.add(n);
      if (r !== 1 || used.length) rates[p.name] = used.length ? text : r;
      decl.push({ side, name: p.name, bytes: r * this.tokenBytes(f, file) });
    }
    if (!ok) return undefined;
    const list = (side: 'in' | 'out') =>
      decl
        .filter((d) => d.side === side)
        .map((d) => `${d.name}: ${d.bytes}`)
        .join(', ');
    const flatId = `${prefix}${v.id}`;
    const flops = this.timing(v, `${this.topName}/${flatId}`, valueOf, element);
    this.mapped.push({ id: flatId, path: `${this.topName}/${flatId}`, special: SPECIAL.has(v.kind), flops, file, line: v.line });
    const node: AppNode = { id: v.id, kernel: GENERIC_WORK, params: { ports: `${list('in')} -> ${list('out')}`.trim(), flops } };
    if (Object.keys(rates).length) node.rates = rates;
    return node;
  }

  /** A hierarchical actor: its .pi graph as a composite (one def per distinct content). */
  private hierarchical(
    v: PiVertex,
    path: string,
    prefix: string,
    rename: Map<string, string>,
    valueOf: (n: string) => number | undefined,
    depth: number,
    element: string,
  ): AppNode | undefined {
    const file = this.shown(path);
    if (depth >= MAX_HIERARCHY_DEPTH) {
      this.issues.error(file, v.line, element, `the hierarchy is deeper than ${MAX_HIERARCHY_DEPTH} levels`, 'check that no graph contains itself');
      return undefined;
    }
    const sub = resolveRefinement(path, v.refinement!);
    if (!sub) {
      this.issues.error(
        file,
        v.line,
        element,
        `its graph ${v.refinement} is not found next to ${basename(path)} (tried the path as written from the project folder and from this file's folder)`,
        "put the sub-graph's .pi file in the project",
      );
      return undefined;
    }
    const g = this.load(sub, `graph of ${element}`, readPi);
    if (!g) return undefined;
    const outer = new Map<string, number>();
    const instanceParams: Record<string, string | number> = {};
    for (const [port, param] of rename) {
      const value = valueOf(param);
      if (value === undefined) return undefined;
      outer.set(port, value);
      instanceParams[port] = param;
    }
    const params: DocumentParams = {};
    const inner = this.graph(g, sub, `${prefix}${v.id}/`, outer, params, depth + 1);
    if (!inner) return undefined;
    const def: CompositeDef = {
      description: `PREESM graph ${g.name} (${basename(sub)})`,
      ...(Object.keys(params).length ? { params } : {}),
      inputs: inner.inputs,
      outputs: inner.outputs,
      nodes: inner.nodes,
      edges: inner.edges,
    };
    // One def per content: instances of one graph with other parameter values have other port sizes.
    const base = (g.name || basename(sub, '.pi')).replace(/[^A-Za-z0-9_]/g, '_');
    let name = base;
    for (let k = 2; this.defs.has(name) && JSON.stringify(this.defs.get(name)) !== JSON.stringify(def); k++) name = `${base}_${k}`;
    this.defs.set(name, def);
    return { id: v.id, composite: name, ...(Object.keys(instanceParams).length ? { params: instanceParams } : {}) };
  }

  /** An edge's delay: tokens (an expression), undefined without delay, null after an error. */
  private delayOf(f: PiFifo, byId: Map<string, PiVertex>, valueOf: (n: string) => number | undefined, file: string): number | string | undefined | null {
    if (f.delay === undefined) return undefined;
    const element = `fifo ${fifoName(f)}`;
    let text = f.delayExpr ?? '0';
    if (f.delay !== '') {
      const d = byId.get(f.delay);
      if (!d || d.kind !== 'delay') {
        this.issues.error(file, f.line, element, `its delay "${f.delay}" is no delay vertex of the graph`, 'declare the delay as a node of kind "delay"');
        return null;
      }
      text = d.expr ?? '0';
      const at = `delay ${d.id}`;
      if (d.level && d.level !== 'permanent')
        this.issues.warn(
          file,
          d.line,
          at,
          `has persistence level "${d.level}": Pipeloom's initial tokens are permanent (each iteration reads the previous one's last tokens)`,
          'the first iteration reads zeros either way',
        );
      if (d.setter || d.getter)
        this.issues.warn(
          file,
          d.line,
          at,
          `has a ${d.setter ? `setter ${d.setter}` : ''}${d.setter && d.getter ? ' and a ' : ''}${d.getter ? `getter ${d.getter}` : ''}: its initial tokens are zeros here`,
          'Pipeloom fills initial tokens with a constant or a source node (edit "init")',
        );
      else if (d.refinement)
        this.issues.warn(file, d.line, at, `initialises its tokens with ${d.refinement}: they are zeros here`, 'edit the edge\'s "init" for other values');
    }
    if (!this.translatable(text, file, f.line, element)) return null;
    const n = this.evaluate(text, valueOf, file, f.line, element);
    if (n === undefined) return null;
    if (!Number.isInteger(n) || n < 0) {
      this.issues.error(
        file,
        f.line,
        element,
        `delay ${JSON.stringify(text)} is ${n}, not a whole number of tokens`,
        'write the number of initial tokens: 0 or more',
      );
      return null;
    }
    if (n === 0) return undefined;
    return this.names(text).length ? text : n;
  }

  /** Bytes of one token of a fifo's type, rounded up to whole 4-byte words (Pipeloom moves words). */
  private tokenBytes(f: PiFifo, file: string): number {
    const declared = this.scenario?.dataTypes.get(f.type);
    let bytes = declared !== undefined ? (this.bits ? declared / 8 : declared) : C_TYPES[f.type];
    if (bytes === undefined || !(bytes > 0)) {
      if (!this.typeWarned.has(f.type)) {
        this.typeWarned.add(f.type);
        this.issues.warn(
          this.scenarioFile ?? file,
          undefined,
          `data type ${f.type}`,
          `has no size${this.scenarioFile ? ' in the scenario' : ''} (first used by fifo ${fifoName(f)}): its tokens are taken as 4 bytes`,
          "declare it in the scenario's dataTypes",
        );
      }
      bytes = 4;
    }
    const words = Math.ceil(bytes / 4) * 4;
    if (words !== bytes && !this.typeWarned.has(`pad:${f.type}`)) {
      this.typeWarned.add(`pad:${f.type}`);
      this.issues.warn(
        this.scenarioFile ?? file,
        undefined,
        `data type ${f.type}`,
        `is ${bytes} bytes: Pipeloom moves whole 4-byte words, so each token is padded to ${words} bytes (transfers and buffers are that much larger)`,
      );
    }
    return words;
  }

  /** An actor's cost in flops: its scenario timing in time units (one flop per unit on every PE). */
  private timing(v: PiVertex, path: string, valueOf: (n: string) => number | undefined, element: string): number {
    const byOp = this.scenario?.timings.get(path);
    if (!byOp || !byOp.size) {
      if (SPECIAL.has(v.kind)) return 0;
      if (this.scenario)
        this.issues.warn(
          this.scenarioFile!,
          undefined,
          element,
          `has no timing: PREESM's default of ${DEFAULT_TIMING} time units is used`,
          `add a timing for ${path}`,
        );
      return DEFAULT_TIMING;
    }
    const known = new Set(this.definitionOf.values());
    const times: { op: string; t: number }[] = [];
    for (const [op, { time, line }] of byOp) {
      if (!known.has(op)) {
        this.issues.warn(this.scenarioFile!, line, element, `has a timing for operator type "${op}", which the architecture does not have: it is left out`);
        continue;
      }
      if (!this.translatable(time, this.scenarioFile!, line, `${element} timing`)) continue;
      const t = this.evaluate(time, valueOf, this.scenarioFile!, line, `${element} timing`);
      if (t !== undefined && t >= 0) times.push({ op, t });
    }
    if (!times.length) return DEFAULT_TIMING;
    const least = times.reduce((a, b) => (b.t < a.t ? b : a));
    if (times.some((x) => x.t !== least.t)) {
      this.issues.warn(
        this.scenarioFile!,
        undefined,
        element,
        `has different timings per operator type (${times.map((x) => `${x.op}: ${x.t}`).join(', ')}): a Pipeloom node has one cost, so ${least.op}'s ${least.t} is used`,
      );
    }
    return least.t;
  }

  /** Whether an expression is one Pipeloom reads (its grammar is a subset of PREESM's). */
  private translatable(text: string, file: string, line: number | undefined, element: string): boolean {
    const p = parseExpression(text);
    if (p.ok) return true;
    this.issues.error(
      file,
      line,
      element,
      p.error.message,
      'Pipeloom evaluates numbers, parameter names, + - * / %, parentheses, min and max: rewrite the expression with those',
    );
    return false;
  }

  private names(text: string): string[] {
    const p = parseExpression(text);
    return p.ok ? p.names : [];
  }

  private evaluate(text: string, valueOf: (n: string) => number | undefined, file: string, line: number | undefined, element: string): number | undefined {
    const r = evaluateExpression(text, valueOf);
    if (r.ok) return r.value;
    this.issues.error(file, line, element, r.error.message, 'every name must be a parameter of the graph (or a configuration input connected to one)');
    return undefined;
  }
}

function fifoName(f: PiFifo): string {
  return `${f.source}.${f.sourcePort} -> ${f.target}.${f.targetPort}`;
}

/** A number when the text is one, else the expression. */
function asExpr(text: string): number | string {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
}

/** Identifiers replaced by the names they stand for (function names, before "(", kept). */
function renamed(text: string, rename: Map<string, string>): string {
  if (!rename.size) return text;
  return text.replace(/(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]*/g, (id: string, at: number) =>
    /^\s*\(/.test(text.slice(at + id.length)) ? id : (rename.get(id) ?? id),
  );
}

/**
 * A refinement's .pi file. PREESM writes workspace paths (`/project/Algo/sub.pi`) or project
 * paths (`Algo/sub.pi`): each tail of the path is tried from this file's folder and its parent
 * (the project folder, where the file is in `Algo/`).
 */
function resolveRefinement(from: string, ref: string): string | undefined {
  const parts = ref.split(/[\\/]+/).filter((s) => s && s !== '.');
  if (parts.some((p) => p === '..') || parts.length > 64) return undefined;
  const dirs = [dirname(from), dirname(dirname(from))];
  for (let i = 0; i < parts.length; i++) {
    for (const d of dirs) {
      const candidate = join(d, ...parts.slice(i));
      try {
        if (statSync(candidate).isFile()) return candidate;
      } catch {
        // not there: the next tail
      }
    }
  }
  return undefined;
}
