import { describe, expect, it } from 'vitest';
import {
  allPrograms,
  barrierSlice,
  NETWORKS,
  SCAN_OUTPUTS,
  SCAN_STRATEGIES,
  SYNC_MODES,
  operatorApplications,
  scanModel,
  scanPlan,
  type ImplementationGraph,
  type ProjectDocument,
  type RunResult,
  type ScanExecution,
  type ScanNetwork,
  type ScanOutput,
  type ScanStrategy,
  type SyncMode,
  type TraceEvent,
} from '@pipeloom/core';
import { scanBarriers } from '@pipeloom/core/internal';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, example } from './testing/fixtures.js';

// Scan macro-nodes on real agent processes on loopback: 2 agents x 2 PEs (the CPU and
// the llvmpipe GPU of each), N = 64 elements of scan.source scanned on 4 workers and checked
// element by element by scan.check (the known answer: ranges [0, i]; mat.mulmod's prefix
// products), with the total. Every network x strategy x output, eager and rounds, for scan.range and
// mat.mulmod (k = 3): the checkers pass, every expanded node fires once per iteration, and each
// worker fires the nodes and applications core's scanModel gives it. A deploy costs seconds
// (devices and pipelines on llvmpipe) whatever its size, so one document holds the 20 scans of
// an operator side by side, fed by one source; it runs under both compile strategies and both
// sync modes (barrier mode: no cluster-wide barrier inside the scans' one firing). The
// source and half the checkers run on GPU PEs (their WGSL), the rest on CPUs (their twins).

const agentsOf = agentsForSuite(['h0', 'h1']);

const N = 64;
const ITERATIONS = 3;
const WORKERS = ['cpu@h0', 'gpu0@h0', 'cpu@h1', 'gpu0@h1'];
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

interface Case {
  id: string;
  network: ScanNetwork;
  strategy: ScanStrategy;
  output: ScanOutput;
}
const CASES: Case[] = NETWORKS.flatMap((network) =>
  SCAN_STRATEGIES.flatMap((strategy) => SCAN_OUTPUTS.map((output) => ({ network, strategy, output }))).map((c, i) => ({ ...c, id: `${network}.${i}` })),
);

/** examples/scan-mulmod.json's source, scan and check, one scan and check per case, all scans on the example's four workers. */
function scansDoc(operator: 'scan.range' | 'mat.mulmod', execution: ScanExecution = 'eager'): ProjectDocument {
  const doc = example('scan-mulmod');
  expect(doc.mapping.scan1).toEqual(WORKERS);
  const [src, scan, check] = doc.app.nodes;
  const own: Record<string, number> = operator === 'mat.mulmod' ? { k: 3 } : {};
  const known = { operator, count: N, ...own };
  doc.app.nodes = [{ ...src, params: known }];
  doc.app.edges = [];
  // The WGSL source and checks run too: mat.mulmod's source on a GPU, every other checker on one.
  const mapping: Record<string, string | string[]> = { src: operator === 'mat.mulmod' ? 'gpu0@h0' : 'cpu@h0' };
  for (const [i, c] of CASES.entries()) {
    const checker = `check.${c.id}`;
    doc.app.nodes.push(
      { ...scan, id: c.id, params: { operator, network: c.network, strategy: c.strategy, output: c.output, execution, ...own } },
      { ...check, id: checker, params: { ...known, output: c.output, total: true } },
    );
    doc.app.edges.push(
      { from: { node: 'src', port: 'out' }, to: { node: c.id, port: 'in' } },
      { from: { node: c.id, port: 'out' }, to: { node: checker, port: 'out' } },
      { from: { node: c.id, port: 'total' }, to: { node: checker, port: 'total' } },
    );
    mapping[c.id] = WORKERS;
    mapping[checker] = i % 2 ? 'gpu0@h1' : 'cpu@h1';
  }
  doc.mapping = mapping as ProjectDocument['mapping'];
  return doc;
}

