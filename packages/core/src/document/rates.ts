import { declaredRate, findKernel, formatDataType, specFor, withDefaults, type KernelSpec, type PortSpec } from '@pipeloom/kernels/specs';
import { error, hasErrors, warning, type Diagnostic } from '../diagnostics.js';
import type { Stage } from './stage.js';
import type { AppEdge, AppNode, ProjectDocument } from './types.js';

// Port rates (synchronous dataflow) -> repetition vector -> single rate. A port with rate r
// holds r tokens per firing, each 1/r of its data along the first dimension. Per edge the
// balance equation q[producer] * p = q[consumer] * c gives, per connected component, the
// smallest positive repetition vector q (exact rationals); a node with q > 1 becomes one node
// per firing (`X#0` .. `X#(q-1)`) and each edge one lowered edge per maximal run of consumer
// tokens that come from one producer firing of one iteration (`fromTokens`, `toTokens`, and
// `delay` in whole iterations). docs/document-format.md, "Rates", states the rules.

/** Repetitions, rates and firings per iteration above this are refused (the expanded graph would not fit). */
export const RATE_LIMIT = 1_000_000;

export interface Expanded extends Stage {
  /** Firings per iteration by flattened node id (1 for single-rate nodes). */
  repetitions: Record<string, number>;
}

