import { bindingProblems, CUSTOM_WGSL, dataTypeBytes, majorOf, findKernel, formatDataType, nearestKernels, sameDataType, specFor, type DataType, type KernelSpec, type ParamSpec, type ParamValue, type Params } from '@pipeloom/kernels/specs';
import { error, hasErrors, warning, type Diagnostic } from '../diagnostics.js';
import { hostId, nodeId, peId, type NodeId, type PeId } from '../ids.js';
import { migrate } from './migrate.js';
import type { EdgeLists, Model, ModelEdges, ModelNode, ModelPe } from './model.js';
import { normalizeWithOrigins } from './normalize.js';
import { lowerDocument, type LowerOptions, type Lowered } from './lower.js';
import { deriveExpectations } from './expectations.js';
import { checkShape, describe } from './shape.js';
import type { ProjectDocument } from './types.js';
import { successorLists } from '../util/csr.js';

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
  const { lowered, diagnostics } = lowerDocument(migrated.doc as unknown as ProjectDocument, opts);
  if (!lowered) return { diagnostics };
  const { doc, pePaths, linkPaths } = normalizeWithOrigins(lowered.doc);
  const model = build(doc, pePaths, linkPaths, lowered, diagnostics);
  return hasErrors(diagnostics) ? { diagnostics } : { diagnostics, model };
}

