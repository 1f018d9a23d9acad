import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { allPrograms } from '../compile/decode.js';
import type { ImplementationGraph, PeProgram } from '../compile/types.js';
import { randomDocument } from '../testing/generate.js';
import { iterationOf, planForHosts, runCycles, selfTimedPlan, slotOf, threshold } from './contract.js';

const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

function programsOf(
  doc: unknown,
  overlap?: boolean,
): { ig: ImplementationGraph; programs: PeProgram[]; pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }> } {
  const r = compile(doc, overlap === undefined ? {} : { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  const programs = Object.values(allPrograms(r.ig));
  return { ig: r.ig, programs, pes: Object.fromEntries(programs.map((p) => [p.pe, { host: p.host as string, kind: p.kind }])) };
}

describe('the execution contract', () => {
  it('slots wrap for any cycle and lag; iterations exist only inside the run', () => {
    expect([0, 1, 2, 3].map((k) => slotOf(k, 1, 2))).toEqual([1, 0, 1, 0]);
    expect(slotOf(0, 3, 2)).toBe(1);
    expect([1, 2, 6, 7].map((k) => iterationOf(2, k, 5))).toEqual([-1, 0, 4, -1]);
    const { programs } = programsOf(piic);
    expect(runCycles(programs, 10)).toBe(
      Math.max(...programs.flatMap((p) => p.phases.flatMap((ph) => ph.actions.map((a) => (a.op === 'barrier' ? 0 : a.startCycle))))) + 10,
    );
  });

  it("a threshold is i + offset, capped at the run's iterations", () => {
    expect(threshold({ counter: 0, offset: 1 }, 3, 10)).toBe(4);
    expect(threshold({ counter: 0, offset: -1 }, 0, 10)).toBe(-1);
    expect(threshold({ counter: 0, offset: 4 }, 8, 10)).toBe(10);
  });

  it("P-I-I-C: the host-to-host copy is a send on h0 and a receive on h1, and the send waits for a credit of the destination's depth", () => {
    for (const overlap of [true, false]) {
      const { programs, pes } = programsOf(piic, overlap);
      const plan = selfTimedPlan(programs, pes);
      const send = plan.counters.findIndex((c) => c.name.startsWith('send '));
      const receive = plan.counters.findIndex((c) => c.name === plan.counters[send].name.replace('send', 'receive'));
      expect([plan.counters[send].host, plan.counters[receive].host]).toEqual(['h0', 'h1']);
      const cpu0 = plan.actions['cpu@h0'].flat().find((e) => e.send)!.send!;
      const cpu1 = plan.actions['cpu@h1'].flat().find((e) => e.receive)!.receive!;
      expect([cpu0.signal, cpu1.signal]).toEqual([send, receive]);
      // Double buffers with overlap: the sender may run one iteration ahead of its receiver.
      expect(cpu0.waits).toContainEqual({ counter: receive, offset: overlap ? -1 : 0 });
    }
  });

  it("the only waits on another host's counters are a send's credits from its own receive", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        (seed, nodes, hosts, overlap) => {
          const { programs, pes } = programsOf(randomDocument(seed, { nodes, hosts, maxGpus: 2, overlap }));
          const plan = selfTimedPlan(programs, pes);
          for (const p of programs) {
            for (const e of plan.actions[p.pe].flat()) {
              for (const [role, x] of Object.entries(e)) {
                if (!x) continue;
                expect(plan.counters[x.signal].host).toBe(p.host);
                for (const w of x.waits) {
                  if (plan.counters[w.counter].host === p.host) continue;
                  expect(role).toBe('send');
                  expect(plan.counters[w.counter].name).toBe(plan.counters[x.signal].name.replace('send', 'receive'));
                }
              }
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it("is the same from programs that crossed JSON, and an agent's part has its own PEs and every counter", () => {
    const { programs, pes } = programsOf(piic, false);
    const plan = selfTimedPlan(programs, pes);
    expect(selfTimedPlan(JSON.parse(JSON.stringify(programs)), pes)).toEqual(plan);
    const h1 = planForHosts(plan, programs, ['h1']);
    expect(Object.keys(h1.actions).sort()).toEqual(['cpu@h1', 'gpu0@h1']);
    expect(h1.counters).toBe(plan.counters);
  });
});
