// bench:taskbag: the Boss/Worker task bag against PACCO's static mapping on the same
// MLEM document, agents and traces. MLEM N^3 (32 by default), 180 angles, 1 warm-up + 5 timed
// iterations; projbp split into K shares (tasks: K). Static: equal interleaved shares per PE (the
// paper's listing). Task bag: prefetch 1, 2 and unbounded.
//
// (a) No GPU, 2 cores: two agents with one CPU PE each, the second slowed s times (a labelled
// emulation: it sleeps (s - 1) x each task's run time, using no core), s in {1, 2, 4}; then a
// CPU PE beside an llvmpipe PE. Printed per row: ms per iteration, the speedup over static, the
// rate-weighted ideal ((s + 1) / 2 for the slowed pair), the policy's zero-overhead simulation
// from the run's own task times (run/policy.ts simulateBag) and measured / simulated. Then the
// per-task overhead (64 tasks of an empty kernel per iteration) and the bytes of data that
// passed through the coordinator (0: agents pull from one another).
// Targets: equal PEs within 5% of static at K = 36; s = 4, K = 36: >= 0.9 of the simulated speedup.
//
// Flags: --size N --angles A --k 2,12,36,180 --slow 1,2,4 --iterations 6 --delay 2 --rounds 3.
import WebSocket from 'ws';
import {
  analyze,
  bagGraph,
  compile,
  Coordinator,
  type BagGraph,
  type ImplementationGraph,
  type ProjectDocument,
  type RunResult,
  type SocketLike,
} from '@pipeloom/core';
import { simulateBag, taskBagPolicy, type BagTask } from '@pipeloom/core/internal';
import { spawnLocalAgents, type LocalAgents } from '../src/local/spawn.js';
import { nodeClock } from '../src/cli/agents.js';
import { arg, argList, median, table } from './common.js';

process.env.EGL_PLATFORM ??= 'surfaceless';
const N = arg('size', 32);
const A = arg('angles', 180);
const Ks = argList('k', [2, 12, 36, 180]).filter((k) => k <= A);
const slows = argList('slow', [1, 2, 4]);
const ITERATIONS = arg('iterations', 6);
/**
 * The loop's delay, in both modes: static mode cannot run a loop across two PEs within one cycle
 * (core's loop rule: its data takes 2 cycles round without overlap), so the static baseline needs
 * D >= 2, and the task bag runs the same document. Iteration k then holds MLEM step floor(k / D) + 1:
 * the same work per iteration as the paper's D = 1, two interleaved sequences.
 */
const D = arg('delay', 2);
/** Runs of each configuration; the median per-iteration time is reported (a 2-core machine's noise). */
const ROUNDS = arg('rounds', 3);

/** The MLEM example at N^3, A angles, projbp split K ways over `pes` (static: equal shares each), phantom and update on the first. */
function mlem(k: number, pes: string[], hosts: { id: string; cpus: number; gpus: number }[], delay = D): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: `MLEM ${N}^3, ${A} angles, K = ${k}`,
    app: {
      nodes: [
        { id: 'phantom', kernel: 'mlem.phantom', params: { size: N, angles: A, spheres: 6, seed: 1 } },
        { id: 'projbp', kernel: 'mlem.projbp', params: { size: N, angles: A }, tasks: k },
        { id: 'update', kernel: 'mlem.update', params: { size: N } },
      ],
      edges: [
        { from: { node: 'phantom', port: 'sinogram' }, to: { node: 'projbp', port: 'sinogram' } },
        { from: { node: 'update', port: 'estimate' }, to: { node: 'projbp', port: 'estimate' }, delay, init: 1 },
        { from: { node: 'projbp', port: 'backprojection' }, to: { node: 'update', port: 'backprojection' } },
        { from: { node: 'phantom', port: 'sensitivity' }, to: { node: 'update', port: 'sensitivity' } },
        { from: { node: 'update', port: 'estimate' }, to: { node: 'update', port: 'previous' }, delay, init: 1 },
      ],
    },
    arch: { hosts, network: { kind: 'ethernet', bandwidth: 1.25e9, latency: 5e-5 } },
    mapping: { phantom: pes[0], projbp: pes, update: pes[0] },
    options: { overlap: false, iterations: ITERATIONS },
  } as unknown as ProjectDocument;
}

/** 64 independent empty tasks per iteration: what a task costs beyond its kernel. */
function empties(pes: string[], hosts: { id: string; cpus: number; gpus: number }[]): ProjectDocument {
  const nodes = Array.from({ length: 64 }, (_, i) => ({ id: `e${i}`, kernel: 'generic.work', params: { inputs: 0, outputs: 1, bytes: 4, flops: 0 } }));
  return {
    format: 'pipeloom/v2',
    name: 'empty tasks',
    app: { nodes, edges: [] },
    arch: { hosts },
    mapping: Object.fromEntries(nodes.map((n, i) => [n.id, pes[i % pes.length]])),
    options: { overlap: false, iterations: 20 },
  } as unknown as ProjectDocument;
}

