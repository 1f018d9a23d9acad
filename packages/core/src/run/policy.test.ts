import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulateBag, taskBagPolicy, type BagTask } from './policy.js';

// The task bag's policy by simulation (pure core, no clock): the paper's rules and the prefetch
// bound, on the cases the issue names.

const tasks = (n: number, capable = ['fast', 'slow']): BagTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `w[${i}]@0`, node: 'w', iteration: 0, share: i, order: 0, capable }));
const speeds = { fast: 1, slow: 3 } as Record<string, number>;
const count = (placed: { pe: string }[], pe: string) => placed.filter((p) => p.pe === pe).length;

describe('the task bag policy', () => {
  it('PEs at speeds 3:1, 40 equal tasks: the fast PE runs 29-30 with prefetch 1 or 2, 20 when unbounded', () => {
    for (const prefetch of [1, 2] as const) {
      const { placed } = simulateBag(tasks(40), ['fast', 'slow'], (_, pe) => speeds[pe], taskBagPolicy({ prefetch }));
      const fast = count(placed, 'fast');
      expect(fast, `prefetch ${prefetch}`).toBeGreaterThanOrEqual(29);
      expect(fast, `prefetch ${prefetch}`).toBeLessThanOrEqual(30);
    }
    const { placed } = simulateBag(tasks(40), ['fast', 'slow'], (_, pe) => speeds[pe], taskBagPolicy({ prefetch: 'unbounded' }));
    expect(count(placed, 'fast')).toBe(20);
  });

  it('an idle capable PE comes first, then the least loaded, ties by a pointer rotating in stable order; oldest tasks first', () => {
    const p = taskBagPolicy({ prefetch: 3 });
    const pes = [
      { id: 'a', outstanding: 1 },
      { id: 'b', outstanding: 0 },
      { id: 'c', outstanding: 1 },
    ];
    // Idle b first, then a and c tie at 1 (the pointer after b is c), then a.
    const ready: BagTask[] = [
      { id: 'x[0]@1', node: 'x', iteration: 1, share: 0, order: 0, capable: ['a', 'b', 'c'] },
      { id: 'x[0]@0', node: 'x', iteration: 0, share: 0, order: 0, capable: ['a', 'b', 'c'] },
      { id: 'y[0]@0', node: 'y', iteration: 0, share: 0, order: 1, capable: ['a', 'b', 'c'] },
    ];
    const r = p.assign(ready, { pes, pointer: 0 });
    expect(r.assignments.map((a) => `${a.task.id}->${a.pe}`)).toEqual(['x[0]@0->b', 'y[0]@0->c', 'x[0]@1->a']);
  });

  it('a task goes only to a capable PE, and waits while every capable PE is at its prefetch bound', () => {
    const p = taskBagPolicy({ prefetch: 1 });
    const gpuOnly: BagTask = { id: 'g[0]@0', node: 'g', iteration: 0, share: 0, order: 0, capable: ['gpu'] };
    const any: BagTask = { id: 'c[0]@0', node: 'c', iteration: 0, share: 0, order: 1, capable: ['cpu', 'gpu'] };
    const r = p.assign([gpuOnly, any], {
      pes: [
        { id: 'cpu', outstanding: 0 },
        { id: 'gpu', outstanding: 1 },
      ],
      pointer: 0,
    });
    expect(r.assignments.map((a) => `${a.task.id}->${a.pe}`)).toEqual(['c[0]@0->cpu']);
  });

  it('identical runs make identical assignments; every task runs once, never on a PE that cannot run it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }),
        fc.oneof(fc.constant<'unbounded'>('unbounded'), fc.integer({ min: 1, max: 4 })),
        fc.integer({ min: 0, max: 1000 }),
        (n, rates, prefetch, seed) => {
          const pes = rates.map((_, i) => `pe${i}`);
          // Each task may run on a seeded subset of the PEs (never empty).
          const bag = tasks(n).map((t, i) => ({ ...t, capable: pes.filter((_, k) => k === (i + seed) % pes.length || (i * 7 + k + seed) % 3 === 0) }));
          const time = (t: BagTask, pe: string) => rates[pes.indexOf(pe)] * (1 + (t.share % 3));
          const one = simulateBag(bag, pes, time, taskBagPolicy({ prefetch }));
          const two = simulateBag(bag, pes, time, taskBagPolicy({ prefetch }));
          expect(two).toEqual(one);
          expect(one.placed.map((p) => p.task.id).sort()).toEqual(bag.map((t) => t.id).sort());
          for (const p of one.placed) expect(p.task.capable).toContain(p.pe);
        },
      ),
      { numRuns: 200 },
    );
  });
});
