import {
  findKernel,
  formatDataType,
  SCAN_BARRIER,
  nearestKernels,
  sameDataType,
  specFor,
  withDefaults,
  type DataType,
  type KernelBinary,
  type KernelSpec,
  type Params,
  type ParamValue,
} from '@pipeloom/kernels/specs';
import { error, warning, type Diagnostic } from '../diagnostics.js';
import { MAX_NETWORK_INPUTS, NETWORK_ALIASES, NETWORKS, resolveNetwork } from '../scan/networks.js';
import {
  SCAN_EXECUTIONS,
  IN,
  SCAN_OUTPUTS,
  portTokens,
  scanPlan,
  SCAN_STRATEGIES,
  scanBarriers,
  type BarrierNode,
  type OperatorMode,
  type PlanNode,
  type Run,
  type ScanExecution,
  type ScanOutput,
  type ScanStrategy,
} from '../scan/plan.js';
import { nearestName } from '../util/nearest.js';
import { normalize } from './normalize.js';
import type { Expanded } from './rates.js';
import type { ScanMark, Stage } from './stage.js';
import type { AppEdge, AppNode, MappingTarget, TokenRange, WrittenDocument } from './types.js';
import { nodeId } from '../ids.js';

// Scan macro-nodes: a node `{ "type": "scan", "params": { "operator", "network",
// "output", "strategy", "execution", ...the operator's params } }` mapped to an ordered list of
// PEs (its p workers) becomes the plan of scan/plan.ts as kernel nodes of the operator, each in
// one of the operator's modes (`mode`, `count`), ids `scan1/local.w3`, `scan1/ks.r2.w5`,
// `scan1/prop.w3`, each on its worker's PE:
//   - worker i's block is a token range of `in` (edges with fromTokens into local[i]);
//   - `out` is gathered by the buffer passes: each consumer's input is fed in parts (toTokens),
//     one part per run of results, laid out in one storage on the consumer's PE (compile/views);
//   - `total` is the one result holding the whole range;
//   - the operator's context ports are fed to every expanded node by the edge feeding the scan's.
// Every token edge addresses single elements: `of` is the port's element count (validate accepts
// an `of` that refines the port's rate). Runs after rates (the scan node must fire once per
// iteration); its PE list was set aside before tasks (`takeScanMappings`). Eager execution: each
// node waits only for its own inputs, inside the scan's one firing (below). Rounds execution: a
// `scan.barrier` node per network level (`scan1/barrier.r2`, on worker 0's PE) receives every
// operand of the level and one token of each node of the level before, and relays them; the
// level's nodes read their operands from it (plan.ts, scanBarriers). A relay kernel rather than
// an ordering-only edge: its tokens are ordinary ones, so the buffer, schedule, program and
// self-timed passes and the agents' transports run it unchanged (an edge without bytes would
// need each of them to learn a message carrying nothing). docs/document-format.md, "Scan".
// Every expanded node is marked with its scan and its level (`ScanMark`, `scanLevels`): the
// phase pass gives each level a fire phase of its own, so the whole scan is one firing.

/** The operator's side of the kernel contract: the kernels package's KernelSpec.binary. */
export type BinarySpec = KernelBinary;

/** The scan node's own params; the rest are the operator's. */
export const SCAN_PARAMS = ['operator', 'network', 'output', 'strategy', 'execution'] as const;
/** Most workers of one scan node (the network's inputs). */
export const MAX_SCAN_WORKERS = 1024;
/** Most elements of one scan (its expanded edges grow with the workers, not the elements). */
export const MAX_SCAN_ELEMENTS = 1 << 26;

const binaryOf = (k: KernelSpec) => k.binary;

/** A scan node's PE list, set aside before tasks (which allows lists only on nodes with tasks). */
export type ScanMappings = Map<string, MappingTarget | undefined>;

