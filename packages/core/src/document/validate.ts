import {
  bindingProblems,
  CUSTOM_WGSL,
  dataTypeBytes,
  majorOf,
  findKernel,
  formatDataType,
  nearestKernels,
  sameDataType,
  specFor,
  type DataType,
  type KernelSpec,
  type ParamSpec,
  type ParamValue,
  type Params,
} from '@pipeloom/kernels/specs';
import { error, hasErrors, warning, type Diagnostic } from '../diagnostics.js';
import { hostId, nodeId, peId, type NodeId, type PeId } from '../ids.js';
import { migrate } from './migrate.js';
import type { EdgeLists, Model, ModelEdges, ModelNode, ModelPe } from './model.js';
import { normalizeWithOrigins } from './normalize.js';
import { lowerDocument, type LowerOptions } from './lower.js';
import type { Lowered } from './stage.js';
import { deriveExpectations } from './expectations.js';
import { checkShape, describe } from './shape.js';
import { writtenPrefix } from './walk.js';
import type { InitSpec, ProjectDocument, WrittenDocument } from './types.js';
import { successorLists } from '../util/csr.js';
import { failingClause, parseRequires, type PeCapabilities } from './requires.js';
import { modelContextProblems } from './scan-context.js';

/** Every mistake in a document, each naming the element and the fix; empty when valid. */
export function validate(doc: unknown, opts: LowerOptions = {}): Diagnostic[] {
  return analyze(doc, opts).diagnostics;
}

/**
 * Migrates, checks the shape, lowers (params, composites, rates: lower.ts), normalises and
 * checks the meaning; the model when valid. `model.lowered` keeps what lowering found.
 */
export function analyze(input: unknown, opts: LowerOptions = {}): { diagnostics: Diagnostic[]; model?: Model } {
  const migrated = migrate(input);
  if (!migrated.doc) return { diagnostics: migrated.diagnostics };
  const shape = checkShape(migrated.doc);
  if (shape.length) return { diagnostics: shape };
  const { lowered, diagnostics } = lowerDocument(migrated.doc as unknown as WrittenDocument, opts);
  if (!lowered) return { diagnostics };
  const { doc, pePaths, linkPaths } = normalizeWithOrigins(lowered.doc);
  const model = build(doc, migrated.doc as unknown as WrittenDocument, pePaths, linkPaths, lowered, diagnostics);
  return hasErrors(diagnostics) ? { diagnostics } : { diagnostics, model };
}

/** Checks the lowered, normalised document, by what it validates, in the order diagnostics come out; the model (used only when no error). */
function build(doc: ProjectDocument, written: WrittenDocument, pePaths: string[], linkPaths: string[], lowered: Lowered, out: Diagnostic[]): Model {
  const r = reporter(written, lowered, out);
  const { pes, pe } = architecture(doc, pePaths, linkPaths, r.fail);
  const app = appNodes(doc, lowered, r);
  kernelVersions(doc, out);
  mapping(doc, app.nodes, app.node, pes, pe, r);
  const { edges, ports, edgeSlot, fedCount } = appEdges(doc, app, r);
  const inputs = inputLists(doc, app.nodes, ports.firstInput, ports.inputCount, edgeSlot, fedCount, r.edgeAt, r.nodeAt, r.fail);
  const outputs = successorLists(doc.app.nodes.length, edges.from, identity(edges.count));
  if (!hasErrors(out))
    for (const i of app.unexpanded)
      r.fail(r.nodeAt(i), `node "${doc.app.nodes[i].id}" has no kernel`, 'give it a kernel, or make it a scan node whose input is fed');
  const model: Model = {
    doc,
    written,
    nodes: app.nodes,
    node: app.node,
    edges,
    inputs,
    outputs: { start: outputs.start, edge: outputs.succ },
    pes,
    pe,
    lowered,
  };
  if (hasErrors(out)) return model;
  graphProblems(model, r);
  return model;
}

type Fail = (path: string, message: string, hint?: string) => void;

/** How the checks name what they check and report it. */
interface Reporter {
  /** An error at `path`, said once, naming the element as the user wrote it. */
  fail: Fail;
  nodeAt: (i: number) => string;
  edgeAt: (i: number) => string;
  out: Diagnostic[];
}