/** Per worker, one case's fires per iteration and the operator applications they make (each node looked up in the plan). */
function perWorker(events: TraceEvent[], c: Case, plan: ReturnType<typeof scanPlan>) {
  const byId = new Map(plan.nodes.map((n) => [`${c.id}/${n.key}`, n]));
  const nodes = new Array(WORKERS.length).fill(0);
  const apps = new Array(WORKERS.length).fill(0);
  for (const e of events) {
    if (e.kind !== 'fire' || !e.node?.startsWith(`${c.id}/`) || e.node.startsWith(`${c.id}/barrier.`)) continue;
    const n = byId.get(e.node);
    expect(n, `${e.node} is not in the plan`).toBeDefined();
    expect(WORKERS.indexOf(e.pe), `${e.node} fired on ${e.pe}`).toBe(n!.worker);
    nodes[n!.worker]++;
    apps[n!.worker] += operatorApplications(n!.mode, n!.count);
  }
  return { nodes: nodes.map((x) => x / ITERATIONS), applications: apps.map((x) => x / ITERATIONS) };
}

/** Runs `ig` on the suite's agents after checking they serve it; the run must end well. */
async function runChecked(ig: ImplementationGraph, sync: SyncMode): Promise<RunResult> {
  const c = await connect(
    agentsOf().agents.map((a) => a.url),
    agentsOf().token,
  );
  try {
    expect(c.check(ig)).toEqual([]);
    const r = await c.run(ig, { iterations: ITERATIONS, sync }).done;
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
    if (sync === 'barrier') {
      // A scan is one firing: inside it (phases without a barrier) no cluster-wide barrier is taken.
      const taken = new Set(r.events.filter((e) => e.kind === 'barrier').map((e) => e.name));
      ig.phases.forEach((name, f) => expect(taken.has(barrierSlice(name)), `barrier after phase ${name}`).toBe(ig.phaseBarriers?.[f] ?? true));
    }
    return r;
  } finally {
    c.close();
  }
}