function orThrow<T>(x: T | undefined, what: string, diagnostics: unknown): T {
  if (x === undefined) throw new Error(`${what}: ${JSON.stringify(diagnostics)}`);
  return x;
}
/** The static plan with the smallest loop delay from `D` up that static mode accepts (a GPU on another host lengthens the loop), and that delay. */
function staticOf(make: (delay: number) => ProjectDocument): { ig: ImplementationGraph; delay: number } {
  for (let delay = D; ; delay++) {
    const r = compile(make(delay));
    if (r.ok) return { ig: r.ig, delay };
    if (delay >= 16 || !r.diagnostics.every((d) => d.path.endsWith('.delay'))) throw new Error(`compile: ${JSON.stringify(r.diagnostics)}`);
  }
}
const bagOf = (doc: ProjectDocument): BagGraph => {
  const { model, diagnostics } = analyze(doc);
  const m = orThrow(model, 'analyze', diagnostics);
  const g = bagGraph(m);
  return orThrow(g.graph, 'bagGraph', g.diagnostics);
};

/** Bytes the coordinator received from agents: text (control) and binary (data; none expected). */
const received = { text: 0, binary: 0 };
const countingConnect = (url: string): SocketLike => {
  const ws = new WebSocket(url, { maxPayload: 1 << 30 });
  ws.on('message', (data, isBinary) => {
    const n = Array.isArray(data) ? data.reduce((s, b) => s + b.length, 0) : (data as Buffer).byteLength;
    if (isBinary) received.binary += n;
    else received.text += n;
  });
  return ws as unknown as SocketLike;
};

async function open(hosts: string[], gpus: Record<string, number>): Promise<{ local: LocalAgents; c: Coordinator; close(): Promise<void> }> {
  // Hosts without GPUs in the document serve their CPU only.
  const local = await spawnLocalAgents(hosts, { gpus, cpuOnly: hosts.filter((h) => !gpus[h]) });
  const c = await Coordinator.connect(
    local.agents.map((a) => a.url),
    { token: local.token, connect: countingConnect, clock: nodeClock, timeout: 60_000 },
  );
  return { local, c, close: async () => (c.close(), await local.stop()) };
}

function okOrThrow(r: RunResult, what: string): RunResult {
  if (!r.ok) throw new Error(`${what} failed: ${JSON.stringify(r.failure)}`);
  return r;
}

/** Seconds per timed iteration: between the ends of update's first and last firings (the warm-up is iteration 0). */
function perIteration(r: RunResult): number {
  const ends = new Map<number, number>();
  for (const e of r.events) if (e.kind === 'fire' && e.node === 'update') ends.set(e.iteration, Math.max(ends.get(e.iteration) ?? 0, e.end));
  const last = r.iterations - 1;
  return (ends.get(last)! - ends.get(0)!) / 1e6 / last;
}

/** The policy alone on the run's own task times: the shares' mean time per PE, K shares per iteration, plus the chain's other firings. */
function simulated(r: RunResult, k: number, pes: string[]): number {
  const timed = r.events.filter((e) => e.kind === 'fire' && e.iteration > 0);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const share = new Map(pes.map((pe) => [pe, mean(timed.filter((e) => e.pe === pe && e.node?.startsWith('projbp[')).map((e) => (e.end - e.start) / 1e6))]));
  // A PE that ran no share: its time is unknown; the slowest known stands in.
  const known = [...share.values()].filter((x) => x > 0);
  for (const pe of pes) if (!share.get(pe)) share.set(pe, Math.max(...known));
  const rest = ['projbp', 'update'].reduce((s, node) => s + mean(timed.filter((e) => e.node === node).map((e) => (e.end - e.start) / 1e6)), 0);
  const tasks: BagTask[] = Array.from({ length: k }, (_, j) => ({ id: `projbp[${j}]`, node: `projbp[${j}]`, iteration: 0, share: j, order: j, capable: pes }));
  return simulateBag(tasks, pes, (_t, pe) => share.get(pe)!, taskBagPolicy()).makespan + rest;
}

const f2 = (x: number) => x.toFixed(2);
const msOf = (s: number) => (s * 1000).toFixed(1);