export function expandRates(doc: ProjectDocument, nodePaths: string[], edgePaths: string[], out: Diagnostic[]): Expanded | undefined {
  const before = out.length;
  const nodes = doc.app.nodes;
  const edges = doc.app.edges;
  const rates = nodes.map((n, i) => portRates(n, nodePaths[i], out));
  if (out.length > before) return undefined;
  // No rates anywhere (most documents) and no firing named in the mapping: single rate as written.
  if (rates.every((r) => r === NO_RATES) && !namesFirings(doc.mapping)) return { doc, nodePaths, edgePaths, repetitions: byId(nodes, () => 1) };
  // A document a tool wrote in the lowered form (firings, token ranges) is not expanded again.
  if (nodes.some((n) => n.firing) || edges.some((e) => e.fromTokens || e.toTokens)) {
    const repetitions: Record<string, number> = {};
    for (const n of nodes) repetitions[n.firing?.node ?? n.id] = n.firing?.of ?? 1;
    return { doc, nodePaths, edgePaths, repetitions };
  }

  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!index.has(n.id)) index.set(n.id, i);
  });
  const rateOf = (node: number, port: string) => rates[node].get(port) ?? 1;

  // Edges between existing nodes; others pass through unchanged (validate names them).
  const from = new Int32Array(edges.length).fill(-1);
  const to = new Int32Array(edges.length).fill(-1);
  const produce: number[] = new Array(edges.length).fill(1);
  const consume: number[] = new Array(edges.length).fill(1);
  const delays: number[] = new Array(edges.length).fill(0);
  edges.forEach((e, i) => {
    const a = index.get(e.from.node);
    const b = index.get(e.to.node);
    if (a === undefined || b === undefined) return;
    from[i] = a;
    to[i] = b;
    produce[i] = rateOf(a, e.from.port);
    consume[i] = rateOf(b, e.to.port);
    if (e.delay !== undefined) {
      // The delays step refuses bad delays first; this only guards the arithmetic below.
      if (typeof e.delay !== 'number' || !Number.isSafeInteger(e.delay) || e.delay < 0)
        out.push(
          error(
            `${edgePaths[i]}.delay`,
            `delay ${JSON.stringify(e.delay)} is not a whole number of tokens`,
            'write the number of initial tokens on the edge, 0 or more',
          ),
        );
      else delays[i] = e.delay;
    }
  });
  if (out.length > before) return undefined;

  // Every rate 1 (most documents): every node fires once, no balance to solve.
  const single = produce.every((r) => r === 1) && consume.every((r) => r === 1);
  const q = single ? new Array<number>(nodes.length).fill(1) : repetitionVector(nodes, nodePaths, edgePaths, edges, from, to, produce, consume, out);
  if (!q) return undefined;

  if (!single) {
    // A multi-rate edge lowers to at most one part per producer firing, per consumer firing and per iteration change.
    let parts = 0;
    for (let e = 0; e < edges.length; e++) parts += from[e] < 0 ? 1 : q[from[e]] + q[to[e]] + 1;
    if (parts > 2 * RATE_LIMIT)
      out.push(
        error(
          'app.edges',
          `the expanded graph would have up to ${parts} edges, more than ${(2 * RATE_LIMIT).toLocaleString('en')}`,
          'lower the rates of the nodes that fire most, or feed fewer inputs from them',
        ),
      );
  }
  if (hasErrors(out.slice(before))) return undefined;

  // Firing f of node i: its own id when it fires once.
  const ids: string[][] = new Array(nodes.length);
  const idOf = (i: number, f: number) => (q[i] === 1 ? nodes[i].id : (ids[i] ??= Array.from({ length: q[i] }, (_, k) => `${nodes[i].id}#${k}`))[f]);
  if (!single) {
    const taken = new Set(nodes.map((n) => n.id));
    nodes.forEach((n, i) => {
      if (q[i] === 1) return;
      idOf(i, 0);
      const clash = ids[i].find((id) => taken.has(id));
      if (clash)
        out.push(
          error(
            `${nodePaths[i]}.id`,
            `node "${n.id}" fires ${q[i]} times per iteration, and its firing "${clash}" has the id of another node`,
            `rename the node "${clash}": ids of the form <node>#<n> name firings`,
          ),
        );
      // Each firing becomes a node of its own, with its own state: not one state across firings.
      if (n.kernel !== undefined && findKernel(n.kernel)?.stateful)
        out.push(
          warning(
            nodePaths[i],
            `node "${n.id}" (${n.kernel}) keeps state across firings, and fires ${q[i]} times per iteration: each of its ${q[i]} firings keeps a state of its own`,
            'give it rates that make it fire once per iteration if its state must be one',
          ),
        );
    });
  }
  const mapping = mapFirings(doc.mapping, nodes, index, q, idOf, out);
  if (hasErrors(out.slice(before))) return undefined;

  const lowNodes: AppNode[] = [];
  const lowNodePaths: string[] = [];
  nodes.forEach((n, i) => {
    // The lowered form keeps the rates written and adds those the kernel's ports declare.
    const written = n.rates ? Object.keys(n.rates).length : 0;
    if (q[i] === 1 && rates[i].size === written) {
      lowNodes.push(n);
      lowNodePaths.push(nodePaths[i]);
      return;
    }
    const keep = rates[i].size ? Object.fromEntries(rates[i]) : undefined;
    const { rates: _written, ...rest } = n;
    if (q[i] === 1) {
      lowNodes.push({ ...rest, rates: keep });
      lowNodePaths.push(nodePaths[i]);
      return;
    }
    for (let f = 0; f < q[i]; f++) {
      const firing: AppNode = { ...rest, id: idOf(i, f), firing: { node: n.id, index: f, of: q[i] } };
      if (keep) firing.rates = keep;
      // Firings fan out on the canvas of the expanded graph.
      if (n.position) firing.position = { x: n.position.x + 24 * f, y: n.position.y + 24 * f };
      lowNodes.push(firing);
      lowNodePaths.push(nodePaths[i]);
    }
  });

  const lowEdges: AppEdge[] = [];
  const lowEdgePaths: string[] = [];
  edges.forEach((e, i) => {
    const a = from[i];
    const b = to[i];
    if (a < 0 || (q[a] === 1 && q[b] === 1 && produce[i] === 1 && consume[i] === 1)) {
      // Single rate: d tokens are d iterations, the edge stays as written.
      lowEdges.push(e);
      lowEdgePaths.push(edgePaths[i]);
      return;
    }
    for (const part of edgeParts(q[a] * produce[i], produce[i], consume[i], delays[i])) {
      lowEdges.push(lowerPart(e, part, idOf(a, part.producer), idOf(b, part.consumer), produce[i], consume[i]));
      lowEdgePaths.push(edgePaths[i]);
    }
  });

  return {
    doc: { ...doc, app: { ...doc.app, nodes: lowNodes, edges: lowEdges }, mapping },
    nodePaths: lowNodePaths,
    edgePaths: lowEdgePaths,
    repetitions: byId(nodes, (i) => q[i]),
  };
}

/** Repetitions by node id, in node order; a duplicate id (validate reports it) keeps its first node's. */
function byId(nodes: AppNode[], count: (i: number) => number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < nodes.length; i++) if (!Object.hasOwn(out, nodes[i].id)) out[nodes[i].id] = count(i);
  return out;
}

/** One lowered edge of a multi-rate edge: `count` tokens from one producer firing of one iteration to one consumer firing. */
export interface EdgePart {
  producer: number;
  /** First token among the producer firing's `p`. */
  fromFirst: number;
  consumer: number;
  /** First token among the consumer firing's `c`. */
  toFirst: number;
  count: number;
  /** Iterations back: the consumer's iteration k reads the producer's k - delay. */
  delay: number;
}

