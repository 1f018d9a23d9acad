import type { AppEdge, AppNode, Host, Link, ProjectDocument } from '../document/types.js';
import { mulberry32, randomInt } from '../util/random.js';

// Seeded document generators for property tests and the compile benchmark. Only the
// matrix.* kernels, so every generated document is valid.

export interface RandomOptions {
  nodes: number;
  hosts: number;
  /** Most GPUs per host (each host gets 0..maxGpus). */
  maxGpus: number;
  overlap: boolean;
  iterations?: number;
  /**
   * Lowered multi-rate groups too (the form document/rates.ts makes): a source's output split
   * into 2 or 4 tokens, firings `sK#j` each taking one or two of them, joined back in parts into
   * one node's input (matrices 4 rows high, so every split is even).
   */
  splitJoin?: boolean;
  /** Most CPU PEs per host (each host gets 1..maxCpus, `cpus: N`); absent: one, `cpu@<host>`. */
  maxCpus?: number;
}

/**
 * A random DAG (producers, incrementers, adders, consumers) on a random cluster: hosts in a
 * chain or full mesh of CPUs, optional NVLink between a host's GPUs and occasional direct
 * links, random bandwidths so routes vary; a random mapping.
 */
export function randomDocument(seed: number, o: RandomOptions): ProjectDocument {
  const rand = mulberry32(seed);
  const size = randomInt(rand, 1, 3);
  const params = { width: size, height: o.splitJoin ? 4 : randomInt(rand, 1, 4) };
  const nodes: AppNode[] = [];
  const edges: AppEdge[] = [];
  const sources: string[] = [];
  // The rate of each source's output, once a split has set it.
  const rateOf = new Map<string, number>();
  for (let i = 0; i < o.nodes; i++) {
    const id = `n${i}`;
    if (o.splitJoin && sources.length && rand() < 0.3) {
      addSplitJoin(rand, id, sources, rateOf, nodes, edges, params);
      continue;
    }
    const r = rand();
    const kind = sources.length === 0 || r < 0.15 ? 'produce' : r < 0.55 ? 'increment' : r < 0.8 ? 'add' : 'consume';
    nodes.push({ id, kernel: `matrix.${kind}`, params: { ...params } });
    const inputs = kind === 'produce' ? [] : kind === 'add' ? ['a', 'b'] : ['in'];
    for (const port of inputs) edges.push({ from: { node: sources[randomInt(rand, 0, sources.length - 1)], port: 'out' }, to: { node: id, port } });
    if (kind !== 'consume') sources.push(id);
  }
  // A whole edge from an output split into r tokens carries all r: its reader takes r per firing.
  for (const e of edges) {
    const r = rateOf.get(e.from.node);
    if (r === undefined || e.fromTokens) continue;
    const to = nodes.find((n) => n.id === e.to.node)!;
    to.rates = { ...to.rates, [e.to.port]: r };
  }
  const hosts: Host[] = [];
  const links: Link[] = [];
  const pes: string[] = [];
  const bw = () => [1e9, 2e9, 5e9, 1e10][randomInt(rand, 0, 3)];
  // The CPU PE each host's network links start from (its first).
  const cpu: string[] = [];
  for (let h = 0; h < o.hosts; h++) {
    const gpus = randomInt(rand, 0, o.maxGpus);
    // Drawn only when asked, so the documents of earlier seeds stay as they were.
    const cpus = o.maxCpus === undefined ? 1 : randomInt(rand, 1, o.maxCpus);
    hosts.push({ id: `h${h}`, cpus, gpus, pcie: { bandwidth: bw(), latency: 1e-5, duplex: rand() < 0.7 } });
    const ids = cpus === 1 ? [`cpu@h${h}`] : Array.from({ length: cpus }, (_, k) => `cpu${k}@h${h}`);
    cpu.push(ids[0]);
    pes.push(...ids);
    for (let g = 0; g < gpus; g++) pes.push(`gpu${g}@h${h}`);
    if (gpus >= 2 && rand() < 0.4) links.push({ a: `gpu0@h${h}`, b: `gpu1@h${h}`, kind: 'nvlink', bandwidth: bw(), latency: 1e-6, duplex: true });
  }
  const chain = rand() < 0.5;
  for (let h = 0; h < o.hosts; h++) {
    for (let j = h + 1; j < o.hosts; j++) {
      if (chain && j !== h + 1) continue;
      links.push({ a: cpu[h], b: cpu[j], kind: 'infiniband', bandwidth: bw(), latency: 2e-6, duplex: true });
    }
  }
  if (o.hosts >= 2 && pes.length > 2 && rand() < 0.3) {
    const a = pes[randomInt(rand, 0, pes.length - 1)];
    const b = pes[randomInt(rand, 0, pes.length - 1)];
    if (a !== b) links.push({ a, b, kind: 'ethernet', bandwidth: bw(), latency: 5e-5, duplex: false });
  }
  const mapping: Record<string, string> = {};
  for (const n of nodes) mapping[n.id] = pes[randomInt(rand, 0, pes.length - 1)];
  return {
    format: 'pipeloom/v2',
    name: `random ${seed}`,
    app: { nodes, edges },
    arch: { hosts, pes: [], links },
    mapping,
    options: { overlap: o.overlap, iterations: o.iterations ?? 6 },
  };
}

