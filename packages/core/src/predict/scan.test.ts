import { describe, expect, it } from 'vitest';
import { findKernel } from '@pipeloom/kernels/specs';
import type { SyncMode, WrittenDocument } from '../document/types.js';
import { NETWORKS } from '../scan/networks.js';
import { operatorApplications, SCAN_OUTPUTS, scanPlan, SCAN_STRATEGIES } from '../scan/plan.js';
import { simulateScan } from './scan-simulate.js';
import { predict, SCAN_LANE, type PredictOptions } from './predict.js';
import type { ImplementationGraph } from '../compile/types.js';

// The predictor's time for a scan's one firing: the phases inside it cost a critical
// path (each PE in program order, each node once its inputs arrived, a copy a link's latency +
// bytes / bandwidth later), the rule of core's simulateScan. Self-timed mode is that alone, so on
// the same DAG, costs and link the two agree. Barrier mode adds the agents' host meeting after
// each phase (host-run.ts): a host's PEs and its sends and receives wait for each other, so
// barrier mode agrees with simulateScan where each host holds one worker and messages are free,
// and is longer where a host's slow action holds another of its actions of a later phase.

const N = 64;
const FLOPS = 1e6;
const BANDWIDTH = 1e9;
const LINK = { latency: 1e-4, bandwidth: 1e8 };
// A mat.mulmod element (k = 3): [lo, hi] and 9 payload words.
const ELEMENT_BYTES = 4 * (2 + 9);

/** scan.source (N mat.mulmod elements, k = 3) -> scan1 -> scan.check of every prefix and the total. */
function scanApp(N: number, scan: Record<string, string>): WrittenDocument['app'] {
  const known = { operator: 'mat.mulmod', count: N, k: 3 };
  return {
    nodes: [
      { id: 'src', kernel: 'scan.source', params: known },
      { id: 'scan1', type: 'scan', params: { operator: 'mat.mulmod', k: 3, ...scan } },
      { id: 'check', kernel: 'scan.check', params: { ...known, output: scan.output, total: true } },
    ],
    edges: [
      { from: { node: 'src', port: 'out' }, to: { node: 'scan1', port: 'in' } },
      { from: { node: 'scan1', port: 'out' }, to: { node: 'check', port: 'out' } },
      { from: { node: 'scan1', port: 'total' }, to: { node: 'check', port: 'total' } },
    ],
  };
}

/** mat.mulmod (k = 3) scanned on p worker hosts' CPUs (slow, so an application outweighs a message); source and checker on a host of their own. */
function scanDoc(p: number, scan: Record<string, string>): WrittenDocument {
  const workers = Array.from({ length: p }, (_, i) => `cpu@h${i}`);
  return {
    format: 'pipeloom/v2',
    name: 'scan firing',
    app: scanApp(N, scan),
    arch: {
      hosts: [...workers.map((_, i) => ({ id: `h${i}` })), { id: 'hx' }],
      pes: [
        ...workers.map((id, i) => ({ id, host: `h${i}`, kind: 'cpu' as const, memory: 1 << 30, flops: FLOPS, memoryBandwidth: BANDWIDTH })),
        { id: 'cpu@hx', host: 'hx', kind: 'cpu', memory: 1 << 30 },
      ],
      links: [],
      network: { kind: 'ethernet', ...LINK },
    },
    mapping: { src: 'cpu@hx', scan1: workers, check: 'cpu@hx' },
    options: { overlap: false, iterations: 4, sync: 'barrier' },
  };
}

/** Seconds of one mat.mulmod application (k = 3) on a worker: its cost hint at the worker's rates. */
function perApplication(): number {
  const one = findKernel('mat.mulmod')!.cost({ k: 3, mode: 'apply', count: 1 });
  return one.flops / FLOPS + one.bytes / BANDWIDTH;
}