/**
 * The parts of an edge carrying `tokens` tokens per iteration (q[producer] * p), `p` per
 * producer firing, `c` per consumer firing, `delay` initial tokens: consumer stream token u of
 * iteration k reads producer stream token k * tokens + u - delay. In consumer stream order,
 * each part a maximal run from one producer firing of one iteration into one consumer firing.
 */
export function edgeParts(tokens: number, p: number, c: number, delay: number): EdgePart[] {
  const parts: EdgePart[] = [];
  for (let u = 0; u < tokens;) {
    const consumer = Math.floor(u / c);
    const toFirst = u - consumer * c;
    const w = u - delay;
    const back = w >= 0 ? 0 : Math.ceil(-w / tokens);
    const v = w + back * tokens;
    const producer = Math.floor(v / p);
    const fromFirst = v - producer * p;
    // A run ends at a consumer firing's end or a producer firing's end (an iteration's end is one).
    const count = Math.min(c - toFirst, p - fromFirst);
    parts.push({ producer, fromFirst, consumer, toFirst, count, delay: back });
    u += count;
  }
  return parts;
}

function lowerPart(e: AppEdge, part: EdgePart, fromId: string, toId: string, p: number, c: number): AppEdge {
  const { from, to, delay: _tokens, init, fromTokens: _f, toTokens: _t, ...rest } = e;
  const lowered: AppEdge = { ...rest, from: { node: fromId, port: from.port }, to: { node: toId, port: to.port } };
  if (!(part.count === p && part.count === c)) {
    lowered.fromTokens = { first: part.fromFirst, count: part.count, of: p };
    lowered.toTokens = { first: part.toFirst, count: part.count, of: c };
  }
  // Only a part reading an earlier iteration reads initial tokens: it alone needs their values.
  if (part.delay > 0) {
    lowered.delay = part.delay;
    if (init !== undefined) lowered.init = init;
  }
  return lowered;
}

/** A node's rate per port: its kernel's declared rates, then the node's own `rates`, each checked. */
function portRates(n: AppNode, at: string, out: Diagnostic[]): ReadonlyMap<string, number> {
  const kernel = n.kernel === undefined ? undefined : findKernel(n.kernel);
  // Most nodes write no rates and their kernel declares none: nothing to resolve.
  if (!n.rates && (!kernel || !declaresRates(kernel))) return NO_RATES;
  const rates = new Map<string, number>();
  let spec: KernelSpec | undefined;
  const params = kernel ? withDefaults(kernel, n.params as Record<string, number | string | boolean> | undefined) : {};
  if (kernel) {
    try {
      spec = specFor(kernel, params);
    } catch {
      // The node's ports cannot be listed: validate reports it, with the reason.
    }
  }
  const ports = spec ? [...spec.inputs.map((p) => ({ p, side: 'input' })), ...spec.outputs.map((p) => ({ p, side: 'output' }))] : [];
  for (const { p } of ports) {
    // A rate written on the node replaces the kernel's (even one the kernel cannot give).
    if (p.rate === undefined || (n.rates && Object.hasOwn(n.rates, p.name))) continue;
    try {
      const r = declaredRate(p, params);
      if (Number.isInteger(r) && r >= 1) rates.set(p.name, r);
      else
        out.push(
          error(
            at,
            `kernel ${spec!.id} gives port ${p.name} of node "${n.id}" the rate ${JSON.stringify(r)}, not a positive integer`,
            `set the rate yourself: "rates": { "${p.name}": <tokens per firing> }`,
          ),
        );
    } catch (e) {
      out.push(
        error(
          at,
          `kernel ${spec!.id} cannot give the rate of port ${p.name} of node "${n.id}": ${e instanceof Error ? e.message : String(e)}`,
          `set the rate yourself: "rates": { "${p.name}": <tokens per firing> }`,
        ),
      );
    }
  }
  for (const [port, r] of Object.entries(n.rates ?? {})) {
    const path = `${at}.rates.${port}`;
    if (typeof r !== 'number') {
      out.push(
        error(
          path,
          `rate ${JSON.stringify(r)} is not a number`,
          "write the tokens per firing as a positive integer, or an expression over the document's params",
        ),
      );
      continue;
    }
    if (!Number.isInteger(r) || r < 1) {
      out.push(
        error(
          path,
          r === 0 || r < 0 ? `rate ${r}: every firing moves at least one token` : `rate ${r} is not a whole number of tokens`,
          'the rate is tokens per firing: a positive integer (1, 2, 8, ...)',
        ),
      );
      continue;
    }
    if (r > RATE_LIMIT) {
      out.push(error(path, `rate ${r} is above ${RATE_LIMIT.toLocaleString('en')} tokens per firing`, 'split the data into fewer, larger tokens'));
      continue;
    }
    const found = ports.find((x) => x.p.name === port);
    if (spec && !found) {
      out.push(
        error(path, `node "${n.id}" (${spec.id}) has no port "${port}"`, `its ports: ${ports.map((x) => `${x.p.name} (${x.side})`).join(', ') || 'none'}`),
      );
      continue;
    }
    rates.set(port, r);
    if (found && r > 1) {
      const problem = divides(found.p, params, r);
      if (problem)
        out.push(
          error(
            path,
            `rate ${r} does not split port ${port} of node "${n.id}" into equal tokens: ${problem}`,
            `use a rate that divides ${firstExtent(found.p, params)}, or change the node's size params`,
          ),
        );
    }
  }
  return rates;
}