describe(`scans of ${N} elements on ${WORKERS.join(', ')} (two agents), every network x strategy x output`, () => {
  for (const sync of SYNC_MODES)
    for (const operator of ['scan.range', 'mat.mulmod'] as const)
      for (const overlap of [false, true]) {
        it(`${operator} ${overlap ? 'with' : 'without'} overlap, ${sync}: the checkers pass, one fire per expanded node per iteration, each worker as the model says`, async () => {
          const ig = compileOrThrow(scansDoc(operator), overlap);
          const r = await runChecked(ig, sync);
          const fired = new Map<string, number[]>();
          for (const e of r.events) if (e.kind === 'fire' && e.node) (fired.get(e.node) ?? fired.set(e.node, []).get(e.node)!).push(e.iteration);
          for (const node of ig.order)
            expect(
              fired.get(node)?.sort((a, b) => a - b),
              node,
            ).toEqual(range(ITERATIONS));
          for (const k of CASES) {
            const what = `${k.network} ${k.strategy} ${k.output}`;
            const plan = scanPlan(N, WORKERS.length, k.network, k.strategy, k.output);
            const model = scanModel(N, WORKERS.length, k.network, k.strategy, k.output, 'eager');
            expect(ig.order.filter((id) => id.startsWith(`${k.id}/`)).sort(), what).toEqual(plan.nodes.map((n) => `${k.id}/${n.key}`).sort());
            expect(perWorker(r.events, k, plan), what).toEqual({
              nodes: model.workers.map((w) => w.nodes),
              applications: model.workers.map((w) => w.local.applications + w.network.applications + w.prop.applications),
            });
          }
        }, 120_000);
      }

  for (const sync of SYNC_MODES)
    for (const operator of ['scan.range', 'mat.mulmod'] as const)
      it(`${operator} in rounds, ${sync}: the checkers pass, each worker as the model says, and no node of a level starts before the whole level before it ended`, async () => {
        const ig = compileOrThrow(scansDoc(operator, 'rounds'), false);
        const r = await runChecked(ig, sync);
        const fires = r.events.filter((e) => e.kind === 'fire' && e.node);
        for (const k of CASES) {
          const what = `${k.network} ${k.strategy} ${k.output}`;
          const plan = scanPlan(N, WORKERS.length, k.network, k.strategy, k.output);
          const { barriers } = scanBarriers(plan);
          const model = scanModel(N, WORKERS.length, k.network, k.strategy, k.output, 'rounds');
          expect(ig.order.filter((id) => id.startsWith(`${k.id}/`)).sort(), what).toEqual(
            [...plan.nodes.map((n) => `${k.id}/${n.key}`), ...barriers.map((b) => `${k.id}/${b.key}`)].sort(),
          );
          expect(perWorker(r.events, k, plan), what).toEqual({
            nodes: model.workers.map((w) => w.nodes),
            applications: model.workers.map((w) => w.local.applications + w.network.applications + w.prop.applications),
          });
          // Per iteration: level L's first start is after the last end of level L - 1 (the local stage before level 1).
          const levels = [...new Set(plan.nodes.filter((n) => n.stage === 'network').map((n) => n.level!))].sort((a, b) => a - b);
          for (let it = 0; it < ITERATIONS; it++) {
            const of = (keys: string[]) => fires.filter((e) => e.iteration === it && keys.some((key) => e.node === `${k.id}/${key}`));
            let before = plan.nodes.filter((n) => n.stage === 'local').map((n) => n.key);
            for (const level of levels) {
              const members = plan.nodes.filter((n) => n.stage === 'network' && n.level === level).map((n) => n.key);
              const ended = Math.max(...of(before).map((e) => e.end));
              const started = Math.min(...of(members).map((e) => e.start));
              expect(of(before).length, `${what} iteration ${it} before level ${level}`).toBe(before.length);
              expect(started, `${what} iteration ${it}: level ${level} started before the level before it ended`).toBeGreaterThanOrEqual(ended);
              before = members;
            }
          }
        }
      }, 120_000);

  it('examples/scan-mulmod.json in barrier mode: a host meets after every phase, inside the scan too (no action of a phase starts before every action of its host in the phases before ended)', async () => {
    // What core's predictor models (predict.ts insideTimes): the scan's phases have no
    // cluster-wide barrier, yet the host's PE threads and lanes meet after each (host-run.ts).
    const ig = compileOrThrow(example('scan-mulmod'), true);
    const r = await runChecked(ig, 'barrier');
    const phaseOf = new Map<string, number>();
    for (const program of Object.values(allPrograms(ig)))
      program.phases.forEach((phase, f) => {
        for (const a of phase.actions) {
          if (a.op === 'fire') phaseOf.set(`fire ${a.node}`, f);
          else if (a.op === 'transfer') phaseOf.set(`transfer ${a.from.buffer}->${a.to.buffer}`, f);
        }
      });
    // Per host and cycle, each phase's first start and last end over the host's PEs and lanes.
    const spans = new Map<string, { start: number; end: number }[]>();
    for (const e of r.events) {
      const key = e.kind === 'fire' ? `fire ${e.node}` : e.kind === 'transfer' ? `transfer ${e.from}->${e.buffer}` : undefined;
      const f = key === undefined ? undefined : phaseOf.get(key);
      if (f === undefined) continue;
      const phases = spans.get(`${e.host} ${e.cycle}`) ?? spans.set(`${e.host} ${e.cycle}`, []).get(`${e.host} ${e.cycle}`)!;
      const x = (phases[f] ??= { start: e.start, end: e.end });
      x.start = Math.min(x.start, e.start);
      x.end = Math.max(x.end, e.end);
    }
    let checked = 0;
    for (const [where, phases] of spans) {
      let ended = -Infinity;
      phases.forEach((x, f) => {
        if (!x) return;
        expect(x.start, `${where}: phase ${ig.phases[f]} started before the host's phases before it ended`).toBeGreaterThanOrEqual(ended);
        if (ended > -Infinity && !(ig.phaseBarriers?.[f - 1] ?? true)) checked++;
        ended = Math.max(ended, x.end);
      });
    }
    // Phases after one without a barrier (inside the scan) were checked on both hosts.
    expect(checked).toBeGreaterThan(0);
  }, 120_000);

  it('a checker expecting another output fails the run, naming its host, node and first bad element', async () => {
    const doc = example('scan-mulmod');
    doc.app.nodes[2].params = { ...doc.app.nodes[2].params, output: 'exclusive' };
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.run(compileOrThrow(doc, true), { iterations: 2 }).done;
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({ host: 'h1', node: 'check' });
      expect(r.failure?.message).toContain('out element 0 holds [0, 0] [[1, 1, 0], [0, 1, 1], [0, 0, 1]], expected [1, 0] [[1, 0, 0], [0, 1, 0], [0, 0, 1]]');
    } finally {
      c.close();
    }
  }, 60_000);
});