/** The scan's firings in the predicted timeline: per iteration, its `scan1` slices' span (the same on every worker's lane). */
function scanSlices(doc: WrittenDocument, sync: SyncMode, opts: PredictOptions = {}) {
  const r = predict(doc, { sync, ...opts });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  const p = r.prediction.noOverlap!;
  const slices = p.timeline.filter((e) => e.thread === SCAN_LANE && e.name === 'scan1');
  return { p, slices };
}

/** Every transfer of the IG costing `seconds` (0: messages are free, as simulateScan without a link). */
function allTransfers(ig: ImplementationGraph, seconds: number): Record<string, number> {
  const out: Record<string, number> = {};
  const { buffers, programs } = ig;
  for (let b = 0; b < buffers.count; b++) if (programs.transfer.from[b] >= 0) out[`${buffers.id[programs.transfer.from[b]]}->${buffers.id[b]}`] = seconds;
  return out;
}

/**
 * Seconds of the scan's firing of iteration 0 in the prediction, every transfer costing
 * `seconds` (default: its link's time); self-timed, a later iteration may queue behind the one
 * before it.
 */
function firingTime(doc: WrittenDocument, sync: SyncMode, seconds?: number, nodeTimes?: Record<string, number>): number {
  let { p, slices } = scanSlices(doc, sync, { nodeTimes });
  if (seconds !== undefined) ({ slices } = scanSlices(doc, sync, { nodeTimes, transferTimes: allTransfers(p.ig, seconds) }));
  const first = slices.filter((s) => s.iteration === 0);
  expect(first.length).toBeGreaterThan(0);
  return (first[0].end - first[0].start) / 1e6;
}

/**
 * p workers (`hosts[i]`: worker i's host) with the host shorthand: a host's first worker is its
 * CPU, the second its GPU (PCIe between them); source and checker on a host of their own.
 */
function sharedHostDoc(N: number, hosts: number[], scan: Record<string, string>): WrittenDocument {
  const workers = hosts.map((h, i) => (hosts.indexOf(h) === i ? `cpu@h${h}` : `gpu0@h${h}`));
  return {
    format: 'pipeloom/v2',
    name: 'scan firing, workers sharing a host',
    app: scanApp(N, { execution: 'eager', ...scan }),
    arch: {
      hosts: [...[...new Set(hosts)].map((h) => ({ id: `h${h}`, cpus: 1, gpus: 1 })), { id: 'hx', cpus: 1 }],
      pes: [],
      links: [],
      network: { kind: 'ethernet', ...LINK },
    },
    mapping: { src: 'cpu@hx', scan1: workers, check: 'cpu@hx' },
    options: { overlap: false, iterations: 2, sync: 'barrier' },
  };
}

/** Seconds per firing of each of the scan's nodes: its applications x its worker's seconds per application (source and checker free). */
function unitTimes(N: number, p: number, scan: { network: string; strategy: string; output: string }, perApplication: number[]): Record<string, number> {
  const plan = scanPlan(N, p, scan.network as never, scan.strategy as never, scan.output as never);
  const out: Record<string, number> = { src: 0, check: 0 };
  for (const n of plan.nodes) out[`scan1/${n.key}`] = operatorApplications(n.mode, n.count) * perApplication[n.worker];
  return out;
}

