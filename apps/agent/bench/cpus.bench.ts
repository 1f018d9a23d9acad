// bench:cpus: one agent with N CPU PEs (`--cpus N`) against one PE, N = 1..4, on the same
// static work measured in the same run. The work: 12 P -> I -> C chains of CPU kernels doing
// real arithmetic each firing (P mlem.phantom: a volume of spheres and its projection; I
// mlem.projbp: projection and back-projection; C mlem.error: the relative error to the
// volume), chain j's P on core j mod N, its I on the next core and its C on the one after, so
// the cores share the chains evenly when N divides 12 and, from N = 2 on, every edge is a copy
// between two cores through the host's shared memory. (The matrix kernels' CPU twins add
// nb_loop's sum in one pass: no work to measure.) Printed per N: the steady cycle time (core's trace
// analysis, fill and drain left out), the speedup over N = 1 and the ideal (N, the cores'
// share of the 12 chains). More PEs than the machine has cores share them: on 2 cores the
// speedup stops at 2 and beyond it shows the contention; a host with N free cores shows N.
//
//   npm run bench:cpus -- [--cpus 1,2,3,4] [--size 16] [--angles 36] [--iterations 8] [--rounds 3] [--sync self-timed|barrier]
//
// `benchCpus` is what bench:io calls for its multi-CPU half.
import { availableParallelism, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { ProjectDocument, SyncMode } from '@pipeloom/core';
import { spawnLocalAgents } from '../src/local/spawn.js';
import { compileOrThrow, connect } from '../src/testing/fixtures.js';
import { arg, argList, cpuSeconds, cycleTime, median, ms, table } from './common.js';

export interface CpusBenchOptions {
  /** PE counts to measure (default 1..4); N = 1 is always measured, as the baseline. */
  cpus?: number[];
  /** MLEM's volume edge (voxels). */
  size?: number;
  /** MLEM's projection angles: the work of each P and I firing grows with them. */
  angles?: number;
  iterations?: number;
  /** Runs per N; the median is kept. */
  rounds?: number;
  /** Default self-timed. */
  sync?: SyncMode;
}

export interface CpusRow {
  cpus: number;
  /** Steady seconds per cycle (the median over the rounds). */
  cycle: number;
  /** Cycle time at N = 1 over this one. */
  speedup: number;
  /** What N cores would give: 12 over the most chains' stages one core holds. */
  ideal: number;
  /** The ideal within this machine's cores (more PEs than cores take turns on them). */
  here: number;
  /** The agent's CPU seconds per wall second over its runs (the median): the cores it got. */
  busy: number;
}

const CHAINS = 12;

/** 12 P -> I -> C chains on cpu0@h0 .. cpu{n-1}@h0 (memory links between every two): chain j's stages on cores j, j + 1, j + 2 (mod n). */
export function chainsDoc(n: number, size: number, angles: number, iterations: number): ProjectDocument {
  const cores = Array.from({ length: n }, (_, i) => `cpu${i}@h0`);
  const nodes: ProjectDocument['app']['nodes'] = [];
  const edges: ProjectDocument['app']['edges'] = [];
  const mapping: Record<string, string> = {};
  for (let j = 0; j < CHAINS; j++) {
    const [p, i, c] = [`P${j}`, `I${j}`, `C${j}`];
    nodes.push(
      { id: p, kernel: 'mlem.phantom', params: { size, angles, spheres: 6, seed: j + 1 } },
      { id: i, kernel: 'mlem.projbp', params: { size, angles } },
      // A back-projection is not an estimate: C measures its error without bounding it.
      { id: c, kernel: 'mlem.error', params: { size, max_error: 1000 } },
    );
    const edge = (from: string, out: string, to: string, port: string) => edges.push({ from: { node: from, port: out }, to: { node: to, port } });
    edge(p, 'sinogram', i, 'sinogram');
    edge(p, 'truth', i, 'estimate');
    edge(i, 'backprojection', c, 'estimate');
    edge(p, 'truth', c, 'truth');
    [p, i, c].forEach((id, s) => (mapping[id] = cores[(j + s) % n]));
  }
  const links: ProjectDocument['arch']['links'] = [];
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++) links.push({ a: cores[a], b: cores[b], kind: 'memory', bandwidth: 1e10, latency: 1e-6, duplex: true });
  return {
    format: 'pipeloom/v2',
    name: `${CHAINS} P-I-C chains on ${n} CPU PEs`,
    app: { nodes, edges },
    arch: { hosts: [{ id: 'h0' }], pes: cores.map((id) => ({ id, host: 'h0', kind: 'cpu', memory: 1 << 30 })), links },
    mapping,
    options: { overlap: true, iterations },
  };
}

