import { describe, expect, it } from 'vitest';
import { findKernel } from '@pipeloom/kernels/specs';
import type { WrittenDocument } from '../document/types.js';
import { NETWORKS } from '../scan/networks.js';
import { OUTPUTS, scanPlan, STRATEGIES } from '../scan/plan.js';
import { simulateScan } from '../scan/simulate.js';
import { predict, SCAN_LANE } from './predict.js';
import type { SyncMode } from '../run/contract.js';

// The predictor's time for a scan's one firing (issue 24): barrier mode costs the phases inside
// it as a critical path (each PE in program order, each node once its inputs arrived, a copy a
// link's latency + bytes / bandwidth later), the rule of core's simulateScan, so on the same DAG,
// costs and link the two agree.

const N = 64;
const FLOPS = 1e6;
const BANDWIDTH = 1e9;
const LINK = { latency: 1e-4, bandwidth: 1e8 };
// A mat.mulmod element (k = 3): [lo, hi] and 9 payload words.
const ELEMENT_BYTES = 4 * (2 + 9);

/** mat.mulmod (k = 3) scanned on p worker hosts' CPUs (slow, so an application outweighs a message); source and checker on a host of their own. */
function scanDoc(p: number, scan: Record<string, string>): WrittenDocument {
  const known = { operator: 'mat.mulmod', count: N, k: 3 };
  const workers = Array.from({ length: p }, (_, i) => `cpu@h${i}`);
  return {
    format: 'pipeloom/v2',
    name: 'scan firing',
    app: {
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
    },
    arch: {
      hosts: [...workers.map((_, i) => ({ id: `h${i}` })), { id: 'hx' }],
      pes: [...workers.map((id, i) => ({ id, host: `h${i}`, kind: 'cpu' as const, memory: 1 << 30, flops: FLOPS, memoryBandwidth: BANDWIDTH })), { id: 'cpu@hx', host: 'hx', kind: 'cpu', memory: 1 << 30 }],
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
function scanSlices(doc: WrittenDocument, sync: SyncMode) {
  const r = predict(doc, { sync });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  const p = r.prediction.noOverlap!;
  const slices = p.timeline.filter((e) => e.thread === SCAN_LANE && e.name === 'scan1');
  return { p, slices };
}

describe('predicted scan firing', () => {
  it('barrier mode: the scan firing lasts simulateScan makespan on the same DAG, costs and link (every network x strategy x output, p = 4, 8)', () => {
    const mean = perApplication();
    for (const network of NETWORKS)
      for (const strategy of STRATEGIES)
        for (const output of OUTPUTS)
          for (const p of [4, 8]) {
            const what = `${network} ${strategy} ${output} p=${p}`;
            const { slices } = scanSlices(scanDoc(p, { network, strategy, output, execution: 'eager' }), 'barrier');
            const sim = simulateScan(scanPlan(N, p, network, strategy, output), { kind: 'mean', perApplication: mean }, { link: LINK, elementBytes: ELEMENT_BYTES });
            expect(slices.length, what).toBeGreaterThan(0);
            for (const s of slices) expect((s.end - s.start) / 1e6 / sim.makespan, what).toBeCloseTo(1, 9);
          }
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
    const sim = simulateScan(scanPlan(N, 8, 'serial', 'scan-then-propagate', 'inclusive'), { kind: 'mean', perApplication: mean }, { link: LINK, elementBytes: ELEMENT_BYTES });
    const first = p.ig.phases.indexOf('fire');
    const inside = p.phases.slice(first).reduce((a, x) => a + x.time, 0);
    // The source and checker on their own PE are far quicker than the scan: the inside is its makespan.
    expect(inside / sim.makespan).toBeCloseTo(1, 9);
    expect(p.ig.phaseBarriers?.slice(first)).toEqual(p.ig.phases.slice(first).map((_, i, all) => i === all.length - 1));
  });
});