/** Removes the scan nodes' entries from the mapping, for `expandScans` to read after rates. */
export function takeScanMappings(stage: Stage<WrittenDocument>): { stage: Stage<WrittenDocument>; scans: ScanMappings } {
  const scans: ScanMappings = new Map();
  for (const n of stage.doc.app.nodes) if (n.type === 'scan') scans.set(n.id, Object.hasOwn(stage.doc.mapping, n.id) ? stage.doc.mapping[n.id] : undefined);
  if (!scans.size) return { stage, scans };
  const mapping = { ...stage.doc.mapping };
  for (const id of scans.keys()) delete mapping[id];
  return { stage: { ...stage, doc: { ...stage.doc, mapping } }, scans };
}

interface Resolved {
  index: number;
  path: string;
  node: AppNode;
  operator: KernelSpec;
  opParams: Params;
  network: ReturnType<typeof resolveNetwork> & string;
  output: ScanOutput;
  strategy: ScanStrategy;
  execution: ScanExecution;
  pes: string[];
  N: number;
  /** Payload words W of one element. */
  words: number;
  context: string[];
}

/** The lowering's result with each expanded node's scan and level (by lowered node index; undefined for other nodes). */
export type ScanExpanded = Expanded & { scanMarks?: (ScanMark | undefined)[] };

/**
 * Each plan node's level in the scan's one firing: locals 0, the network's levels 1 .. D in
 * order (levels no node is left on are skipped), the second stage D + 1. Rounds put each
 * barrier relay on a level of its own before the network level it holds back (2r - 1, the
 * level itself 2r, the second stage 2D + 1). Returns the levels of `nodes` then `barriers`,
 * and the count of levels.
 */
export function scanLevels(nodes: readonly PlanNode[], barriers: readonly BarrierNode[]): { levels: number[]; count: number } {
  const network = [...new Set(nodes.filter((n) => n.stage === 'network').map((n) => n.level!))].sort((a, b) => a - b);
  const rank = new Map(network.map((l, r) => [l, r + 1]));
  const D = network.length;
  const rounds = barriers.length > 0;
  const at = (r: number) => (rounds ? 2 * r : r);
  const levels = [
    ...nodes.map((n) => (n.stage === 'local' ? 0 : n.stage === 'network' ? at(rank.get(n.level!)!) : at(D) + 1)),
    ...barriers.map((b) => at(rank.get(b.level)!) - 1),
  ];
  return { levels, count: at(D) + 2 };
}