/**
 * A split of a source into r tokens (the rate of its output: 2 or 4), firings `id#j` taking
 * `per` tokens each (matrix.increment on a band of rows), and node `id` (matrix.increment,
 * input rate r) fed by them in parts: the lowered form of a 1 -> r/per -> 1 multi-rate group.
 */
function addSplitJoin(
  rand: () => number,
  id: string,
  sources: string[],
  rateOf: Map<string, number>,
  nodes: AppNode[],
  edges: AppEdge[],
  params: { width: number; height: number },
): void {
  const src = sources[randomInt(rand, 0, sources.length - 1)];
  let r = rateOf.get(src);
  if (r === undefined) {
    r = rand() < 0.5 ? 2 : 4;
    rateOf.set(src, r);
    const node = nodes.find((n) => n.id === src)!;
    node.rates = { ...node.rates, out: r };
  }
  const per = r === 4 && rand() < 0.5 ? 2 : 1;
  const firings = r / per;
  for (let j = 0; j < firings; j++) {
    const f = `${id}#${j}`;
    nodes.push({
      id: f,
      kernel: 'matrix.increment',
      params: { width: params.width, height: (params.height / r) * per },
      ...(per > 1 ? { rates: { in: per, out: per } } : {}),
      firing: { node: id, index: j, of: firings },
    });
    edges.push({ from: { node: src, port: 'out' }, to: { node: f, port: 'in' }, fromTokens: { first: j * per, count: per, of: r } });
    edges.push({ from: { node: f, port: 'out' }, to: { node: id, port: 'in' }, toTokens: { first: j * per, count: per, of: r } });
  }
  nodes.push({ id, kernel: 'matrix.increment', params: { ...params }, rates: { in: r } });
  sources.push(id);
}

/**
 * A hand-lowered split/join: `frame` (matrix.produce, height x width, output rate `slices`)
 * split into `slice#0` .. (matrix.increment on height / slices rows each), joined back in parts
 * into `check` (matrix.consume, input rate `slices`). `pe(id)` maps each node.
 */
