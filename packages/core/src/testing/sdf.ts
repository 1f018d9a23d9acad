import type { AppEdge, AppNode, Host, ProjectDocument } from '../document/types.js';
import { mulberry32, randomInt } from '../util/random.js';

// Seeded random synchronous-dataflow documents for property tests: consistent rates (drawn from
// a repetition vector), broadcast, optionally feedback edges with delays, on a random cluster.

export interface SdfOptions {
  nodes: number;
  hosts: number;
  /** Most GPUs per host (each host gets 0..maxGpus). */
  maxGpus: number;
  overlap: boolean;
  /** Most firings per iteration of a node (default 4). */
  maxRepetition?: number;
  /** Delays on some forward edges, and feedback edges (each with a delay of at least one iteration's tokens, so every cycle is live). */
  delays?: boolean;
  iterations?: number;
}

/**
 * A random consistent SDF graph of generic.work nodes: node i fires q[i] times per iteration
 * (q drawn first, so every edge balances), each edge carries s x lcm(q) tokens per iteration
 * (s = 1 or 2, per output port), and each node's `bytes` is chosen so that both ends of every
 * edge have the same token size: the expansion's token types always match. Outputs may feed
 * several inputs (broadcast). Returns the document and its repetition vector (the smallest, by
 * node index), which lowering must find.
 */
export function sdfDocument(seed: number, o: SdfOptions): { doc: ProjectDocument; q: number[] } {
  const rand = mulberry32(seed);
  const n = Math.max(1, o.nodes);
  const q = Array.from({ length: n }, () => randomInt(rand, 1, o.maxRepetition ?? 4));
  const lcm = q.reduce((a, b) => (a * b) / gcd(a, b), 1);
  const outputs = q.map(() => randomInt(rand, 1, 2));
  // Tokens per iteration of each output port (s x lcm), and so its rate.
  const tokens = q.map((_, i) => Array.from({ length: outputs[i] }, () => randomInt(rand, 1, 2) * lcm));
  const inputs: { from: number; port: number; delay: number }[][] = q.map(() => []);
  for (let i = 1; i < n; i++) {
    // Some nodes are sources of their own (a component or a second source); the others read 1 or 2 earlier nodes.
    if (rand() < 0.1) continue;
    const count = randomInt(rand, 1, 2);
    for (let k = 0; k < count; k++) {
      const from = randomInt(rand, 0, i - 1);
      const port = randomInt(rand, 0, outputs[from] - 1);
      const t = tokens[from][port];
      inputs[i].push({ from, port, delay: o.delays && rand() < 0.3 ? randomInt(rand, 1, t) : 0 });
    }
  }
  if (o.delays) {
    // Feedback: a later node back to an earlier one, at least one iteration's tokens of delay.
    for (let k = 0; k < Math.floor(n / 3); k++) {
      const from = randomInt(rand, 0, n - 1);
      const to = randomInt(rand, 0, from);
      const port = randomInt(rand, 0, outputs[from] - 1);
      const t = tokens[from][port];
      inputs[to].push({ from, port, delay: randomInt(rand, t, 2 * t) });
    }
  }
  // Words per iteration through every edge: a multiple of every edge's tokens, so each token is whole words.
  const words = tokens.flat().reduce((a, b) => (a * b) / gcd(a, b), 1) * randomInt(rand, 1, 2);
  const nodes: AppNode[] = q.map((r, i) => {
    const rates: Record<string, number> = {};
    tokens[i].forEach((t, k) => (rates[`out${k}`] = t / r));
    inputs[i].forEach((e, k) => (rates[`in${k}`] = tokens[e.from][e.port] / r));
    return { id: `n${i}`, kernel: 'generic.work', params: { inputs: inputs[i].length, outputs: outputs[i], bytes: (4 * words) / r, flops: 1e5 }, rates };
  });
  const edges: AppEdge[] = [];
  inputs.forEach((list, i) =>
    list.forEach((e, k) =>
      edges.push({
        from: { node: `n${e.from}`, port: `out${e.port}` },
        to: { node: `n${i}`, port: `in${k}` },
        ...(e.delay ? { delay: e.delay, init: 0 } : {}),
      }),
    ),
  );
  // The smallest repetition vector: per connected component, q over the component's gcd.
  const root = q.map((_, i) => i);
  const find = (x: number): number => (root[x] === x ? x : (root[x] = find(root[x])));
  inputs.forEach((list, i) => list.forEach((e) => (root[find(e.from)] = find(i))));
  const divisor = new Map<number, number>();
  q.forEach((r, i) => divisor.set(find(i), gcd(divisor.get(find(i)) ?? 0, r)));
  const smallest = q.map((r, i) => r / divisor.get(find(i))!);
  const hosts: Host[] = [];
  const pes: string[] = [];
  for (let h = 0; h < o.hosts; h++) {
    const gpus = randomInt(rand, 0, o.maxGpus);
    hosts.push({ id: `h${h}`, cpus: 1, gpus });
    pes.push(`cpu@h${h}`);
    for (let g = 0; g < gpus; g++) pes.push(`gpu${g}@h${h}`);
  }
  const mapping: Record<string, string> = {};
  smallest.forEach((r, i) => {
    mapping[`n${i}`] = pes[randomInt(rand, 0, pes.length - 1)];
    // Now and then one firing of a multi-rate node elsewhere than the others.
    if (r > 1 && rand() < 0.3) mapping[`n${i}#${randomInt(rand, 0, r - 1)}`] = pes[randomInt(rand, 0, pes.length - 1)];
  });
  const doc: ProjectDocument = {
    format: 'pipeloom/v2',
    name: `sdf ${seed}`,
    app: { nodes, edges },
    arch: { hosts, pes: [], links: [], ...(o.hosts > 1 ? { network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 } } : {}) },
    mapping,
    options: { overlap: o.overlap, iterations: o.iterations ?? 4 },
  };
  return { doc, q: smallest };
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