export function expandScans(stage: Expanded, scans: ScanMappings, out: Diagnostic[]): ScanExpanded | undefined {
  if (!scans.size) return stage;
  const { doc, nodePaths, edgePaths } = stage;
  const before = out.length;
  const nodes = doc.app.nodes;
  const edges = doc.app.edges;
  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!index.has(n.id)) index.set(n.id, i);
  });
  const pes = new Set(normalize({ ...doc, mapping: {} }).arch.pes.map((p) => p.id));
  const resolved = new Map<number, Resolved>();
  nodes.forEach((n, i) => {
    if (n.type !== 'scan') return;
    const r = resolve(n, i, nodePaths[i], scans.get(n.id), pes, nodes, edges, edgePaths, index, out);
    if (r) resolved.set(i, r);
  });
  // A scan node fired several times per iteration (rates around it) was split by rates.
  for (const n of nodes)
    if (n.firing && scans.has(n.firing.node))
      out.push(
        error(
          nodePaths[index.get(n.id)!],
          `scan node "${n.firing.node}" would fire ${n.firing.of} times per iteration: a scan fires once`,
          'give the ports of its producer and consumers rate 1',
        ),
      );
  if (out.slice(before).some((d) => d.severity === 'error')) return undefined;

  const lowNodes: AppNode[] = [];
  const lowNodePaths: string[] = [];
  const marks: (ScanMark | undefined)[] = [];
  const mapping: Record<string, string> = { ...doc.mapping };
  const lowEdges: AppEdge[] = [];
  const lowEdgePaths: string[] = [];
  const taken = new Set(nodes.map((n) => n.id));
  const ids = new Map<number, string[]>();
  nodes.forEach((n, i) => {
    const r = resolved.get(i);
    if (!r) {
      lowNodes.push(n);
      lowNodePaths.push(nodePaths[i]);
      marks.push(undefined);
      return;
    }
    const plan = scanPlan(r.N, r.pes.length, r.network, r.strategy, r.output);
    // Rounds: the network's nodes read their operands through a barrier per level (plan.ts).
    const { nodes: planNodes, barriers } = r.execution === 'rounds' ? scanBarriers(plan) : { nodes: plan.nodes, barriers: [] };
    const own = [...planNodes.map((pn) => `${n.id}/${pn.key}`), ...barriers.map((b) => `${n.id}/${b.key}`)];
    const clash = own.find((id) => taken.has(id));
    if (clash) {
      out.push(
        error(
          `${r.path}.id`,
          `scan node "${n.id}" expands into a node "${clash}", the id of another node`,
          `rename the node "${clash}": ids of the form <scan>/<stage> name a scan's nodes`,
        ),
      );
      return;
    }
    ids.set(i, own);
    const lowered = [
      ...planNodes.map((pn) => ({
        worker: pn.worker,
        kernel: r.operator.id,
        params: { ...r.opParams, mode: pn.mode, count: pn.count } as Params,
        inputs: pn.inputs,
        context: true,
        row: pn.worker,
      })),
      ...barriers.map((b) => ({
        worker: b.worker,
        kernel: SCAN_BARRIER,
        params: { words: r.words, count: b.inputs.length } as Params,
        inputs: [{ port: 'in', runs: b.inputs }],
        context: false,
        row: -1,
      })),
    ];
    const { levels, count: levelCount } = scanLevels(planNodes, barriers);
    const tokensOf = (k: number, port: 'out' | 'total') =>
      k < planNodes.length ? portTokens(planNodes[k], port) : barriers[k - planNodes.length].inputs.length;
    lowered.forEach((ln, k) => {
      const node: AppNode = { id: own[k], kernel: ln.kernel, params: ln.params };
      if (n.position) node.position = { x: n.position.x + 24 * k, y: n.position.y + 24 * ln.row };
      lowNodes.push(node);
      lowNodePaths.push(r.path);
      marks.push({ node: nodeId(n.id), level: levels[k], levels: levelCount });
      mapping[own[k]] = r.pes[ln.worker];
    });
    // Edges between the scan's own nodes; those reading `in` are made from the edge into the scan.
    const feed = edges.findIndex((e) => e.to.node === n.id && e.to.port === 'in');
    lowered.forEach((ln, k) => {
      for (const input of ln.inputs) {
        const tokens = input.runs.reduce((s, run) => s + run.count, 0);
        let at = 0;
        for (const run of input.runs) {
          const to: TokenRange = { first: at, count: run.count, of: tokens };
          at += run.count;
          if (run.node === IN) {
            const e = edges[feed];
            lowEdges.push(tokenEdge({ ...e, to: { node: own[k], port: input.port } }, { first: run.first, count: run.count, of: r.N }, to));
            lowEdgePaths.push(edgePaths[feed]);
          } else {
            lowEdges.push(
              tokenEdge(
                { from: { node: own[run.node], port: run.port }, to: { node: own[k], port: input.port } },
                { first: run.first, count: run.count, of: tokensOf(run.node, run.port) },
                to,
              ),
            );
            lowEdgePaths.push(r.path);
          }
        }
      }
      // The operator's context: every operator node reads what the scan's context port is fed.
      if (ln.context)
        for (const port of r.context)
          edges.forEach((e, j) => {
            if (e.to.node !== n.id || e.to.port !== port) return;
            lowEdges.push({ ...e, to: { node: own[k], port } });
            lowEdgePaths.push(edgePaths[j]);
          });
    });
  });
  if (out.slice(before).some((d) => d.severity === 'error')) return undefined;

  // Edges out of a scan: `out` in parts, one per run, landing on the consumer's tokens; `total` whole.
  edges.forEach((e, j) => {
    const to = resolved.get(index.get(e.to.node) ?? -1);
    if (to) return; // made above (its `in` and context edges)
    const from = resolved.get(index.get(e.from.node) ?? -1);
    if (!from) {
      lowEdges.push(e);
      lowEdgePaths.push(edgePaths[j]);
      return;
    }
    const own = ids.get(from.index)!;
    const plan = scanPlan(from.N, from.pes.length, from.network, from.strategy, from.output);
    const runs: Run[] = e.from.port === 'out' ? plan.out : [plan.total];
    const tokens = e.from.port === 'out' ? from.N : 1;
    let at = 0;
    for (const run of runs) {
      const pn = plan.nodes[run.node];
      lowEdges.push(
        tokenEdge(
          { ...e, from: { node: own[run.node], port: run.port } },
          { first: run.first, count: run.count, of: portTokens(pn, run.port) },
          { first: at, count: run.count, of: tokens },
        ),
      );
      lowEdgePaths.push(edgePaths[j]);
      at += run.count;
    }
  });
  const repetitions = { ...stage.repetitions };
  for (const [i, own] of ids) {
    delete repetitions[nodes[i].id];
    for (const id of own) repetitions[id] = 1;
  }
  return {
    doc: { ...doc, app: { nodes: lowNodes, edges: lowEdges }, mapping },
    nodePaths: lowNodePaths,
    edgePaths: lowEdgePaths,
    repetitions,
    scanMarks: marks,
  };
}