const NO_RATES: ReadonlyMap<string, number> = new Map();
const declaring = new WeakMap<KernelSpec, boolean>();
/** Whether any port of the kernel may declare a rate (ports declared by params may: they are listed per node). */
function declaresRates(kernel: KernelSpec): boolean {
  let has = declaring.get(kernel);
  if (has === undefined) declaring.set(kernel, (has = kernel.ports !== undefined || [...kernel.inputs, ...kernel.outputs].some((p) => p.rate !== undefined)));
  return has;
}

/** Why `r` tokens do not split the port's data along its first dimension; undefined when they do (or its type is validate's to report). */
function divides(port: PortSpec, params: Record<string, number | string | boolean>, r: number): string | undefined {
  try {
    const t = port.type(params);
    const first = t.shape[0] ?? 1;
    // A size that is not a whole number is a param mistake validate reports.
    return !Number.isInteger(first) || first < 1 || first % r === 0 ? undefined : `its data ${formatDataType(t)} has ${first} along the first dimension`;
  } catch {
    return undefined;
  }
}

function firstExtent(port: PortSpec, params: Record<string, number | string | boolean>): number {
  try {
    return port.type(params).shape[0] ?? 1;
  } catch {
    return 1;
  }
}

// Exact rationals over BigInt for the balance equations: rates multiply along chains, and a
// float would round a consistent graph into an inconsistent one.
interface Ratio {
  n: bigint;
  d: bigint;
}
const gcd = (a: bigint, b: bigint): bigint => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
};
const ratio = (n: bigint, d: bigint): Ratio => {
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
};
const times = (a: Ratio, n: number, d: number): Ratio => ratio(a.n * BigInt(n), a.d * BigInt(d));
const formatRatio = (r: Ratio) => (r.d === 1n ? String(r.n) : `${r.n}/${r.d}`);

/**
 * The smallest positive repetition vector of every connected component (by node index), or
 * undefined after a diagnostic: rates inconsistent around a cycle, or firings beyond the limit.
 */
