import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArcColoring } from './color.js';
import { optimalColoringCost } from '../testing/coloring.js';

// Arcs on a cycle of L positions: [from, to], and [0, wrap] too where wrap >= 0 (then to = L - 1).
interface Arc {
  from: number;
  to: number;
  wrap: number;
  weight: number;
}

const positions = (a: Arc, L: number) => Array.from({ length: L }, (_, x) => (x >= a.from && x <= a.to) || x <= a.wrap);
const meet = (a: Arc, b: Arc, L: number) => positions(a, L).some((live, x) => live && positions(b, L)[x]);

function colour(arcs: Arc[], L: number, o = {}) {
  const c = new ArcColoring();
  c.reserve(arcs.length);
  arcs.forEach((a, i) => {
    c.from[i] = a.from;
    c.to[i] = a.to;
    c.wrap[i] = a.wrap;
    c.weight[i] = a.weight;
  });
  const count = c.colour(arcs.length, L, o);
  return { count, color: Array.from(c.color.subarray(0, arcs.length)), cost: c.cost, clique: c.clique, levels: c.levels, optimal: c.optimal, by: c.by };
}

/** The least cost over every colouring (core testing's brute force), arcs conflicting where they meet. */
function bruteForce(arcs: Arc[], L: number): number {
  return optimalColoringCost(
    arcs.map((x) => x.weight),
    (i, j) => meet(arcs[i], arcs[j], L),
  );
}

const arbitraryArcs = (most: number) =>
  fc.integer({ min: 1, max: 14 }).chain((L) =>
    fc.record({
      L: fc.constant(L),
      arcs: fc.array(
        fc
          .record({ a: fc.integer({ min: 0, max: L - 1 }), b: fc.integer({ min: 0, max: L - 1 }), weight: fc.constantFrom(1, 2, 3, 5, 8, 8, 13) })
          .map(({ a, b, weight }) =>
            // b < a: an arc read again next cycle, [a, L - 1] and [0, b].
            b >= a ? { from: a, to: b, wrap: -1, weight } : { from: a, to: L - 1, wrap: b, weight },
          ),
        { minLength: 1, maxLength: most },
      ),
    }),
  );

function check(arcs: Arc[], L: number, r: ReturnType<typeof colour>) {
  for (let i = 0; i < arcs.length; i++)
    for (let j = i + 1; j < arcs.length; j++)
      if (r.color[i] === r.color[j]) expect(meet(arcs[i], arcs[j], L), `items ${i} and ${j} share colour ${r.color[i]}`).toBe(false);
  const costs = new Array(r.count).fill(0);
  r.color.forEach((c, i) => (costs[c] = Math.max(costs[c], arcs[i].weight)));
  expect(costs.every((x) => x > 0)).toBe(true);
  expect(costs.reduce((a, b) => a + b, 0)).toBe(r.cost);
  expect(r.cost).toBeGreaterThanOrEqual(Math.max(r.clique, r.levels));
}

describe('weighted arc colouring', () => {
  it('equals the brute-force optimum on small PEs (the exact search), with and without wrap-around', () => {
    fc.assert(
      fc.property(arbitraryArcs(8), ({ L, arcs }) => {
        const r = colour(arcs, L);
        check(arcs, L, r);
        expect(r.cost).toBe(bruteForce(arcs, L));
        expect(r.optimal).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('the heuristics alone are valid, never below a bound, and on these small cases rarely above the optimum', () => {
    let above = 0;
    fc.assert(
      fc.property(arbitraryArcs(8), ({ L, arcs }) => {
        const r = colour(arcs, L, { exactItems: 0 });
        check(arcs, L, r);
        if (r.cost > bruteForce(arcs, L)) above++;
      }),
      { numRuns: 300 },
    );
    expect(above).toBeLessThan(15);
  });

  it('larger random instances: no two meeting items share a colour, and the cost is at least both bounds', () => {
    fc.assert(
      fc.property(arbitraryArcs(60), ({ L, arcs }) => check(arcs, L, colour(arcs, L))),
      { numRuns: 200 },
    );
  });

  it('equal weights without wrap-around: left edge, exactly the clique', () => {
    fc.assert(
      fc.property(arbitraryArcs(80), ({ L, arcs }) => {
        const plain = arcs.filter((a) => a.wrap < 0).map((a) => ({ ...a, weight: 4 }));
        fc.pre(plain.length > 0);
        const r = colour(plain, L, { exactItems: 0, searchItems: 0 });
        check(plain, L, r);
        expect(r.cost).toBe(r.clique);
        expect(r.by).toBe('fit');
      }),
      { numRuns: 200 },
    );
  });

  it('cuts the cycle where nothing crosses: arcs wrapping the cycle end colour like intervals', () => {
    // Two arcs over the end of a 6-position cycle, the others inside it; nothing is live at both
    // 1 and 2, so the cut there makes them all intervals, and left edge needs only the clique.
    const arcs: Arc[] = [
      { from: 4, to: 5, wrap: 1, weight: 2 },
      { from: 5, to: 5, wrap: 0, weight: 2 },
      { from: 4, to: 5, wrap: -1, weight: 2 },
      { from: 2, to: 3, wrap: -1, weight: 2 },
      { from: 0, to: 1, wrap: -1, weight: 2 },
      { from: 3, to: 4, wrap: -1, weight: 2 },
    ];
    const r = colour(arcs, 6, { exactItems: 0, searchItems: 0 });
    check(arcs, 6, r);
    expect(r.cost).toBe(r.clique);
  });

  it('a heavy item and light ones live apart share its colour', () => {
    const arcs: Arc[] = [
      { from: 0, to: 2, wrap: -1, weight: 100 },
      { from: 3, to: 4, wrap: -1, weight: 10 },
      { from: 3, to: 5, wrap: -1, weight: 10 },
      { from: 5, to: 7, wrap: -1, weight: 1 },
    ];
    const r = colour(arcs, 8);
    expect(r.cost).toBe(110);
    expect(r.count).toBe(2);
  });
});