/** An edge carrying `from` of its producer's tokens onto `to` of its consumer's; whole ranges on both ends are left implicit. */
function tokenEdge(e: AppEdge, from: TokenRange, to: TokenRange): AppEdge {
  const { fromTokens: _f, toTokens: _t, ...rest } = e;
  const whole = (r: TokenRange) => r.first === 0 && r.count === r.of;
  return whole(from) && whole(to) ? rest : { ...rest, fromTokens: from, toTokens: to };
}

/** A scan node's params, operator, workers and element count checked; undefined after a diagnostic naming the node and the fix. */
function resolve(
  n: AppNode,
  i: number,
  path: string,
  target: MappingTarget | undefined,
  pes: Set<string>,
  nodes: AppNode[],
  edges: AppEdge[],
  edgePaths: string[],
  index: Map<string, number>,
  out: Diagnostic[],
): Resolved | undefined {
  const before = out.length;
  const site: ScanSite = { n, path, at: `${path}.params`, what: `scan node "${n.id}"`, params: (n.params ?? {}) as Record<string, ParamValue>, out };
  if (n.rates) out.push(error(`${path}.rates`, `${site.what} has rates: a scan fires once per iteration, its \`in\` holding all N elements`, 'remove rates'));
  const { network, output, strategy, execution } = scanChoices(site);
  const list = scanWorkers(site, target, pes);
  const input = scanInput(site, list, nodes, edges, edgePaths, index);
  if (!input) return undefined;
  const op = scanOperator(site, network, output);
  if (!op) return undefined;
  const ports = operatorPorts(site, op, input, edgePaths);
  if (!ports) return undefined;
  if (out.slice(before).some((d) => d.severity === 'error') || !network || !output || !strategy || !execution || !list) return undefined;
  return {
    index: i,
    path,
    node: n,
    operator: op.operator,
    opParams: ports.opParams,
    network,
    output,
    strategy,
    execution,
    pes: list,
    N: input.N,
    words: (ports.wantType.shape[1] ?? 2) - 2,
    context: ports.context,
  };
}