export function splitJoinDocument(o: {
  slices: number;
  width: number;
  height: number;
  nbLoop?: number;
  arch: ProjectDocument['arch'];
  pe: (id: string) => string;
  overlap?: boolean;
  iterations?: number;
  sync?: ProjectDocument['options']['sync'];
}): ProjectDocument {
  const n = o.slices;
  const nodes: AppNode[] = [{ id: 'frame', kernel: 'matrix.produce', params: { width: o.width, height: o.height }, rates: { out: n } }];
  const edges: AppEdge[] = [];
  for (let j = 0; j < n; j++) {
    const id = `slice#${j}`;
    nodes.push({
      id,
      kernel: 'matrix.increment',
      params: { width: o.width, height: o.height / n, nb_loop: o.nbLoop ?? 5 },
      firing: { node: 'slice', index: j, of: n },
    });
    edges.push({ from: { node: 'frame', port: 'out' }, to: { node: id, port: 'in' }, fromTokens: { first: j, count: 1, of: n } });
    edges.push({ from: { node: id, port: 'out' }, to: { node: 'check', port: 'in' }, toTokens: { first: j, count: 1, of: n } });
  }
  nodes.push({ id: 'check', kernel: 'matrix.consume', params: { width: o.width, height: o.height }, rates: { in: n } });
  return {
    format: 'pipeloom/v2',
    name: `split/join 1 -> ${n} -> 1`,
    app: { nodes, edges },
    arch: o.arch,
    mapping: Object.fromEntries(nodes.map((x) => [x.id, o.pe(x.id)])),
    options: { overlap: o.overlap ?? false, iterations: o.iterations ?? 6, ...(o.sync ? { sync: o.sync } : {}) },
  };
}

/**
 * A layered DAG for the benchmark: `nodes` nodes in layers of `width`, each reading one or two
 * nodes of the layer before; hosts of 1 CPU + `gpus` GPUs on an InfiniBand network; each
 * layer mapped to a random host's PEs (pipelines keep neighbouring stages close).
 */
export function layeredDocument(seed: number, o: { nodes: number; hosts: number; gpus: number; width?: number }): ProjectDocument {
  const rand = mulberry32(seed);
  const width = o.width ?? 64;
  const params = { width: 256, height: 256 };
  const nodes: AppNode[] = [];
  const edges: AppEdge[] = [];
  const mapping: Record<string, string> = {};
  const pesOf = (h: number) => [`cpu@h${h}`, ...Array.from({ length: o.gpus }, (_, g) => `gpu${g}@h${h}`)];
  let prev: string[] = [];
  for (let i = 0; i < o.nodes;) {
    const layer: string[] = [];
    const host = randomInt(rand, 0, o.hosts - 1);
    const near = rand() < 0.5 ? host : (host + 1) % o.hosts;
    for (let j = 0; j < width && i < o.nodes; j++, i++) {
      const id = `n${i}`;
      if (prev.length === 0) nodes.push({ id, kernel: 'matrix.produce', params });
      else if (rand() < 0.3) {
        nodes.push({ id, kernel: 'matrix.add', params });
        edges.push({ from: { node: prev[randomInt(rand, 0, prev.length - 1)], port: 'out' }, to: { node: id, port: 'a' } });
        edges.push({ from: { node: prev[randomInt(rand, 0, prev.length - 1)], port: 'out' }, to: { node: id, port: 'b' } });
      } else {
        nodes.push({ id, kernel: 'matrix.increment', params });
        edges.push({ from: { node: prev[randomInt(rand, 0, prev.length - 1)], port: 'out' }, to: { node: id, port: 'in' } });
      }
      const pes = pesOf(rand() < 0.8 ? host : near);
      mapping[id] = pes[randomInt(rand, 0, pes.length - 1)];
      layer.push(id);
    }
    prev = layer;
  }
  return {
    format: 'pipeloom/v2',
    name: `layered ${o.nodes}`,
    app: { nodes, edges },
    arch: {
      hosts: Array.from({ length: o.hosts }, (_, h) => ({ id: `h${h}`, cpus: 1, gpus: o.gpus, pcie: { bandwidth: 5e9, latency: 1e-5 } })),
      pes: [],
      links: [],
      network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
    },
    mapping,
    options: { overlap: true, iterations: 100 },
  };
}
