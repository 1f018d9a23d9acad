import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { NETWORKS } from '../scan/networks.js';
import { scanModel } from '../scan/model.js';
import { operatorApplications, SCAN_EXECUTIONS, IN, SCAN_OUTPUTS, scanPlan, SCAN_STRATEGIES } from '../scan/plan.js';
import { simulateScan, type ReplayCosts } from './scan-simulate.js';

const unit = { kind: 'mean', perApplication: 1 } as const;

describe('simulateScan', () => {
  it('with unit costs and free messages, the makespan is the model depth (workers unbounded), and never below it with one PE per worker', () => {
    for (const network of NETWORKS)
      for (const strategy of SCAN_STRATEGIES)
        for (const output of SCAN_OUTPUTS)
          for (const [N, p] of [
            [64, 8],
            [100, 7],
            [256, 64],
            [33, 33],
            [10, 1],
          ] as const) {
            const plan = scanPlan(N, p, network, strategy, output);
            for (const execution of ['eager', 'rounds'] as const) {
              const what = `${network} ${strategy} ${output} N=${N} p=${p} ${execution}`;
              const depth = scanModel(N, p, network, strategy, output, execution).span.depth;
              expect(simulateScan(plan, unit, { execution, serialWorkers: false }).makespan, what).toBe(depth);
              expect(simulateScan(plan, unit, { execution }).makespan, what).toBeGreaterThanOrEqual(depth);
            }
          }
  });

  it("with unit costs, free messages and one PE per worker, the makespan is exactly the model's serialised span (fast-check, N <= 256, p <= 64, all networks x strategies x outputs x executions)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 256 }), fc.integer({ min: 1, max: 64 }), (N, q) => {
        const p = Math.min(N, q);
        for (const network of NETWORKS)
          for (const strategy of SCAN_STRATEGIES)
            for (const output of SCAN_OUTPUTS) {
              const plan = scanPlan(N, p, network, strategy, output);
              for (const execution of SCAN_EXECUTIONS) {
                const m = scanModel(N, p, network, strategy, output, execution);
                const what = `${network} ${strategy} ${output} N=${N} p=${p} ${execution}`;
                expect(simulateScan(plan, unit, { execution, serialWorkers: true }).makespan, what).toBe(m.span.serialised);
                expect(m.span.serialised, what).toBeGreaterThanOrEqual(m.span.depth);
                expect(m.speedup, what).toBe(m.span.serialised > 0 ? (N - 1) / m.span.serialised : 1);
              }
            }
      }),
      {
        numRuns: 100,
        examples: [
          [64, 8],
          [256, 64],
          [1, 1],
          [255, 64],
        ],
      },
    );
  });

  it('serial, N = 64, p = 8: the dataflow depth is 20, the serialised span 21 (a worker holding a network node and its second stage runs them in turn)', () => {
    const m = scanModel(64, 8, 'serial');
    expect([m.span.depth, m.span.serialised]).toEqual([20, 21]);
    expect(m.speedup).toBeCloseTo(63 / 21);
    expect(m.speedupDataflow).toBeCloseTo(63 / 20);
  });

  it('rounds is never faster than eager, with messages and varied costs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 256 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(0, 0.5, 1),
        fc.integer({ min: 0, max: 1000 }),
        (N, q, network, cv, seed) => {
          const p = Math.min(N, q);
          const plan = scanPlan(N, p, network, 'scan-then-propagate', 'inclusive');
          const costs = { kind: 'mean', perApplication: 1e-3, cv, seed } as const;
          const link = { latency: 1e-4, bandwidth: 1e9 };
          const eager = simulateScan(plan, costs, { execution: 'eager', link, elementBytes: 1024 });
          const rounds = simulateScan(plan, costs, { execution: 'rounds', link, elementBytes: 1024 });
          expect(rounds.makespan).toBeGreaterThanOrEqual(eager.makespan);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('every node runs once, after its inputs (and a message later across workers), one at a time per worker', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 256 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(...SCAN_STRATEGIES),
        fc.constantFrom(...SCAN_OUTPUTS),
        fc.constantFrom('eager' as const, 'rounds' as const),
        fc.integer({ min: 0, max: 1000 }),
        (N, q, network, strategy, output, execution, seed) => {
          const p = Math.min(N, q);
          const plan = scanPlan(N, p, network, strategy, output);
          const latency = 1e-5;
          const sim = simulateScan(
            plan,
            { kind: 'mean', perApplication: 1e-3, cv: 0.5, seed, perFiring: 1e-5 },
            { execution, link: { latency, bandwidth: 1e12 }, prefix: 's/' },
          );
          const fires = sim.events.filter((e) => e.kind === 'fire');
          expect(fires.map((e) => e.node).sort()).toEqual(plan.nodes.map((n) => `s/${n.key}`).sort());
          plan.nodes.forEach((n, k) => {
            for (const input of n.inputs)
              for (const r of input.runs) {
                if (r.node === IN) continue;
                const gap = plan.nodes[r.node].worker === n.worker ? 0 : latency;
                expect(sim.start[k] + 1e-12).toBeGreaterThanOrEqual(sim.end[r.node] + gap);
              }
          });
          // Per worker (lane), fires in time order never overlap.
          for (let w = 0; w < p; w++) {
            const mine = fires.filter((e) => e.pe === `w${w}`);
            for (let i = 1; i < mine.length; i++) expect(mine[i].start).toBeGreaterThanOrEqual(mine[i - 1].end);
          }
          // Busy + wait + idle = makespan on every worker.
          for (const t of sim.workers) expect(t.busy + t.wait + t.idle).toBeCloseTo(sim.makespan, 9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the critical path runs from a first node to the last to end, each step a dependency, a worker turn or a barrier', () => {
    const plan = scanPlan(64, 8, 'kogge-stone', 'scan-then-propagate', 'inclusive');
    const sim = simulateScan(plan, unit);
    // Local (7 applications), KS's 3 levels, then the second stage (7): 17 steps of unit cost.
    expect(sim.makespan).toBe(17);
    expect(sim.criticalPath[0]).toMatch(/^local\.w\d$/);
    expect(sim.criticalPath.at(-1)).toMatch(/^prop\.w\d$/);
    expect(sim.criticalPath.filter((id) => id.startsWith('ks.'))).toHaveLength(3);
  });

  it('waits are drawn as wait slices naming what was waited for, and per worker busy/wait/idle add up', () => {
    const plan = scanPlan(64, 8, 'serial', 'scan-then-propagate', 'inclusive');
    const sim = simulateScan(plan, unit, { lanes: plan.blocks.map((_, i) => ({ pe: `cpu@h${i}`, host: `h${i}` })) });
    const waits = sim.events.filter((e) => e.kind === 'wait');
    expect(waits.length).toBeGreaterThan(0);
    expect(waits[0].name).toMatch(/^wait ser\.r\d\.w\d$/);
    // Serial network: worker 7's prefix comes after 6 hops; worker 0 is done after its local scan.
    expect(sim.workers[0]).toEqual({ busy: 7, wait: 0, idle: sim.makespan - 7 });
    expect(sim.workers[7].wait).toBeGreaterThan(0);
  });

  it('replaying measured times reproduces the run they came from (the makespan of a synthetic measured run)', () => {
    // A "measured" run: per node and iteration a time per application drawn with a CV; its
    // makespan per iteration is what the replay must give back.
    const plan = scanPlan(256, 16, 'sklansky', 'scan-then-propagate', 'inclusive');
    const iterations = 4;
    const measured = [...Array(iterations).keys()].map((i) => simulateScan(plan, { kind: 'mean', perApplication: 2e-3, cv: 1, seed: 7 }, { iteration: i }));
    const seconds: Record<string, number[]> = {};
    plan.nodes.forEach((n, k) => {
      seconds[n.key] = measured.map((m) => (m.end[k] - m.start[k]) / Math.max(1, operatorApplications(n.mode, n.count)));
    });
    const replay: ReplayCosts = { kind: 'replay', per: 'application', seconds };
    for (let i = 0; i < iterations; i++) {
      const again = simulateScan(plan, replay, { iteration: i });
      expect(again.makespan / measured[i].makespan).toBeGreaterThan(0.9);
      expect(again.makespan / measured[i].makespan).toBeLessThan(1.1);
    }
    // And per firing, exactly.
    const perFiring: Record<string, number[]> = {};
    plan.nodes.forEach((n, k) => (perFiring[n.key] = measured.map((m) => m.end[k] - m.start[k])));
    expect(simulateScan(plan, { kind: 'replay', per: 'firing', seconds: perFiring }, { iteration: 2 }).makespan).toBeCloseTo(measured[2].makespan, 12);
  });

  it('messages lengthen the scan: a latency per hop across workers', () => {
    const plan = scanPlan(64, 4, 'kogge-stone', 'scan-then-propagate', 'inclusive');
    const free = simulateScan(plan, unit).makespan;
    const slow = simulateScan(plan, unit, { link: { latency: 0.5, bandwidth: 1e9 } }).makespan;
    expect(slow).toBeGreaterThan(free);
    // KS on 4: at most a message per hop of the longest chain (two network levels, then the prefix to prop).
    expect(slow - free).toBeGreaterThanOrEqual(0.5);
    expect(slow - free).toBeLessThanOrEqual(3 * 0.5 + 1e-9);
  });
});