/** One scan node under check: where and how its diagnostics name it. */
interface ScanSite {
  n: AppNode;
  path: string;
  /** Its params' path. */
  at: string;
  /** `scan node "<id>"`, as messages name it. */
  what: string;
  params: Record<string, ParamValue>;
  out: Diagnostic[];
}

/** The scan's own choices: network, output, strategy, execution (each undefined after its diagnostic). */
function scanChoices(site: ScanSite) {
  const { params, at, what, out } = site;
  const enumParam = <T extends string>(name: string, values: readonly T[], fallback: T): T | undefined => {
    const v = params[name] ?? fallback;
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    const near = typeof v === 'string' ? nearestName(v, values) : undefined;
    out.push(
      error(
        `${at}.${name}`,
        `${what}: ${name} ${JSON.stringify(v)} is not one of ${values.join(', ')}`,
        near ? `did you mean "${near}"?` : `write one of ${values.join(', ')}`,
      ),
    );
    return undefined;
  };
  const rawNetwork = params.network ?? 'kogge-stone';
  const network = typeof rawNetwork === 'string' ? resolveNetwork(rawNetwork) : undefined;
  if (!network) {
    const names = [...NETWORKS, ...Object.keys(NETWORK_ALIASES)];
    const near = typeof rawNetwork === 'string' ? nearestName(rawNetwork, names) : undefined;
    out.push(
      error(
        `${at}.network`,
        `${what}: unknown network ${JSON.stringify(rawNetwork)}`,
        `${near ? `did you mean "${near}"? ` : ''}networks: ${names.join(', ')}`,
      ),
    );
  }
  const output = enumParam('output', SCAN_OUTPUTS, 'inclusive');
  const strategy = enumParam('strategy', SCAN_STRATEGIES, 'scan-then-propagate');
  const execution = enumParam('execution', SCAN_EXECUTIONS, 'eager');
  return { network, output, strategy, execution };
}

/** Workers: the mapping's ordered PE list (undefined when unmapped). */
function scanWorkers(site: ScanSite, target: MappingTarget | undefined, pes: Set<string>): string[] | undefined {
  const { n, what, out } = site;
  let list: string[] | undefined;
  if (target === undefined) out.push(error('mapping', `${what} is not mapped`, `add "${n.id}": ["<PE id>", ...], its workers in order`));
  else list = typeof target === 'string' ? [target] : target;
  if (list) {
    if (!list.length) out.push(error(`mapping.${n.id}`, `${what} is mapped to an empty list of PEs`, 'list at least one PE: its workers, in order'));
    if (list.length > MAX_SCAN_WORKERS)
      out.push(error(`mapping.${n.id}`, `${what} has ${list.length} workers, more than ${MAX_SCAN_WORKERS}`, `list at most ${MAX_SCAN_WORKERS} PEs`));
    const seen = new Map<string, number>();
    list.forEach((pe, j) => {
      if (!pes.has(pe))
        out.push(
          error(
            `mapping.${n.id}${typeof target === 'string' ? '' : `[${j}]`}`,
            `${what}: PE "${pe}" does not exist`,
            `list PEs of arch: ${[...pes].slice(0, 8).join(', ')}${pes.size > 8 ? ', ...' : ''}`,
          ),
        );
      const first = seen.get(pe);
      if (first !== undefined)
        out.push(
          warning(
            `mapping.${n.id}[${j}]`,
            `${what}: PE "${pe}" is listed twice (workers ${first} and ${j}): their work runs one after the other there`,
            'list each PE once to run the workers in parallel',
          ),
        );
      else seen.set(pe, j);
    });
  }
  return list;
}