function reporter(written: WrittenDocument, lowered: Lowered, out: Diagnostic[]): Reporter {
  // Diagnostics name nodes and edges as the user wrote them (lowering keeps their paths).
  const nodeAt = (i: number) => lowered.nodePaths[i] ?? `app.nodes[${i}]`;
  const edgeAt = (i: number) => lowered.edgePaths[i] ?? `app.edges[${i}]`;
  // A lowered multi-rate node's firings (`b#3`) are named as the node the user wrote (`b`), so
  // one mistake on an edge as written is one diagnostic, not one per firing.
  const asWritten = (text: string) => text.replace(/([^\s"'(>]+)#\d+/g, (m, base: string) => ((lowered.repetitions[base] ?? 1) > 1 ? base : m));
  const diagnosed = new Set<string>();
  const fail = (path: string, message: string, hint?: string) => {
    // A path into what lowering made (a scan's or a firing's token ranges) names the element written, and says so.
    const { at, rest } = writtenPrefix(written, path);
    const said = rest ? ` (${rest} is derived by lowering: ${at || 'the document'} as written has none)` : '';
    const d = error(rest ? at : path, asWritten(message) + said, hint === undefined ? undefined : asWritten(hint));
    const key = `${d.path}\n${d.message}\n${d.hint ?? ''}`;
    if (!diagnosed.has(key)) out.push(d);
    diagnosed.add(key);
  };
  return { fail, nodeAt, edgeAt, out };
}

/** Architecture: hosts, PEs, links. */
function architecture(doc: ProjectDocument, pePaths: string[], linkPaths: string[], fail: Fail): { pes: ModelPe[]; pe: Map<PeId, ModelPe> } {
  const hosts = new Set<string>();
  const shared = new Map<string, { bytes: number; path: string }>();
  doc.arch.hosts.forEach((h, i) => {
    if (hosts.has(h.id)) fail(`arch.hosts[${i}].id`, `duplicate host id "${h.id}"`, 'give each host its own id');
    hosts.add(h.id);
    if (h.cpuMemory !== undefined) shared.set(h.id, { bytes: h.cpuMemory, path: `arch.hosts[${i}].cpuMemory` });
  });
  const pes: ModelPe[] = [];
  const pe = new Map<PeId, ModelPe>();
  doc.arch.pes.forEach((p, i) => {
    const at = pePaths[i].startsWith('arch.pes') ? pePaths[i] : pePaths[i].replace(/\.\w+Memory$/, '');
    if (pe.has(peId(p.id)))
      return fail(at.startsWith('arch.pes') ? `${at}.id` : at, `duplicate PE id "${p.id}"`, 'give each PE its own id (a host shorthand may already define it)');
    if (!hosts.has(p.host)) fail(`${at}.host`, `host "${p.host}" does not exist`, `add it to arch.hosts or use one of: ${[...hosts].join(', ')}`);
    const m: ModelPe = {
      id: peId(p.id),
      index: pes.length,
      path: pePaths[i].startsWith('arch.pes') ? `${pePaths[i]}.memory` : pePaths[i],
      host: hostId(p.host),
      kind: p.kind,
      memory: p.memory,
      flops: p.flops,
      memoryBandwidth: p.memoryBandwidth,
      links: [],
      neighbours: [],
    };
    if (p.kind === 'cpu' && shared.has(p.host)) m.shared = shared.get(p.host);
    pes.push(m);
    pe.set(m.id, m);
  });
  doc.arch.links.forEach((l, i) => {
    const at = linkPaths[i];
    const a = pe.get(peId(l.a));
    const b = pe.get(peId(l.b));
    if (!a) fail(`${at}.a`, `PE "${l.a}" does not exist`, 'link two PEs listed in arch.pes or made by a host shorthand');
    if (!b) fail(`${at}.b`, `PE "${l.b}" does not exist`, 'link two PEs listed in arch.pes or made by a host shorthand');
    if (!a || !b) return;
    if (a === b) return fail(at, `link from "${l.a}" to itself`, 'a link joins two different PEs');
    a.links.push(l);
    a.neighbours.push(b.id);
    b.links.push(l);
    b.neighbours.push(a.id);
  });
  return { pes, pe };
}

/** The application's nodes as checked so far, and what the edge checks need to know of them. */
interface AppNodes {
  nodes: ModelNode[];
  node: Map<NodeId, ModelNode>;
  /** Ids of nodes whose kernel is unknown: they exist (edges and mapping may name them) but have no ports to check. */
  unknownKernel: Set<string>;
  /** Ids of nodes with a param out of its range: their data types would only repeat that error. */
  badParams: Set<string>;
  /** Indices of scan nodes lowering left as written (what stopped them is named by the edge checks). */
  unexpanded: number[];
}

/** Application: nodes, their kernels and params, their `requires`. */
function appNodes(doc: ProjectDocument, lowered: Lowered, r: Reporter): AppNodes {
  const { fail, nodeAt, out } = r;
  const nodes: ModelNode[] = [];
  const node = new Map<NodeId, ModelNode>();
  // Ids of nodes whose kernel is unknown: they exist (edges and mapping may name them) but
  // have no ports to check.
  const unknownKernel = new Set<string>();
  // Ids of nodes with a param out of its range: their data types would only repeat that error.
  const badParams = new Set<string>();
  const unexpanded: number[] = [];
  doc.app.nodes.forEach((n, i) => {
    if (node.has(nodeId(n.id))) return fail(`${nodeAt(i)}.id`, `duplicate node id "${n.id}"`, 'give each node its own id');
    // A scan node lowering left as written: what stopped it (its input edge, its producer) is named below.
    if (typeof n.kernel !== 'string') {
      unknownKernel.add(n.id);
      unexpanded.push(i);
      return;
    }
    const kernel = findKernel(n.kernel);
    if (!kernel) {
      unknownKernel.add(n.id);
      return fail(
        `${nodeAt(i)}.kernel`,
        `unknown kernel "${n.kernel}"`,
        `nearest registered: ${nearestKernels(n.kernel!).join(', ')}; a package's kernels need --kernels PATH_OR_PACKAGE`,
      );
    }
    // for-in sees the keys in Object.keys order without building that array per node.
    for (const name in n.params) {
      if (!Object.hasOwn(n.params, name)) continue;
      const value = n.params[name];
      const spec = kernel.params[name];
      if (!spec)
        fail(`${nodeAt(i)}.params.${name}`, `kernel ${kernel.id} has no param "${name}"`, `params: ${Object.keys(kernel.params).join(', ') || 'none'}`);
      else {
        const problem = paramProblem(name, value, spec);
        if (problem) {
          badParams.add(n.id);
          fail(`${nodeAt(i)}.params.${name}`, ...problem);
        }
      }
    }
    const params = defaults(kernel, n.params);
    // A variadic kernel's node gets the spec with its ports expanded for its params (`in0`..);
    // every later pass reads ports from here, so arity is never assumed.
    let own: KernelSpec;
    try {
      own = specFor(kernel, params);
    } catch (e) {
      unknownKernel.add(n.id);
      return fail(
        `${nodeAt(i)}.params${kernel.params.ports ? '.ports' : ''}`,
        `node "${n.id}" (${kernel.id}): ${e instanceof Error ? e.message : String(e)}`,
        'declare its ports as the kernel describes',
      );
    }
    const m: ModelNode = { id: nodeId(n.id), index: i, kernel: own, params, pe: peId(''), peIndex: -1 };
    const mark = lowered.scanMarks?.[i];
    if (mark) m.scan = mark;
    if (n.requires?.length) {
      const r = parseRequires(n.requires, `${nodeAt(i)}.requires`);
      out.push(...r.diagnostics);
      m.requires = r.clauses;
    }
    nodes.push(m);
    node.set(m.id, m);
  });
  return { nodes, node, unknownKernel, badParams, unexpanded };
}

/** The kernel versions the document was made with, against the registry's. */
function kernelVersions(doc: ProjectDocument, out: Diagnostic[]): void {
  for (const [id, made] of Object.entries(doc.kernels ?? {})) {
    const now = findKernel(id);
    if (now && doc.app.nodes.some((n) => n.kernel === id) && majorOf(now.version) !== majorOf(made)) {
      out.push(
        warning(
          `kernels.${id}`,
          `the document was made with ${id} ${made}; the registry has ${now.version} (from ${now.package ?? 'builtin'}), another major version`,
          `check the nodes using ${id} against ${now.version}, then save the document again`,
        ),
      );
    }
  }
}

/** What the document says of a PE for a `cores` clause: a CPU PE's host's CPU PEs (a GPU reports no cores). */
function coresOf(on: ModelPe, pes: readonly ModelPe[]): PeCapabilities {
  if (on.kind !== 'cpu') return { kind: on.kind };
  let cores = 0;
  for (const x of pes) if (x.kind === 'cpu' && x.host === on.host) cores++;
  return { kind: 'cpu', cores };
}

/** Mapping: every entry names a node and a PE, every node is mapped, and onto a PE that can run it (kind, GPU-only kernels, custom WGSL bindings). */
function mapping(doc: ProjectDocument, nodes: ModelNode[], node: Map<NodeId, ModelNode>, pes: ModelPe[], pe: Map<PeId, ModelPe>, r: Reporter): void {
  const { fail, nodeAt } = r;
  for (const k of Object.keys(doc.mapping)) {
    const v = doc.mapping[k];
    const n = node.get(nodeId(k));
    if (!n) {
      if (!doc.app.nodes.some((x) => x.id === k)) fail(`mapping.${k}`, `node "${k}" does not exist`, 'remove this entry or add the node to app.nodes');
      continue;
    }
    const on = pe.get(peId(v));
    // A host of several cores has no `cpu@<host>`: its first core is `cpu0@<host>`.
    const first = !on && v.startsWith('cpu@') ? pe.get(peId(`cpu0${v.slice(3)}`)) : undefined;
    if (first)
      fail(
        `mapping.${k}`,
        `PE "${v}" does not exist: host "${first.host}" has several CPU PEs`,
        `map it to ${first.id} (its first core) or another cpuK@${first.host}`,
      );
    else if (!on) fail(`mapping.${k}`, `PE "${v}" does not exist`, `map it to one of: ${listSome(pes.map((x) => x.id))}`);
    else {
      n.pe = on.id;
      n.peIndex = on.index;
    }
  }
  // Loops over the node and edge lists index them: build() runs once per compile, mostly before
  // V8 optimises it, and there for-of makes an iterator result per element (2 MB on the bench graph).
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (!Object.hasOwn(doc.mapping, n.id)) fail('mapping', `node "${n.id}" is not mapped`, `add "${n.id}": "<PE id>" to mapping`);
    // Kernels without a CPU twin (user WGSL) can only fire on a GPU PE.
    // Task-bag mode places tasks at run time (run/taskbag/): the mapping's PE is not where it runs.
    const on = n.pe && doc.options?.mode !== 'taskbag' ? pe.get(n.pe) : undefined;
    // The PE's kind is known now; the rest of `requires` is checked against the agents' reports (Coordinator.check).
    const kind =
      on && n.requires
        ? failingClause(
            { kind: on.kind },
            n.requires.filter((c) => c.key === 'kind'),
          )
        : undefined;
    if (on && kind)
      fail(
        `mapping.${n.id}`,
        `node "${n.id}" requires ${kind.text}, but is mapped to ${on.id}, a ${on.kind} PE`,
        `map it to a PE meeting ${kind.text}: ${listSome(pes.filter((x) => !failingClause({ kind: x.kind }, [kind])).map((x) => x.id))}`,
      );
    // So are a host's cores: its CPU PEs as the document lists them (`cpus: N`); the agents' reports are checked again before a run.
    const coreClauses = on && !kind && n.requires ? n.requires.filter((c) => c.key === 'cores') : [];
    const cores = coreClauses.length ? failingClause(coresOf(on!, pes), coreClauses) : undefined;
    if (on && cores) {
      const meet = pes.filter((x) => !failingClause(coresOf(x, pes), [cores])).map((x) => x.id);
      fail(
        `mapping.${n.id}`,
        on.kind === 'cpu'
          ? `node "${n.id}" requires ${cores.text}, but is mapped to ${on.id}, on host "${on.host}" with ${coresOf(on, pes).cores} CPU PE${coresOf(on, pes).cores === 1 ? '' : 's'}`
          : `node "${n.id}" requires ${cores.text}, but is mapped to ${on.id}, a gpu PE (cores are a CPU PE's host's)`,
        meet.length ? `map it to a PE meeting ${cores.text}: ${listSome(meet)}` : `give a host enough CPU PEs ("cpus": N in arch.hosts) and map it there`,
      );
    }
    if (n.kernel.gpuOnly && on && on.kind === 'cpu') {
      const gpus = pes.filter((x) => x.kind === 'gpu').map((x) => x.id);
      fail(
        `mapping.${n.id}`,
        `node "${n.id}" (${n.kernel.id}) runs on GPU PEs only, but is mapped to the CPU PE ${on.id}`,
        gpus.length ? `map it to a GPU PE: ${listSome(gpus)}` : 'map it to a GPU PE (add one to arch.pes)',
      );
    }
    if (n.kernel.id === CUSTOM_WGSL && String(n.params.source ?? '').trim() === '') {
      fail(
        `${nodeAt(n.index)}.params.source`,
        `node "${n.id}" (${CUSTOM_WGSL}) has an empty WGSL source`,
        'write a compute module with @compute @workgroup_size(64) fn main, reading binding 0 and writing binding 1',
      );
    } else if (n.kernel.id === CUSTOM_WGSL) {
      // The module binds the node's ports in order (then, optionally, info): checked here, not at the first run.
      const wrong = bindingProblems(
        String(n.params.source),
        n.kernel.inputs.map((p) => p.name),
        n.kernel.outputs.map((p) => p.name),
        'optional',
      );
      if (wrong.length)
        fail(
          `${nodeAt(n.index)}.params.source`,
          `node "${n.id}" (${CUSTOM_WGSL}): its WGSL bindings do not match its ports: ${wrong.join('; ')}`,
          'bind the ports in order (inputs var<storage, read>, outputs var<storage, read_write>), then info var<uniform>, or change params.ports',
        );
    }
  }
}

/** Edges: ends exist, ports exist, types agree (rates and token ranges too), delays' initial tokens fit; and which input each edge feeds. */
function appEdges(doc: ProjectDocument, app: AppNodes, r: Reporter): { edges: ModelEdges; ports: PortSlots; edgeSlot: Int32Array; fedCount: Int32Array } {
  const { fail, edgeAt, nodeAt } = r;
  const { nodes, node, unknownKernel, badParams } = app;
  // The columns are filled for the edges that pass (the model is only used when all do).
  const edgeCount = doc.app.edges.length;
  const edges = edgeColumns(edgeCount);
  // Port rates of lowered multi-rate nodes (tokens per firing), checked once per node.
  const rates = checkRates(doc, nodes, nodeAt, fail);
  const ports = portSlots(doc, nodes);
  const { firstInput, firstOutput, inputCount, outputCount } = ports;
  // The input port (its position counted from firstInput) each edge feeds; -1 for none. An
  // input fed in parts has several edges (checked once all are known: checkParts).
  const edgeSlot = new Int32Array(edgeCount).fill(-1);
  const fedCount = new Int32Array(inputCount);
  const outType: (DataType | undefined)[] = new Array(outputCount);
  // A plain array, not a Float64Array: a value read from a Float64Array is a boxed double, and
  // storing one makes V8 box the \`bytes\` field of every edge, buffer and transfer built from it
  // (131,000 extra heap numbers on the 10,000-node bench graph).
  const outBytes: number[] = new Array(outputCount).fill(0);
  const portType = portTypes(doc, r);
  doc.app.edges.forEach((e, i) => {
    const from = node.get(nodeId(e.from.node));
    const to = node.get(nodeId(e.to.node));
    // A node whose kernel is unknown is reported once, where it is declared: its edges are not
    // checked further. The input an edge from a missing or unknown node feeds counts as fed
    // (the edge is the mistake, not the input).
    const fromUnknown = !from && unknownKernel.has(e.from.node);
    const toUnknown = !to && unknownKernel.has(e.to.node);
    if (!from && !fromUnknown) fail(edgeAt(i), `node "${e.from.node}" does not exist`, 'connect nodes listed in app.nodes');
    if (!to && !toUnknown) fail(edgeAt(i), `node "${e.to.node}" does not exist`, 'connect nodes listed in app.nodes');
    if (!from && to) {
      const j = portIndex(to.kernel.inputs, e.to.port);
      if (j >= 0) fedCount[(edgeSlot[i] = firstInput[to.index] + j)]++;
    }
    if (!from || !to) return;
    const outIndex = portIndex(from.kernel.outputs, e.from.port);
    const outPort = from.kernel.outputs[outIndex];
    const inIndex = portIndex(to.kernel.inputs, e.to.port);
    const inPort = to.kernel.inputs[inIndex];
    if (!outPort)
      fail(
        `${edgeAt(i)}.from.port`,
        `node "${from.id}" (${from.kernel.id}) has no output port "${e.from.port}"`,
        `outputs: ${from.kernel.outputs.map((o) => o.name).join(', ') || 'none'}`,
      );
    if (!inPort)
      fail(
        `${edgeAt(i)}.to.port`,
        `node "${to.id}" (${to.kernel.id}) has no input port "${e.to.port}"`,
        `inputs: ${to.kernel.inputs.map((o) => o.name).join(', ') || 'none'}`,
      );
    if (!outPort || !inPort) return;
    const slot = firstInput[to.index] + inIndex;
    fedCount[(edgeSlot[i] = slot)]++;
    if (badParams.has(from.id) || badParams.has(to.id)) return;
    // An output feeding several edges resolves its type once (failures are reported per edge).
    const out = firstOutput[from.index] + outIndex;
    const cached = outType[out];
    const type = cached ?? portType(from, outPort.type);
    if (type && !cached) {
      outType[out] = type;
      outBytes[out] = dataTypeBytes(type);
    }
    const want = portType(to, inPort.type);
    if (!type || !want) return;
    edges.outputBytes[i] = outBytes[out];
    if (!e.fromTokens && !e.toTokens && !rates.has(from.index) && !rates.has(to.index)) {
      // Equal types are one object (interned above), so most edges pass on identity.
      if (type !== want && !sameDataType(type, want)) {
        return fail(
          edgeAt(i),
          `type mismatch: ${from.id}.${outPort.name} is ${formatDataType(type)} but ${to.id}.${inPort.name} expects ${formatDataType(want)}`,
          `give "${from.id}" and "${to.id}" matching size params`,
        );
      }
      edges.bytes[i] = outBytes[out];
    } else if (!tokenEdge(e, i, edgeAt(i), from, outPort.name, type, rates, to, inPort.name, want, edges, fail)) return;
    if (e.delay) {
      edges.delay[i] = e.delay as number;
      edges.init[i] = e.init as InitSpec;
      if (!initFits(e, i, edgeAt(i), from.id, outPort.name, edges.bytes[i], type, fail)) return;
    }
    edges.from[i] = from.index;
    edges.fromPort[i] = outPort.name;
    edges.to[i] = to.index;
    edges.toPort[i] = inPort.name;
    edges.type[i] = type;
  });
  return { edges, ports, edgeSlot, fedCount };
}

/** The model's edge columns for `count` edges, empty. */
function edgeColumns(count: number): ModelEdges {
  return {
    count,
    from: new Int32Array(count),
    fromPort: new Array(count),
    to: new Int32Array(count),
    toPort: new Array(count),
    type: new Array(count),
    bytes: new Array(count),
    fromOffset: new Float64Array(count),
    toOffset: new Float64Array(count),
    outputBytes: new Array(count),
    delay: new Int32Array(count),
    init: new Array(count),
  };
}

/** Where each node's ports sit in the flat per-port arrays of the edge checks. */
interface PortSlots {
  /** The edge feeding each input port, at firstInput[node index] + port index; -1 for none. */
  firstInput: Int32Array;
  /** The resolved type (and its size in bytes) of each output port, at firstOutput[node index] + port index. */
  firstOutput: Int32Array;
  inputCount: number;
  outputCount: number;
}

function portSlots(doc: ProjectDocument, nodes: ModelNode[]): PortSlots {
  const firstInput = new Int32Array(doc.app.nodes.length + 1);
  const firstOutput = new Int32Array(doc.app.nodes.length);
  let inputCount = 0;
  let outputCount = 0;
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    firstInput[n.index] = inputCount;
    inputCount += n.kernel.inputs.length;
    firstOutput[n.index] = outputCount;
    outputCount += n.kernel.outputs.length;
  }
  return { firstInput, firstOutput, inputCount, outputCount };
}

/**
 * A node's port type from its type function, interned: one object per distinct data type (the
 * IG's buffers and the model's edges share them, read only), instead of keeping one type and
 * shape per output for the whole compile.
 */
function portTypes(doc: ProjectDocument, r: Reporter): (n: ModelNode, fn: (p: Params) => DataType) => DataType | undefined {
  const { fail, nodeAt } = r;
  const distinct = new Map<string, DataType>();
  // The last type function each node resolved and its result (one of `distinct`), by node
  // index: a kernel's ports mostly share one function (matrix in, matrix out), so a node
  // resolves it once, not once per port and edge. Failures are not kept: each edge reports its own.
  const lastFn: (((p: Params) => DataType) | undefined)[] = new Array(doc.app.nodes.length);
  const lastType: (DataType | undefined)[] = new Array(doc.app.nodes.length);
  const portType = (n: ModelNode, fn: (p: Params) => DataType): DataType | undefined => {
    if (lastFn[n.index] === fn) return lastType[n.index];
    let type = resolve(n, fn, fail, nodeAt(n.index));
    if (!type) return undefined;
    const key = formatDataType(type);
    const seen = distinct.get(key);
    if (seen) type = seen;
    else distinct.set(key, type);
    lastFn[n.index] = fn;
    lastType[n.index] = type;
    return type;
  };
  return portType;
}

/** After the edges, the graph as a whole: no cycle without a delay, an architecture path for every edge between PEs, scans' context within their workers' memory. */
function graphProblems(model: Model, r: Reporter): void {
  const { doc, nodes, edges, pes } = model;
  const { fail, edgeAt, out } = r;
  // A cycle is legal through a delayed edge (its initial tokens start the loop): look for one
  // among the edges without a delay.
  const cycle = edges.delay.some((d) => d > 0) ? findCycle(nodes, ...undelayed(edges)) : findCycle(nodes, edges.from, edges.to);
  if (cycle)
    fail(
      'app.edges',
      `cycle ${cycle.join(' -> ')} has no delay: no node of it can fire first`,
      'give one of its edges initial tokens ("delay": 1 and an "init"), or remove one of these edges',
    );
  else model.derived = deriveExpectations(doc, nodes, edges);

  // Every edge between two PEs needs an architecture path (in static mode: task-bag agents pull
  // from one another whatever the mapping says).
  const component = components(pes);
  const reported = new Set<string>();
  for (let i = 0; i < (doc.options?.mode === 'taskbag' ? 0 : edges.count); i++) {
    const from = nodes[edges.from[i]];
    const to = nodes[edges.to[i]];
    const a = from.pe;
    const b = to.pe;
    if (component.get(a) !== component.get(b) && !reported.has(`${a}>${b}`)) {
      reported.add(`${a}>${b}`);
      fail(edgeAt(i), `no architecture path from ${a} to ${b}`, `add a link between them, or map "${from.id}" and "${to.id}" to connected PEs`);
    }
  }
  // A scan's replicated context against its workers' PE memory, named by the scan (scan-context.ts).
  out.push(...modelContextProblems(model));
}

/** The ends of the edges without a delay (a cycle through them alone cannot start). */
function undelayed(edges: ModelEdges): [Int32Array, Int32Array] {
  const keep: number[] = [];
  for (let e = 0; e < edges.count; e++) if (edges.delay[e] === 0) keep.push(e);
  return [Int32Array.from(keep, (e) => edges.from[e]), Int32Array.from(keep, (e) => edges.to[e])];
}

/**
 * A delayed edge's initial tokens must be data of the edge's type: a constant the element type
 * holds exactly, or a source node whose one output has the edge's type (its params checked
 * as any node's).
 */
function initFits(
  e: ProjectDocument['app']['edges'][number],
  i: number,
  at: string,
  from: string,
  port: string,
  bytes: number,
  type: DataType,
  fail: (p: string, m: string, h?: string) => void,
): boolean {
  const init = e.init as InitSpec | undefined;
  if (!init) return true;
  const what = `the initial tokens of ${from}.${port} -> ${e.to.node}.${e.to.port}`;
  if ('value' in init) {
    const v = init.value;
    const range = { u32: [0, 2 ** 32 - 1], i32: [-(2 ** 31), 2 ** 31 - 1], u8: [0, 255] }[type.element as string];
    if (range && (!Number.isInteger(v) || v < range[0] || v > range[1])) {
      fail(`${at}.init`, `${what} are ${formatDataType(type)}, and ${v} is not a ${type.element} value`, `use an integer from ${range[0]} to ${range[1]}`);
      return false;
    }
    return true;
  }
  const kernel = findKernel(init.kernel);
  if (!kernel) return (fail(`${at}.init`, `${what}: init node "${init.node}" has an unknown kernel "${init.kernel}"`), false);
  for (const [name, v] of Object.entries(init.params)) {
    const spec = kernel.params[name];
    const problem = spec ? paramProblem(name, v, spec) : [`param "${name}" is not a param of ${kernel.id}`];
    if (problem)
      return (
        fail(
          `${at}.init`,
          `init node "${init.node}" (${kernel.id}): ${problem[0]}`,
          problem[1] ?? `params of ${kernel.id}: ${Object.keys(kernel.params).join(', ')}`,
        ),
        false
      );
  }
  let made: DataType;
  try {
    made = specFor(kernel, init.params).outputs[0].type(init.params);
  } catch (x) {
    return (
      fail(
        `${at}.init`,
        `init node "${init.node}": its params give no data type (${x instanceof Error ? x.message : String(x)})`,
        'check its params against the kernel',
      ),
      false
    );
  }
  if (e.fromTokens || e.toTokens || bytes !== dataTypeBytes(type)) {
    fail(`${at}.init`, `${what} are parts of a multi-rate edge's tokens; an init node makes whole outputs`, 'use a constant init on a multi-rate edge');
    return false;
  }
  if (!sameDataType(made, type)) {
    fail(
      `${at}.init`,
      `init node "${init.node}" makes ${formatDataType(made)} but ${what} are ${formatDataType(type)}`,
      `give "${init.node}" the size params of "${from}"`,
    );
    return false;
  }
  return true;
}

/** What is wrong with a param value, as [message, hint]; undefined when it is right. */
function paramProblem(name: string, v: ParamValue, spec: ParamSpec): [string, string?] | undefined {
  if (spec.type === 'int' || spec.type === 'float') {
    if (typeof v !== 'number' || Number.isNaN(v)) return [`param "${name}" must be a number, not ${describe(v)}`, `use a number${rangeOf(spec)}`];
    if (!Number.isFinite(v)) return [`param "${name}" must be finite, not ${v}`, `use a number${rangeOf(spec)}`];
    if (spec.type === 'int' && !Number.isInteger(v)) return [`param "${name}" must be an integer, not ${v}`, `use a whole number${rangeOf(spec)}`];
    if (spec.min !== undefined && v < spec.min) return [`param "${name}" is ${v}, below its minimum ${spec.min}`, `use a value${rangeOf(spec)}`];
    if (spec.max !== undefined && v > spec.max) return [`param "${name}" is ${v}, above its maximum ${spec.max}`, `use a value${rangeOf(spec)}`];
  } else if (spec.type === 'bool') {
    if (typeof v !== 'boolean') return [`param "${name}" must be true or false, not ${describe(v)}`];
  } else if (spec.type === 'enum') {
    if (typeof v !== 'string' || !spec.values?.includes(v)) return [`param "${name}" must be one of ${(spec.values ?? []).join(', ')}, not ${describe(v)}`];
  } else if (typeof v !== 'string') {
    return [`param "${name}" must be a string, not ${describe(v)}`];
  }
  return undefined;
}

/**
 * ` (range min .. max)` for a numeric param with bounds, else empty. A function of its own, not
 * a closure in paramProblem: that closure was made for every param checked, 7.8 MB per
 * 10,000-node compile.
 */
function rangeOf(spec: ParamSpec): string {
  return spec.min !== undefined || spec.max !== undefined ? ` (range ${spec.min ?? '-inf'} .. ${spec.max ?? 'inf'})` : '';
}

function resolve(n: ModelNode, type: (p: ModelNode['params']) => DataType, fail: (p: string, m: string, h?: string) => void, at: string): DataType | undefined {
  try {
    const t = type(n.params);
    if (!positiveIntegers(t.shape)) {
      fail(`${at}.params`, `node "${n.id}" gives a data type of shape [${t.shape.join(', ')}]`, 'sizes must be positive integers; check the size params');
      return undefined;
    }
    return t;
  } catch (e) {
    fail(`${at}.params`, `node "${n.id}": its params give no data type (${e instanceof Error ? e.message : String(e)})`, 'check the params against the kernel');
    return undefined;
  }
}

/**
 * The first cycle found, as node ids with the first repeated at the end; undefined if acyclic.
 * Depth-first from each node in document order, successors in edge order; the graph is held as
 * typed arrays (successors grouped by source) so a 10,000-node DFG allocates no per-node frames.
 */
function findCycle(nodes: ModelNode[], edgeFrom: ArrayLike<number>, edgeTo: ArrayLike<number>): NodeId[] | undefined {
  const size = nodes.reduce((most, n) => Math.max(most, n.index + 1), 0);
  const byIndex: ModelNode[] = new Array(size);
  for (const n of nodes) byIndex[n.index] = n;
  // Successors of node i: succ[start[i] .. start[i + 1]), in edge order.
  const { start, succ } = successorLists(size, edgeFrom, edgeTo);
  // By node index: 0 unvisited, 1 on the stack, 2 done.
  const state = new Uint8Array(size);
  const stack = new Int32Array(size);
  const cursor = new Int32Array(size);
  for (const root of nodes) {
    if (state[root.index]) continue;
    let top = 0;
    stack[0] = root.index;
    cursor[0] = start[root.index];
    state[root.index] = 1;
    while (top >= 0) {
      const at = stack[top];
      if (cursor[top] >= start[at + 1]) {
        state[at] = 2;
        top--;
        continue;
      }
      const next = succ[cursor[top]++];
      const s = state[next];
      if (s === 1) {
        let from = 0;
        while (stack[from] !== next) from++;
        const cycle: NodeId[] = [];
        for (let k = from; k <= top; k++) cycle.push(byIndex[stack[k]].id);
        cycle.push(byIndex[next].id);
        return cycle;
      }
      if (s === 0) {
        state[next] = 1;
        stack[++top] = next;
        cursor[top] = start[next];
      }
    }
  }
  return undefined;
}

function components(pes: ModelPe[]): Map<PeId, number> {
  const comp = new Map<PeId, number>();
  const byId = new Map(pes.map((p) => [p.id, p]));
  let c = 0;
  for (const start of pes) {
    if (comp.has(start.id)) continue;
    const stack = [start];
    comp.set(start.id, c);
    while (stack.length) {
      for (const to of stack.pop()!.neighbours) {
        if (!comp.has(to)) {
          comp.set(to, c);
          stack.push(byId.get(to)!);
        }
      }
    }
    c++;
  }
  return comp;
}

function positiveIntegers(shape: readonly number[]): boolean {
  for (const d of shape) if (!Number.isInteger(d) || d < 1) return false;
  return true;
}

/** Position of the port named `name`, -1 for none. */
function portIndex(ports: readonly { name: string }[], name: string): number {
  for (let i = 0; i < ports.length; i++) if (ports[i].name === name) return i;
  return -1;
}

/** 0, 1, ..., n - 1. */
function identity(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}

// withDefaults() of the kernel registry, with each kernel's (static) param list read once
// rather than once per node.
const paramLists = new WeakMap<KernelSpec, [string, ParamSpec][]>();
function defaults(kernel: KernelSpec, params: Params | undefined): Params {
  let list = paramLists.get(kernel);
  if (!list) paramLists.set(kernel, (list = Object.entries(kernel.params)));
  const out: Params = {};
  for (const [name, spec] of list) out[name] = params?.[name] ?? spec.default;
  return out;
}

function listSome(ids: string[]): string {
  return ids.length > 8 ? `${ids.slice(0, 8).join(', ')}, ...` : ids.join(', ');
}

// Lowered multi-rate graphs (document/rates.ts): port rates, edges carrying some of a port's
// tokens, inputs fed in parts. A port of rate r splits its data into r equal tokens along the
// first dimension, so token t of a port of B bytes is bytes [t * B / r, (t + 1) * B / r).

/** Node index -> its port rates (tokens per firing), for nodes that declare any; each rate checked (positive integer dividing the port's first dimension). */
function checkRates(
  doc: ProjectDocument,
  nodes: ModelNode[],
  nodeAt: (i: number) => string,
  fail: (p: string, m: string, h?: string) => void,
): Map<number, Record<string, number>> {
  const out = new Map<number, Record<string, number>>();
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    const written = doc.app.nodes[n.index].rates;
    if (!written) continue;
    const own: Record<string, number> = {};
    for (const port in written) {
      if (!Object.hasOwn(written, port)) continue;
      const at = `${nodeAt(n.index)}.rates.${port}`;
      const spec = n.kernel.inputs.find((p) => p.name === port) ?? n.kernel.outputs.find((p) => p.name === port);
      // A wrong rate is reported here once; its edges are not checked against it (NaN).
      own[port] = NaN;
      if (!spec) {
        fail(
          at,
          `node "${n.id}" (${n.kernel.id}) has no port "${port}"`,
          `ports: ${[...n.kernel.inputs, ...n.kernel.outputs].map((p) => p.name).join(', ') || 'none'}`,
        );
        continue;
      }
      const r = written[port];
      if (typeof r !== 'number' || !Number.isInteger(r) || r < 1) {
        fail(at, `the rate of ${n.id}.${port} is ${describe(r)}, not a whole number of tokens`, 'a rate is a positive integer (tokens per firing)');
        continue;
      }
      let type: DataType | undefined;
      try {
        type = spec.type(n.params);
      } catch {
        type = undefined; // the edges report a type that cannot be resolved
      }
      if (type && type.shape.length && type.shape[0] % r !== 0) {
        fail(
          at,
          `${n.id}.${port} is ${formatDataType(type)}: its first dimension ${type.shape[0]} does not split into ${r} equal tokens`,
          `use a rate dividing ${type.shape[0]}, or a size that ${r} divides`,
        );
        continue;
      }
      own[port] = r;
    }
    out.set(n.index, own);
  }
  return out;
}