function repetitionVector(
  nodes: AppNode[],
  nodePaths: string[],
  edgePaths: string[],
  edges: AppEdge[],
  from: Int32Array,
  to: Int32Array,
  produce: number[],
  consume: number[],
  out: Diagnostic[],
): number[] | undefined {
  const n = nodes.length;
  const adjacent: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < edges.length; e++) {
    if (from[e] < 0) continue;
    adjacent[from[e]].push(e);
    if (to[e] !== from[e]) adjacent[to[e]].push(e);
  }
  const q: (Ratio | undefined)[] = new Array(n);
  const parentEdge = new Int32Array(n).fill(-1);
  const depth = new Int32Array(n);
  const result: number[] = new Array(n).fill(1);
  let failed = false;
  for (let root = 0; root < n; root++) {
    if (q[root]) continue;
    q[root] = { n: 1n, d: 1n };
    const component = [root];
    let inconsistent = false;
    for (let k = 0; k < component.length; k++) {
      const a = component[k];
      for (const e of adjacent[a]) {
        // Both directions of a self-loop: q * p against q * c.
        for (const forward of from[e] === to[e] ? [true] : [from[e] === a]) {
          const b = forward ? to[e] : from[e];
          const want = forward ? times(q[a]!, produce[e], consume[e]) : times(q[a]!, consume[e], produce[e]);
          const has = q[b];
          if (!has) {
            q[b] = want;
            parentEdge[b] = e;
            depth[b] = depth[a] + 1;
            component.push(b);
          } else if (!inconsistent && (has.n !== want.n || has.d !== want.d)) {
            inconsistent = true;
            out.push(inconsistency(a, e, forward, parentEdge, depth, nodes, nodePaths, edgePaths, edges, from, to, produce, consume));
          }
        }
      }
    }
    if (inconsistent) {
      failed = true;
      continue;
    }
    // Scale to the smallest positive integers: times the denominators' lcm, over the numerators' gcd.
    let lcm = 1n;
    for (const i of component) lcm = (lcm / gcd(lcm, q[i]!.d)) * q[i]!.d;
    let g = 0n;
    for (const i of component) g = gcd(g, (q[i]!.n * lcm) / q[i]!.d);
    for (const i of component) {
      const r = (q[i]!.n * lcm) / q[i]!.d / g;
      if (r > BigInt(RATE_LIMIT)) {
        if (!failed)
          out.push(
            error(
              nodePaths[i],
              `node "${nodes[i].id}" would fire ${r} times per iteration, more than ${RATE_LIMIT.toLocaleString('en')}`,
              'the rates of a chain multiply: check the rates on the edges leading to it, and make producer and consumer rates closer',
            ),
          );
        failed = true;
        break;
      }
      result[i] = Number(r);
    }
  }
  if (failed) return undefined;
  const total = result.reduce((s, r) => s + r, 0);
  if (total > RATE_LIMIT) {
    out.push(
      error(
        'app.nodes',
        `the expanded graph would have ${total} firings per iteration, more than ${RATE_LIMIT.toLocaleString('en')}`,
        'lower the rates, or group several tokens into one',
      ),
    );
    return undefined;
  }
  return result;
}

/**
 * The diagnostic for an edge that closes an inconsistent cycle: the cycle through the
 * spanning tree, each edge as written, what going round gives, and rates that would balance it.
 */
function inconsistency(
  a: number,
  e: number,
  forward: boolean,
  parentEdge: Int32Array,
  depth: Int32Array,
  nodes: AppNode[],
  nodePaths: string[],
  edgePaths: string[],
  edges: AppEdge[],
  from: Int32Array,
  to: Int32Array,
  produce: number[],
  consume: number[],
): Diagnostic {
  const b = forward ? to[e] : from[e];
  const parentOf = (x: number) => (from[parentEdge[x]] === x ? to[parentEdge[x]] : from[parentEdge[x]]);
  // Walk both ends up to their lowest common ancestor in the BFS tree.
  const down: { edge: number; node: number }[] = [];
  const up: { edge: number; node: number }[] = [];
  let x = a;
  let y = b;
  while (x !== y) {
    if (depth[x] >= depth[y]) {
      down.push({ edge: parentEdge[x], node: x });
      x = parentOf(x);
    } else {
      up.push({ edge: parentEdge[y], node: y });
      y = parentOf(y);
    }
  }
  const top = x;
  // Steps round the cycle from `top`: down the tree to a, across e to b, up the tree to top.
  const steps: { edge: number; forward: boolean; node: number }[] = [];
  for (const s of down.reverse()) steps.push({ edge: s.edge, forward: to[s.edge] === s.node, node: s.node });
  steps.push({ edge: e, forward, node: b });
  for (const s of up) {
    const next = parentOf(s.node);
    steps.push({ edge: s.edge, forward: to[s.edge] === next, node: next });
  }
  let round: Ratio = { n: 1n, d: 1n };
  let cycle = nodes[top].id;
  for (const s of steps) {
    round = s.forward ? times(round, produce[s.edge], consume[s.edge]) : times(round, consume[s.edge], produce[s.edge]);
    cycle += `${s.forward ? ' -> ' : ' <- '}${nodes[s.node].id}`;
  }
  const paths = steps.map((s) => edgePaths[s.edge]).join(', ');
  const message = `rates are inconsistent around ${cycle} (${paths}): going round, ${nodes[top].id} fires ${formatRatio(round)} times per firing of ${nodes[top].id}`;
  // Rates on the cycle that alone would balance it: going round multiplies by p / c per edge
  // taken forwards (c / p backwards), so scaling one of them by the round's ratio gives 1.
  // A node of a composite used more than once is written once, in the def, for every instance:
  // a rate set there changes them all. Rates on nodes written once are offered first.
  const instancesOf = (node: number) => nodes.flatMap((n, i) => (nodePaths[i] === nodePaths[node] ? [n.id] : []));
  const candidates: { text: string; shared: string[] }[] = [];
  for (const s of steps) {
    const ed = edges[s.edge];
    const [up, down] = s.forward ? [round.d, round.n] : [round.n, round.d];
    const p = BigInt(produce[s.edge]);
    const c = BigInt(consume[s.edge]);
    if ((c * down) % up === 0n)
      candidates.push({ text: `${nodes[to[s.edge]].id}'s rate on ${ed.to.port} to ${(c * down) / up} (now ${c})`, shared: instancesOf(to[s.edge]) });
    if ((p * up) % down === 0n)
      candidates.push({ text: `${nodes[from[s.edge]].id}'s rate on ${ed.from.port} to ${(p * up) / down} (now ${p})`, shared: instancesOf(from[s.edge]) });
  }
  const own = candidates.filter((f) => f.shared.length < 2);
  const fixes = (own.length ? own : candidates).slice(0, 2);
  const shared = fixes.find((f) => f.shared.length > 1);
  const def = shared && nodePaths[nodes.findIndex((n) => n.id === shared.shared[0])].replace(/\.nodes\[\d+\]$/, '');
  const instances = shared?.shared.map((id) => (id.includes('/') ? id.slice(0, id.lastIndexOf('/')) : id));
  const sharedNote = shared
    ? ` (${def} is written once for its instances ${instances!.join(', ')}: a rate written there changes each of them; to change one, write the rate as a param of ${def} and set it in that instance's params)`
    : '';
  const hint = `${fixes.length ? `set ${fixes.map((f) => f.text).join(', or ')}${sharedNote}; or ` : ''}change the rates so that going round, a node fires once per firing of itself`;
  // Named at an edge written once where the cycle has one (not an edge of a shared def).
  const edgeShared = (x: number) => edgePaths.filter((q) => q === edgePaths[x]).length > 1;
  const at = edgeShared(e) ? (steps.map((s) => s.edge).find((x) => !edgeShared(x)) ?? e) : e;
  return error(edgePaths[at], message, hint);
}