/** Its edges: `in` fed once, by a producer of N elements in one firing; outputs out and total. */
function scanInput(site: ScanSite, list: string[] | undefined, nodes: AppNode[], edges: AppEdge[], edgePaths: string[], index: Map<string, number>) {
  const { n, path, what, out } = site;
  const into = edges.map((e, j) => ({ e, j })).filter(({ e }) => e.to.node === n.id);
  const feeds = into.filter(({ e }) => e.to.port === 'in');
  for (const [j, e] of edges.entries())
    if (e.from.node === n.id && e.from.port !== 'out' && e.from.port !== 'total')
      out.push(error(`${edgePaths[j]}.from.port`, `${what} has no output "${e.from.port}"`, 'outputs: out, total'));
  if (!feeds.length) {
    out.push(error(path, `input port "in" of ${what} is not connected`, `add an edge to ${n.id}.in: its N elements`));
    return undefined;
  }
  if (feeds.length > 1) {
    out.push(
      error(
        `${edgePaths[feeds[1].j]}.to`,
        `input ${n.id}.in is already fed by ${edgePaths[feeds[0].j]}`,
        'an input port takes exactly one edge; remove one of them',
      ),
    );
    return undefined;
  }
  const { e: feed, j: feedAt } = feeds[0];
  if (feed.fromTokens || feed.toTokens) {
    out.push(
      error(
        edgePaths[feedAt],
        `${what}: its input comes in parts (a producer firing several times per iteration)`,
        'feed the scan from a node that makes all N elements in one firing',
      ),
    );
    return undefined;
  }
  // N: the producer's data, [N, 2 + W].
  const producer = nodes[index.get(feed.from.node) ?? -1];
  const kernel = producer?.kernel ? findKernel(producer.kernel) : undefined;
  if (!producer || !kernel) return undefined; // validate names the edge or the kernel
  let type: DataType | undefined;
  try {
    type = specFor(kernel, withDefaults(kernel, producer.params as Params))
      .outputs.find((p) => p.name === feed.from.port)
      ?.type(withDefaults(kernel, producer.params as Params));
  } catch {
    type = undefined;
  }
  if (!type) return undefined; // validate reports the port or its type
  const N = type.shape[0] ?? 1;
  if (!(N >= 1)) {
    out.push(
      error(
        edgePaths[feedAt],
        `${what} scans ${producer.id}.${feed.from.port}, which holds no elements (N = ${N})`,
        `give "${producer.id}" at least one element`,
      ),
    );
    return undefined;
  }
  if (N > MAX_SCAN_ELEMENTS) {
    out.push(error(edgePaths[feedAt], `${what}: ${N} elements, more than ${MAX_SCAN_ELEMENTS}`, 'scan fewer elements'));
    return undefined;
  }
  if (list && list.length > N && list.length <= MAX_NETWORK_INPUTS)
    out.push(error(`mapping.${n.id}`, `${what}: ${list.length} workers for ${N} elements`, `list at most ${N} PEs: every worker needs an element`));
  return { into, feedAt, feed, producer, type, N };
}

/** The operator: a registered binary kernel, whose properties allow the network and output asked. */
function scanOperator(site: ScanSite, network: string | undefined, output: ScanOutput | undefined): { operator: KernelSpec; binary: BinarySpec } | undefined {
  const { params, at, what, out } = site;
  const opName = params.operator;
  const operator = typeof opName === 'string' ? findKernel(opName) : undefined;
  if (typeof opName !== 'string' || !opName) {
    out.push(error(`${at}.operator`, `${what} names no operator`, 'set params.operator to a binary operator kernel, e.g. "mat.mulmod"'));
    return undefined;
  }
  if (!operator) {
    const near = nearestKernels(opName, 3);
    out.push(
      error(
        `${at}.operator`,
        `${what}: operator "${opName}" is not a registered kernel`,
        `${near.length ? `nearest: ${near.join(', ')}; ` : ''}load its package with --kernels, or fix the id`,
      ),
    );
    return undefined;
  }
  const binary = binaryOf(operator);
  if (!binary) {
    out.push(
      error(
        `${at}.operator`,
        `${what}: kernel ${operator.id} is not a binary operator (its spec declares no \`binary\`)`,
        'name a kernel that declares binary: { associativity, commutative, identity? } (e.g. scan.range, mat.mulmod)',
      ),
    );
    return undefined;
  }
  if (binary.associativity === 'none' && network && network !== 'serial')
    out.push(
      error(
        `${at}.network`,
        `${what}: operator ${operator.id} is not associative, so only the serial network computes its scan; ${network} re-brackets`,
        'set "network": "serial"',
      ),
    );
  if (output === 'exclusive' && !binary.identity)
    out.push(
      error(
        `${at}.output`,
        `${what}: an exclusive scan starts with the identity, and operator ${operator.id} has none`,
        'use "output": "inclusive", or an operator with an identity',
      ),
    );
  return { operator, binary };
}