/** `kind<element>[rows/r x ...]`: one token of a port of type t and rate r. */
function tokenType(t: DataType, r: number): string {
  return formatDataType({ ...t, shape: t.shape.length ? [t.shape[0] / r, ...t.shape.slice(1)] : t.shape });
}

/**
 * An edge of a multi-rate graph: its token ranges are ranges of its ports' rates, it lands as
 * many tokens as it takes, and a token of the producer's port is a token of the consumer's
 * (element type and bytes). Fills its byte range; false when something is wrong (reported).
 */
function tokenEdge(
  e: ProjectDocument['app']['edges'][number],
  i: number,
  at: string,
  from: ModelNode,
  outName: string,
  type: DataType,
  rates: Map<number, Record<string, number>>,
  to: ModelNode,
  inName: string,
  want: DataType,
  edges: ModelEdges,
  fail: (p: string, m: string, h?: string) => void,
): boolean {
  const rOut = rates.get(from.index)?.[outName] ?? 1;
  const rIn = rates.get(to.index)?.[inName] ?? 1;
  if (Number.isNaN(rOut) || Number.isNaN(rIn)) return false;
  const ft = e.fromTokens ?? { first: 0, count: rOut, of: rOut };
  const tt = e.toTokens ?? { first: 0, count: rIn, of: rIn };
  let ok = true;
  const range = (name: 'fromTokens' | 'toTokens', r: { first: number; count: number; of: number }, rate: number, node: ModelNode, port: string) => {
    if (![r.first, r.count, r.of].every(Number.isInteger) || r.first < 0 || r.count < 1 || r.first + r.count > r.of) {
      ok = false;
      return fail(
        `${at}.${name}`,
        `${name} {first: ${r.first}, count: ${r.count}, of: ${r.of}} is not a range of ${node.id}.${port}'s tokens`,
        'whole numbers with first >= 0, count >= 1 and first + count <= of',
      );
    }
    // `of` is the port's rate, or a multiple of it dividing its first dimension: finer tokens
    // (a scan's blocks and results address single elements: document/scan.ts).
    const first = (name === 'fromTokens' ? type : want).shape[0] ?? 1;
    if (r.of !== rate && (r.of % rate !== 0 || first % r.of !== 0)) {
      ok = false;
      fail(
        `${at}.${name}.of`,
        `${node.id}.${port} has ${rate} token${rate === 1 ? '' : 's'} per firing (its rate), not ${r.of}`,
        `set of to ${rate}, or give ${node.id}.${port} the rate ${r.of}`,
      );
    }
  };
  range('fromTokens', ft, rOut, from, outName);
  range('toTokens', tt, rIn, to, inName);
  if (!ok) return false;
  if (ft.count !== tt.count) {
    fail(
      at,
      `the edge takes ${ft.count} token${ft.count === 1 ? '' : 's'} of ${from.id}.${outName} but lands ${tt.count} in ${to.id}.${inName}`,
      'give fromTokens and toTokens the same count',
    );
    return false;
  }
  const outToken = dataTypeBytes(type) / ft.of;
  const inToken = dataTypeBytes(want) / tt.of;
  if (type.element !== want.element || outToken !== inToken) {
    fail(
      at,
      `token type mismatch: a token of ${from.id}.${outName} is ${tokenType(type, ft.of)} but ${to.id}.${inName} takes ${tokenType(want, tt.of)}`,
      `give "${from.id}" and "${to.id}" sizes and rates that make equal tokens (first dimension / rate)`,
    );
    return false;
  }
  edges.bytes[i] = ft.count * outToken;
  edges.fromOffset[i] = ft.first * outToken;
  edges.toOffset[i] = tt.first * inToken;
  return true;
}