/** Runs the sweep on one local agent serving the most PEs asked for; rows in the order of `cpus`. */
export async function benchCpus(o: CpusBenchOptions = {}): Promise<CpusRow[]> {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const counts = [...new Set([1, ...(o.cpus ?? [1, 2, 3, 4])])].sort((a, b) => a - b);
  const size = o.size ?? 16;
  const angles = o.angles ?? 36;
  const iterations = o.iterations ?? 8;
  const rounds = o.rounds ?? 3;
  const local = await spawnLocalAgents(['h0'], { cpuOnly: ['h0'], args: ['--cpus', String(Math.max(...counts))] });
  try {
    const c = await connect(
      local.agents.map((a) => a.url),
      local.token,
    );
    try {
      const cycles = new Map<number, number>();
      // Rounds interleave the counts, so a change in the machine's load falls on all of them alike.
      const samples = new Map<number, number[]>(counts.map((n) => [n, []]));
      const busy = new Map<number, number[]>(counts.map((n) => [n, []]));
      const pid = local.agents[0].process.pid!;
      for (let r = 0; r < rounds; r++)
        for (const n of counts) {
          const ig = compileOrThrow(chainsDoc(n, size, angles, iterations), true);
          const [cpu0, t0] = [cpuSeconds([pid]), performance.now()];
          const run = await c.run(ig, { iterations, keepEvents: true, sync: o.sync ?? 'self-timed' }).done;
          busy.get(n)!.push((cpuSeconds([pid]) - cpu0) / ((performance.now() - t0) / 1000));
          if (!run.ok) throw new Error(`${n} CPU PEs: run failed: ${JSON.stringify(run.failure)}`);
          samples.get(n)!.push(cycleTime(ig, run));
        }
      for (const [n, xs] of samples) cycles.set(n, median(xs));
      const base = cycles.get(1)!;
      return counts.map((n) => {
        const ideal = CHAINS / Math.ceil(CHAINS / n);
        return {
          cpus: n,
          cycle: cycles.get(n)!,
          speedup: base / cycles.get(n)!,
          ideal,
          here: Math.min(ideal, availableParallelism()),
          busy: median(busy.get(n)!),
        };
      });
    } finally {
      c.close();
    }
  } finally {
    await local.stop();
  }
}

/** The sweep as a markdown table. */
export function cpusTable(rows: readonly CpusRow[]): string {
  return table(
    ['CPU PEs', 'cycle (ms)', 'speedup vs 1 PE', 'ideal on N cores', `ideal on ${availableParallelism()} cores`, 'cores the agent got'],
    rows.map((r) => [String(r.cpus), ms(r.cycle), `${r.speedup.toFixed(2)}x`, `${r.ideal.toFixed(2)}x`, `${r.here.toFixed(2)}x`, r.busy.toFixed(2)]),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const o: CpusBenchOptions = {
    cpus: argList('cpus', [1, 2, 3, 4]),
    size: arg('size', 16),
    angles: arg('angles', 36),
    iterations: arg('iterations', 8),
    rounds: arg('rounds', 3),
    sync: process.argv.includes('barrier') ? 'barrier' : 'self-timed',
  };
  console.log(
    `bench:cpus: ${CHAINS} P -> I -> C chains (MLEM phantom -> projbp -> error, ${o.size}^3 voxels, ${o.angles} angles), ${o.iterations} iterations, ${o.sync}, median of ${o.rounds} rounds; one agent, --cpus ${Math.max(...o.cpus!)}; this machine: ${availableParallelism()} cores`,
  );
  const load = () => loadavg()[0].toFixed(1);
  const before = load();
  const rows = await benchCpus(o);
  console.log(cpusTable(rows));
  console.log(`load average (1 min): ${before} before, ${load()} after`);
  process.exit(0);
}