/** The operator's params (the scan's others) and ports: every context port fed, no other input, and `in` of the type it scans. */
function operatorPorts(
  site: ScanSite,
  { operator, binary }: { operator: KernelSpec; binary: BinarySpec },
  input: NonNullable<ReturnType<typeof scanInput>>,
  edgePaths: string[],
) {
  const { n, path, params, at, what, out } = site;
  const { into, feedAt, feed, producer, type, N } = input;
  const own: Params = {};
  for (const [k, v] of Object.entries(params)) if (!(SCAN_PARAMS as readonly string[]).includes(k)) own[k] = v;
  for (const k of ['mode', 'count']) {
    if (Object.hasOwn(own, k)) out.push(error(`${at}.${k}`, `${what} sets ${k} itself: the expansion sets each node's ${k}`, `remove params.${k}`));
  }
  const opParams = withDefaults(operator, own);
  const portsOf = (mode: OperatorMode, count: number) => {
    try {
      return specFor(operator, { ...opParams, mode, count });
    } catch (e) {
      out.push(
        error(
          at,
          `${what}: operator ${operator.id} gives no ports in mode ${mode}: ${e instanceof Error ? e.message : String(e)}`,
          `check the operator's params against ${operator.id}`,
        ),
      );
      return undefined;
    }
  };
  const apply = portsOf('apply', 1);
  if (!apply) return undefined;
  const context = binary.context ?? apply.inputs.map((p) => p.name).filter((p) => p !== 'a' && p !== 'b');

  // Every context port fed, no other input.
  for (const { e, j } of into) {
    if (e.to.port !== 'in' && !context.includes(e.to.port))
      out.push(error(`${edgePaths[j]}.to.port`, `${what} has no input "${e.to.port}"`, `inputs: in${context.map((c) => `, ${c}`).join('')}`));
  }
  for (const port of context)
    if (!into.some(({ e }) => e.to.port === port))
      out.push(
        error(
          path,
          `${what}: context input "${port}" of operator ${operator.id} is not connected`,
          `add an edge to ${n.id}.${port}: every worker's applications read it`,
        ),
      );
  const scanPorts = portsOf('scan', N);
  const want = scanPorts?.inputs.find((p) => p.name === 'in');
  let wantType: DataType | undefined;
  try {
    wantType = want?.type({ ...opParams, mode: 'scan', count: N });
  } catch {
    wantType = undefined;
  }
  if (!wantType) {
    out.push(
      error(
        `${at}.operator`,
        `${what}: operator ${operator.id} has no input "in" in mode scan`,
        'name an operator kernel of the scan contract (modes apply, scan, reduce, propagate, exclusive)',
      ),
    );
    return undefined;
  }
  if (!sameDataType(type, wantType)) {
    out.push(
      error(
        edgePaths[feedAt],
        `${what}: ${producer.id}.${feed.from.port} is ${formatDataType(type)}, but operator ${operator.id} with these params scans ${formatDataType(wantType)}`,
        `give "${producer.id}" and the scan's operator params matching element sizes`,
      ),
    );
    return undefined;
  }
  return { opParams, context, wantType };
}