describe('predicted scan firing', () => {
  it('self-timed: the firing of iteration 0 lasts simulateScan makespan, messages free or not (every network x strategy x output, p = 4, 8)', () => {
    const mean = perApplication();
    for (const network of NETWORKS)
      for (const strategy of SCAN_STRATEGIES)
        for (const output of SCAN_OUTPUTS)
          for (const p of [4, 8]) {
            const what = `${network} ${strategy} ${output} p=${p}`;
            const doc = scanDoc(p, { network, strategy, output, execution: 'eager' });
            const plan = scanPlan(N, p, network, strategy, output);
            const free = simulateScan(plan, { kind: 'mean', perApplication: mean });
            const linked = simulateScan(plan, { kind: 'mean', perApplication: mean }, { link: LINK, elementBytes: ELEMENT_BYTES });
            expect(firingTime(doc, 'self-timed', 0) / free.makespan, `${what} free`).toBeCloseTo(1, 9);
            expect(firingTime(doc, 'self-timed') / linked.makespan, `${what} link`).toBeCloseTo(1, 9);
          }
  });

  it('one worker per host, barrier mode: never shorter than simulateScan; the same where no host holds a message (serial, Sklansky; every network at p = 4 with free messages)', () => {
    // Elsewhere the meeting of a host with one PE still holds: a send lasting a message holds its
    // host (Kogge-Stone, Brent-Kung, Blelloch with the link; the next test), and a send starts
    // only once its host reached the phase (Blelloch p = 8, free: h7 sends w6 its prefix in scan#6,
    // after its own fire#5 firing, one application after the value was there).
    const mean = perApplication();
    for (const network of NETWORKS)
      for (const strategy of SCAN_STRATEGIES)
        for (const output of SCAN_OUTPUTS)
          for (const p of [4, 8]) {
            const what = `${network} ${strategy} ${output} p=${p}`;
            const doc = scanDoc(p, { network, strategy, output, execution: 'eager' });
            const plan = scanPlan(N, p, network, strategy, output);
            const free = firingTime(doc, 'barrier', 0) / simulateScan(plan, { kind: 'mean', perApplication: mean }).makespan;
            const linked =
              firingTime(doc, 'barrier') / simulateScan(plan, { kind: 'mean', perApplication: mean }, { link: LINK, elementBytes: ELEMENT_BYTES }).makespan;
            expect(free, `${what} free`).toBeGreaterThan(1 - 1e-9);
            expect(linked, `${what} link`).toBeGreaterThan(1 - 1e-9);
            if (network === 'serial' || network === 'sklansky' || p === 4) expect(free, `${what} free`).toBeCloseTo(1, 9);
            if (network === 'serial' || network === 'sklansky') expect(linked, `${what} link`).toBeCloseTo(1, 9);
          }
  });

  it('one worker per host: a host whose send lasts a message meets after it, so its next firing starts a message later than point to point (serial, reduce-then-scan, N = 8, p = 2)', () => {
    // Worker 0 (cpu@h0) takes 3 s per application, worker 1 (cpu@h1) 1 s; every message 1 s.
    // Blocks of 4 (the plan: scanPlan(8, 2, 'serial', 'reduce-then-scan', 'inclusive')):
    //   fire    local.w0 reduce of 4, 3 applications: 0-9      local.w1 the same: 0-3
    //   scan#1  w0's total to h1: 9-10 (h0 sends it, h1 receives it)
    //   fire#1  ser.r1.w1 = total0 (+) total1, 1 application: 10-11
    //   fire#2  prop.w0 scan of its first 3 (the network holds w0's inclusive prefix: total0),
    //           2 applications; prop.w1 scan of [total0, 3 elements], 3 applications: 11-14
    // Point to point prop.w0 follows local.w0: 9-15, makespan 15. In barrier mode h0 meets after
    // scan#1 only once its send ended (10), so prop.w0 runs 10-16: 16.
    const scan = { network: 'serial', strategy: 'reduce-then-scan', output: 'inclusive' };
    const doc = sharedHostDoc(8, [0, 1], scan);
    const nodeTimes = unitTimes(8, 2, scan, [3, 1]);
    expect(
      simulateScan(
        scanPlan(8, 2, 'serial', 'reduce-then-scan', 'inclusive'),
        { kind: 'mean', perApplication: [3, 1] },
        { link: { latency: 1, bandwidth: Infinity } },
      ).makespan,
    ).toBe(15);
    expect(firingTime(doc, 'self-timed', 1, nodeTimes)).toBeCloseTo(15, 9);
    expect(firingTime(doc, 'barrier', 1, nodeTimes)).toBeCloseTo(16, 9);
  });

  it('two workers on one host: the host meeting after each phase makes the firing longer than point to point (serial, reduce-then-scan, N = 8, p = 2, messages free)', () => {
    // Worker 0 is cpu@h0 (2 s per application), worker 1 gpu0@h0 (1 s); blocks of 4:
    //   fire    local.w0 reduce of 4, 3 applications: 0-6      local.w1 the same: 0-3
    //   scan#1  w0's total to w1 (free): 6
    //   fire#1  ser.r1.w1 = total0 (+) total1, 1 application: 6-7
    //   fire#2  prop.w0 scan of its first 3 (the network holds w0's inclusive prefix: total0),
    //           2 applications; prop.w1 scan of [total0, 3 elements], 3 applications: 7-10
    // Point to point (simulateScan, self-timed) prop.w0 follows local.w0: 6-10, makespan 10. In
    // barrier mode h0's PEs meet after fire#1, where gpu0@h0 runs until 7: prop.w0 runs 7-11: 11.
    const scan = { network: 'serial', strategy: 'reduce-then-scan', output: 'inclusive' };
    const doc = sharedHostDoc(8, [0, 0], scan);
    const nodeTimes = unitTimes(8, 2, scan, [2, 1]);
    const sim = simulateScan(scanPlan(8, 2, 'serial', 'reduce-then-scan', 'inclusive'), { kind: 'mean', perApplication: [2, 1] });
    expect(sim.makespan).toBe(10);
    expect(firingTime(doc, 'self-timed', 0, nodeTimes)).toBeCloseTo(10, 9);
    expect(firingTime(doc, 'barrier', 0, nodeTimes)).toBeCloseTo(11, 9);
  });

  it('draws one slice per worker PE for each iteration of the scan, spanning its expanded firings (both sync modes)', () => {
    for (const sync of ['barrier', 'self-timed'] as const) {
      const { p, slices } = scanSlices(scanDoc(4, { network: 'kogge-stone', strategy: 'scan-then-propagate', output: 'inclusive' }), sync);
      const fires = p.timeline.filter((e) => e.kind === 'fire' && e.thread === 'main' && e.node?.startsWith('scan1/'));
      const iterations = [...new Set(fires.map((e) => e.iteration))];
      expect(iterations.length, sync).toBeGreaterThan(0);
      for (const it of iterations) {
        const mine = slices.filter((s) => s.iteration === it);
        expect(mine.map((s) => s.pe).sort(), `${sync} iteration ${it}`).toEqual(['cpu@h0', 'cpu@h1', 'cpu@h2', 'cpu@h3']);
        const of = fires.filter((e) => e.iteration === it);
        for (const s of mine) {
          expect(s.start).toBe(Math.min(...of.map((e) => e.start)));
          expect(s.end).toBe(Math.max(...of.map((e) => e.end)));
        }
      }
    }
  });

  it('barrier mode: the cycle takes the scan firing once, not a phase maximum per network level', () => {
    const mean = perApplication();
    const { p } = scanSlices(scanDoc(8, { network: 'serial', strategy: 'scan-then-propagate', output: 'inclusive' }), 'barrier');
    const sim = simulateScan(
      scanPlan(N, 8, 'serial', 'scan-then-propagate', 'inclusive'),
      { kind: 'mean', perApplication: mean },
      { link: LINK, elementBytes: ELEMENT_BYTES },
    );
    const first = p.ig.phases.indexOf('fire');
    const inside = p.phases.slice(first).reduce((a, x) => a + x.time, 0);
    // The source and checker on their own PE are far quicker than the scan: the inside is its makespan.
    expect(inside / sim.makespan).toBeCloseTo(1, 9);
    expect(p.ig.phaseBarriers?.slice(first)).toEqual(p.ig.phases.slice(first).map((_, i, all) => i === all.length - 1));
  });
});