/**
 * The edges feeding each node's input ports (model.inputs): per port in kernel order, its edge
 * or its parts in token order. A port is fed by exactly one edge, or by parts (edges with
 * `toTokens`) that tile its tokens: no gap, no overlap, no whole edge beside them.
 */
function inputLists(
  doc: ProjectDocument,
  nodes: ModelNode[],
  firstInput: Int32Array,
  inputCount: number,
  edgeSlot: Int32Array,
  fedCount: Int32Array,
  edgeAt: (i: number) => string,
  nodeAt: (i: number) => string,
  fail: (p: string, m: string, h?: string) => void,
): EdgeLists {
  const slotStart = new Int32Array(inputCount + 1);
  for (let s = 0; s < inputCount; s++) slotStart[s + 1] = slotStart[s] + fedCount[s];
  const list = new Int32Array(slotStart[inputCount]);
  const fill = slotStart.slice(0, inputCount);
  for (let e = 0; e < edgeSlot.length; e++) if (edgeSlot[e] >= 0) list[fill[edgeSlot[e]]++] = e;
  const docEdges = doc.app.edges;
  const start = new Int32Array(doc.app.nodes.length + 1);
  let at = 0;
  for (let i = 0, k = 0; i <= doc.app.nodes.length; i++) {
    // Nodes whose kernel is unknown have no ports: they start where the next one does.
    while (k < nodes.length && nodes[k].index < i) k++;
    if (k < nodes.length && nodes[k].index === i) at = slotStart[firstInput[i]];
    else if (k >= nodes.length) at = slotStart[inputCount];
    start[i] = at;
  }
  for (let k = 0; k < nodes.length; k++) {
    const n = nodes[k];
    const ports = n.kernel.inputs;
    for (let j = 0; j < ports.length; j++) {
      const s = firstInput[n.index] + j;
      const from = slotStart[s];
      const count = fedCount[s];
      const name = `${n.id}.${ports[j].name}`;
      if (count === 0) {
        fail(nodeAt(n.index), `input port "${ports[j].name}" of node "${n.id}" is not connected`, `add an edge to ${name}`);
        continue;
      }
      if (count === 1 && !docEdges[list[from]].toTokens) continue;
      const whole: number[] = [];
      const parts: number[] = [];
      for (let x = from; x < from + count; x++) (docEdges[list[x]].toTokens ? parts : whole).push(list[x]);
      if (!parts.length) {
        for (const e of whole.slice(1))
          fail(`${edgeAt(e)}.to`, `input ${name} is already fed by ${edgeAt(whole[0])}`, 'an input port takes exactly one edge; remove one of them');
        continue;
      }
      if (whole.length) {
        fail(
          `${edgeAt(whole[0])}.to`,
          `input ${name} is fed whole by ${edgeAt(whole[0])} and in parts by ${parts.map(edgeAt).join(', ')}`,
          'feed an input by one edge, or by one edge per part (toTokens) that together cover it: remove the whole edge or the parts',
        );
        continue;
      }
      // Ranges that are not whole numbers are reported with their edge (tokenEdge).
      if (!parts.every((e) => [docEdges[e].toTokens!.first, docEdges[e].toTokens!.count].every(Number.isInteger))) continue;
      parts.sort((a, b) => docEdges[a].toTokens!.first - docEdges[b].toTokens!.first || a - b);
      const of = docEdges[parts[0]].toTokens!.of;
      const mixed = parts.find((e) => docEdges[e].toTokens!.of !== of);
      if (mixed !== undefined) {
        fail(
          `${edgeAt(mixed)}.toTokens.of`,
          `the parts of ${name} count its tokens differently (${of} and ${docEdges[mixed].toTokens!.of})`,
          `give every part landing on ${name} the same of`,
        );
        continue;
      }
      let end = 0;
      let last = -1;
      for (const e of parts) {
        const t = docEdges[e].toTokens!;
        if (t.first > end)
          fail(
            `${edgeAt(e)}.toTokens`,
            `tokens ${end}..${t.first - 1} of ${name} are fed by no edge${last >= 0 ? ` (between ${edgeAt(last)} and ${edgeAt(e)})` : ''}`,
            `add an edge landing on tokens ${end}..${t.first - 1}, or widen a neighbour's toTokens`,
          );
        else if (t.first < end)
          fail(
            `${edgeAt(e)}.toTokens`,
            `${edgeAt(last)} and ${edgeAt(e)} both feed token ${t.first} of ${name}`,
            'give each token of the input exactly one edge: fix first and count',
          );
        end = Math.max(end, t.first + t.count);
        last = e;
      }
      if (end < of)
        fail(
          `${edgeAt(last)}.toTokens`,
          `tokens ${end}..${of - 1} of ${name} are fed by no edge (after ${edgeAt(last)})`,
          `add an edge landing on tokens ${end}..${of - 1}, or widen ${edgeAt(last)}'s toTokens`,
        );
      list.set(parts, from);
    }
  }
  return { start, edge: list };
}