function namesFirings(mapping: Record<string, string>): boolean {
  for (const key in mapping) if (key.includes('#')) return true;
  return false;
}

/**
 * The mapping for the firings: `X` maps every firing of X, `X#3` overrides it for firing 3.
 * Keys naming no node pass through for validate to report.
 */
function mapFirings(
  mapping: Record<string, string>,
  nodes: AppNode[],
  index: Map<string, number>,
  q: number[],
  idOf: (node: number, firing: number) => string,
  out: Diagnostic[],
): Record<string, string> {
  const override = new Map<string, string>();
  const unknown: [string, string][] = [];
  for (const key in mapping) {
    if (!Object.hasOwn(mapping, key) || index.has(key)) continue;
    const pe = mapping[key];
    const m = /^(.*)#(0|[1-9]\d*)$/.exec(key);
    const node = m ? index.get(m[1]) : undefined;
    if (node === undefined) {
      unknown.push([key, pe]);
      continue;
    }
    const f = Number(m![2]);
    if (f >= q[node]) {
      const id = nodes[node].id;
      out.push(
        error(
          `mapping.${key}`,
          q[node] === 1
            ? `node "${id}" fires once per iteration: it has no firing ${f}`
            : `node "${id}" fires ${q[node]} times per iteration: its firings are ${id}#0 .. ${id}#${q[node] - 1}`,
          q[node] === 1 ? `map it as "${id}"` : `map one of those, or "${id}" for every firing`,
        ),
      );
      continue;
    }
    // (`X#0` of a node firing once names X itself: its one firing keeps its id.)
    override.set(idOf(node, f), pe);
  }
  if (!override.size && q.every((r) => r === 1)) return mapping;
  const lowered: Record<string, string> = {};
  nodes.forEach((n, i) => {
    if (index.get(n.id) !== i) return;
    const all = Object.hasOwn(mapping, n.id) ? mapping[n.id] : undefined;
    for (let f = 0; f < q[i]; f++) {
      const id = idOf(i, f);
      const pe = override.get(id) ?? all;
      if (pe !== undefined) lowered[id] = pe;
    }
  });
  for (const [key, pe] of unknown) lowered[key] = pe;
  return lowered;
}