async function pair(
  label: string,
  hosts: { id: string; cpus: number; gpus: number }[],
  pes: string[],
  gpus: Record<string, number>,
  rows: string[][],
  checks: string[],
  slowList: number[],
  kList: number[],
) {
  const cl = await open(
    hosts.map((h) => h.id),
    gpus,
  );
  try {
    for (const s of slowList) {
      const slow = s > 1 ? { [pes[1]]: s } : undefined;
      for (const k of kList) {
        const plan = staticOf((delay) => mlem(k, pes, hosts, delay));
        const statics: number[] = [];
        for (let round = 0; round < ROUNDS; round++)
          statics.push(perIteration(okOrThrow(await cl.c.run(plan.ig, { iterations: ITERATIONS, slow, sync: 'self-timed' }).done, `static K=${k} s=${s}`)));
        const tStatic = median(statics);
        // The task bag runs the same document, loop delay included.
        const graph = bagOf(mlem(k, pes, hosts, plan.delay));
        for (const prefetch of [1, 2, 'unbounded'] as const) {
          const runs: { t: number; sim: number }[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            const r = okOrThrow(await cl.c.runBag(graph, { iterations: ITERATIONS, prefetch, slow, pes }).done, `taskbag K=${k} s=${s} prefetch ${prefetch}`);
            runs.push({ t: perIteration(r), sim: simulated(r, k, pes) });
          }
          // The round with the median time, and the simulation from that round's own task times.
          const { t, sim } = [...runs].sort((a, b) => a.t - b.t)[Math.floor(runs.length / 2)];
          const ideal = label.startsWith('slowed') ? (s + 1) / 2 : NaN;
          rows.push([
            label,
            String(plan.delay),
            String(s),
            String(k),
            String(prefetch),
            msOf(tStatic),
            msOf(t),
            f2(tStatic / t),
            Number.isNaN(ideal) ? '-' : f2(ideal),
            f2(tStatic / sim),
            f2(sim / t),
          ]);
          console.error(rows.at(-1)!.join(' | '));
          if (k === 36 && prefetch === 2 && s === 1 && label.startsWith('slowed'))
            checks.push(`equal PEs, K = 36, prefetch 2: task bag / static = ${f2(t / tStatic)} (target <= 1.05): ${t / tStatic <= 1.05 ? 'met' : 'NOT met'}`);
          if (k === 36 && prefetch === 2 && s === 4 && label.startsWith('slowed'))
            checks.push(`s = 4, K = 36, prefetch 2: measured / simulated speedup = ${f2(sim / t)} (target >= 0.9): ${sim / t >= 0.9 ? 'met' : 'NOT met'}`);
        }
      }
    }
  } finally {
    await cl.close();
  }
}

async function main() {
  const started = Date.now();
  const rows: string[][] = [];
  const checks: string[] = [];
  const two = [
    { id: 'h0', cpus: 1, gpus: 0 },
    { id: 'h1', cpus: 1, gpus: 0 },
  ];
  await pair('slowed pair (2 CPU PEs)', two, ['cpu@h0', 'cpu@h1'], {}, rows, checks, slows, Ks);
  // h1's CPU PE stays out of the pool (its core runs llvmpipe): a CPU PE beside a GPU PE.
  const mixed = [
    { id: 'h0', cpus: 1, gpus: 0 },
    { id: 'h1', cpus: 1, gpus: 1 },
  ];
  await pair(
    'CPU + llvmpipe',
    mixed,
    ['cpu@h0', 'gpu0@h1'],
    { h1: 1 },
    rows,
    checks,
    [1],
    Ks.filter((k) => k === 36 || k === Ks[0]),
  );

  // Per-task overhead: 64 empty tasks per iteration on the two CPU PEs.
  const cl = await open(['h0', 'h1'], {});
  let overhead = '';
  try {
    const doc = empties(['cpu@h0', 'cpu@h1'], two);
    const r = okOrThrow(await cl.c.runBag(bagOf(doc), { iterations: 20, pes: ['cpu@h0', 'cpu@h1'] }).done, 'empty tasks');
    const tasks = r.bag!.committed;
    const fire = r.events.filter((e) => e.kind === 'fire').reduce((s, e) => s + (e.end - e.start) / 1e6, 0);
    overhead = `per-task overhead (64 empty tasks x 20 iterations on 2 PEs): ${(((r.seconds * 2) / tasks) * 1e6).toFixed(0)} µs of PE time per task, of which ${((fire / tasks) * 1e6).toFixed(0)} µs in the kernel`;
  } finally {
    await cl.close();
  }

  console.log(
    `\nbench:taskbag — MLEM ${N}^3, ${A} angles, loop delay D (the least static mode accepts, from ${D}), ${ITERATIONS - 1} timed iterations after 1 warm-up; ${new Date().toISOString().slice(0, 16)} UTC\n`,
  );
  console.log(table(['setup', 'D', 's', 'K', 'prefetch', 'static ms/it', 'bag ms/it', 'speedup', 'ideal', 'simulated', 'measured/sim'], rows));
  console.log(`\n${overhead}`);
  console.log(`data bytes through the coordinator: ${received.binary} (control text received: ${(received.text / 1e6).toFixed(1)} MB, trace batches included)`);
  for (const c of checks) console.log(`target: ${c}`);
  console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

await main();