function build(doc: ProjectDocument, pePaths: string[], linkPaths: string[], lowered: Lowered, out: Diagnostic[]): Model {
  // Diagnostics name nodes and edges as the user wrote them (lowering keeps their paths).
  const nodeAt = (i: number) => lowered.nodePaths[i] ?? `app.nodes[${i}]`;
  const edgeAt = (i: number) => lowered.edgePaths[i] ?? `app.edges[${i}]`;
  const fail = (path: string, message: string, hint?: string) => out.push(error(path, message, hint));

  // Architecture: hosts, PEs, links.
  const hosts = new Set<string>();
  doc.arch.hosts.forEach((h, i) => {
    if (hosts.has(h.id)) fail(`arch.hosts[${i}].id`, `duplicate host id "${h.id}"`, 'give each host its own id');
    hosts.add(h.id);
  });
  const pes: ModelPe[] = [];
  const pe = new Map<PeId, ModelPe>();
  doc.arch.pes.forEach((p, i) => {
    const at = pePaths[i].startsWith('arch.pes') ? pePaths[i] : pePaths[i].replace(/\.\w+Memory$/, '');
    if (pe.has(peId(p.id))) return fail(at.startsWith('arch.pes') ? `${at}.id` : at, `duplicate PE id "${p.id}"`, 'give each PE its own id (a host shorthand may already define it)');
    if (!hosts.has(p.host)) fail(`${at}.host`, `host "${p.host}" does not exist`, `add it to arch.hosts or use one of: ${[...hosts].join(', ')}`);
    const m: ModelPe = { id: peId(p.id), index: pes.length, path: pePaths[i].startsWith('arch.pes') ? `${pePaths[i]}.memory` : pePaths[i], host: hostId(p.host), kind: p.kind, memory: p.memory, flops: p.flops, memoryBandwidth: p.memoryBandwidth, links: [], neighbours: [] };
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

  // Application: nodes, params.
  const nodes: ModelNode[] = [];
  const node = new Map<NodeId, ModelNode>();
  // Ids of nodes whose kernel is unknown: they exist (edges and mapping may name them) but
  // have no ports to check.
  const unknownKernel = new Set<string>();
  // Ids of nodes with a param out of its range: their data types would only repeat that error.
  const badParams = new Set<string>();
  doc.app.nodes.forEach((n, i) => {
    if (node.has(nodeId(n.id))) return fail(`${nodeAt(i)}.id`, `duplicate node id "${n.id}"`, 'give each node its own id');
    const kernel = findKernel(n.kernel!);
    if (!kernel) {
      unknownKernel.add(n.id);
      return fail(`${nodeAt(i)}.kernel`, `unknown kernel "${n.kernel}"`, `nearest registered: ${nearestKernels(n.kernel!).join(', ')}; a package's kernels need --kernels PATH_OR_PACKAGE`);
    }
    // for-in sees the keys in Object.keys order without building that array per node.
    for (const name in n.params) {
      if (!Object.hasOwn(n.params, name)) continue;
      const value = n.params[name];
      const spec = kernel.params[name];
      if (!spec) fail(`${nodeAt(i)}.params.${name}`, `kernel ${kernel.id} has no param "${name}"`, `params: ${Object.keys(kernel.params).join(', ') || 'none'}`);
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
      return fail(`${nodeAt(i)}.params${kernel.params.ports ? '.ports' : ''}`, `node "${n.id}" (${kernel.id}): ${e instanceof Error ? e.message : String(e)}`, 'declare its ports as the kernel describes');
    }
    const m: ModelNode = { id: nodeId(n.id), index: i, kernel: own, params, pe: peId(''), peIndex: -1 };
    nodes.push(m);
    node.set(m.id, m);
  });

  // The kernel versions the document was made with, against the registry's.
  for (const [id, made] of Object.entries(doc.kernels ?? {})) {
    const now = findKernel(id);
    if (now && doc.app.nodes.some((n) => n.kernel === id) && majorOf(now.version) !== majorOf(made)) {
      out.push(warning(`kernels.${id}`, `the document was made with ${id} ${made}; the registry has ${now.version} (from ${now.package ?? 'builtin'}), another major version`, `check the nodes using ${id} against ${now.version}, then save the document again`));
    }
  }

  // Mapping.
  for (const k of Object.keys(doc.mapping)) {
    const v = doc.mapping[k];
    const n = node.get(nodeId(k));
    if (!n) {
      if (!doc.app.nodes.some((x) => x.id === k)) fail(`mapping.${k}`, `node "${k}" does not exist`, 'remove this entry or add the node to app.nodes');
      continue;
    }
    const on = pe.get(peId(v));
    if (!on) fail(`mapping.${k}`, `PE "${v}" does not exist`, `map it to one of: ${listSome(pes.map((x) => x.id))}`);
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
    const on = n.pe ? pe.get(n.pe) : undefined;
    if (n.kernel.gpuOnly && on && on.kind === 'cpu') {
      const gpus = pes.filter((x) => x.kind === 'gpu').map((x) => x.id);
      fail(`mapping.${n.id}`, `node "${n.id}" (${n.kernel.id}) runs on GPU PEs only, but is mapped to the CPU PE ${on.id}`, gpus.length ? `map it to a GPU PE: ${listSome(gpus)}` : 'map it to a GPU PE (add one to arch.pes)');
    }
    if (n.kernel.id === CUSTOM_WGSL && String(n.params.source ?? '').trim() === '') {
      fail(`${nodeAt(n.index)}.params.source`, `node "${n.id}" (${CUSTOM_WGSL}) has an empty WGSL source`, 'write a compute module with @compute @workgroup_size(64) fn main, reading binding 0 and writing binding 1');
    } else if (n.kernel.id === CUSTOM_WGSL) {
      // The module binds the node's ports in order (then, optionally, info): checked here, not at the first run.
      const wrong = bindingProblems(String(n.params.source), n.kernel.inputs.map((p) => p.name), n.kernel.outputs.map((p) => p.name), 'optional');
      if (wrong.length) fail(`${nodeAt(n.index)}.params.source`, `node "${n.id}" (${CUSTOM_WGSL}): its WGSL bindings do not match its ports: ${wrong.join('; ')}`, 'bind the ports in order (inputs var<storage, read>, outputs var<storage, read_write>), then info var<uniform>, or change params.ports');
    }
  }

  // Edges: ends exist, ports exist, types agree, inputs fed once. The columns are filled for
  // the edges that pass (the model is only used when all do).
  const edgeCount = doc.app.edges.length;
  const edges: ModelEdges = {
    count: edgeCount,
    from: new Int32Array(edgeCount),
    fromPort: new Array(edgeCount),
    to: new Int32Array(edgeCount),
    toPort: new Array(edgeCount),
    type: new Array(edgeCount),
    bytes: new Array(edgeCount),
  };
  // The edge feeding each input port, at firstInput[node index] + port index; -1 for none.
  const firstInput = new Int32Array(doc.app.nodes.length + 1);
  // The resolved type (and its size in bytes) of each output port, at firstOutput[node index] + port index.
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
  const fedBy = new Int32Array(inputCount).fill(-1);
  const outType: (DataType | undefined)[] = new Array(outputCount);
  // One object per distinct data type: the IG's buffers and the model's edges share them (read
  // only), instead of keeping one type and shape per output for the whole compile.
  const distinct = new Map<string, DataType>();
  // A plain array, not a Float64Array: a value read from a Float64Array is a boxed double, and
  // storing one makes V8 box the \`bytes\` field of every edge, buffer and transfer built from it
  // (131,000 extra heap numbers on the 10,000-node bench graph).
  const outBytes: number[] = new Array(outputCount).fill(0);
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
      if (j >= 0) fedBy[firstInput[to.index] + j] = i;
    }
    if (!from || !to) return;
    const outIndex = portIndex(from.kernel.outputs, e.from.port);
    const outPort = from.kernel.outputs[outIndex];
    const inIndex = portIndex(to.kernel.inputs, e.to.port);
    const inPort = to.kernel.inputs[inIndex];
    if (!outPort) fail(`${edgeAt(i)}.from.port`, `node "${from.id}" (${from.kernel.id}) has no output port "${e.from.port}"`, `outputs: ${from.kernel.outputs.map((o) => o.name).join(', ') || 'none'}`);
    if (!inPort) fail(`${edgeAt(i)}.to.port`, `node "${to.id}" (${to.kernel.id}) has no input port "${e.to.port}"`, `inputs: ${to.kernel.inputs.map((o) => o.name).join(', ') || 'none'}`);
    if (!outPort || !inPort) return;
    const slot = firstInput[to.index] + inIndex;
    const earlier = fedBy[slot];
    if (earlier >= 0) return fail(`${edgeAt(i)}.to`, `input ${to.id}.${inPort.name} is already fed by ${edgeAt(earlier)}`, 'an input port takes exactly one edge; remove one of them');
    fedBy[slot] = i;
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
    // Equal types are one object (interned above), so most edges pass on identity.
    if (type !== want && !sameDataType(type, want)) {
      return fail(edgeAt(i), `type mismatch: ${from.id}.${outPort.name} is ${formatDataType(type)} but ${to.id}.${inPort.name} expects ${formatDataType(want)}`, `give "${from.id}" and "${to.id}" matching size params`);
    }
    edges.from[i] = from.index;
    edges.fromPort[i] = outPort.name;
    edges.to[i] = to.index;
    edges.toPort[i] = inPort.name;
    edges.type[i] = type;
    edges.bytes[i] = outBytes[out];
  });
  firstInput[doc.app.nodes.length] = inputCount;
  const inputs: EdgeLists = { start: firstInput, edge: fedBy };
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    const ports = n.kernel.inputs;
    for (let j = 0; j < ports.length; j++) {
      if (fedBy[firstInput[n.index] + j] < 0) fail(nodeAt(n.index), `input port "${ports[j].name}" of node "${n.id}" is not connected`, `add an edge to ${n.id}.${ports[j].name}`);
    }
  }
  const outputs = successorLists(doc.app.nodes.length, edges.from, identity(edgeCount));
  const model: Model = { doc, nodes, node, edges, inputs, outputs: { start: outputs.start, edge: outputs.succ }, pes, pe, lowered };
  if (hasErrors(out)) return model;

  const cycle = findCycle(nodes, edges.from, edges.to);
  if (cycle) fail('app.edges', `cycle ${cycle.join(' -> ')}`, 'a DFG is acyclic: remove one of these edges');
  else model.derived = deriveExpectations(doc, nodes, edges);

  // Every edge between two PEs needs an architecture path.
  const component = components(pes);
  const reported = new Set<string>();
  for (let i = 0; i < edgeCount; i++) {
    const from = nodes[edges.from[i]];
    const to = nodes[edges.to[i]];
    const a = from.pe;
    const b = to.pe;
    if (component.get(a) !== component.get(b) && !reported.has(`${a}>${b}`)) {
      reported.add(`${a}>${b}`);
      fail(edgeAt(i), `no architecture path from ${a} to ${b}`, `add a link between them, or map "${from.id}" and "${to.id}" to connected PEs`);
    }
  }
  return model;
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
