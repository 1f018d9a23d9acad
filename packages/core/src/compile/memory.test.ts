import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { randomDocument } from '../testing/generate.js';
import { sdfDocument } from '../testing/sdf.js';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { compile } from './compile.js';
import { allPrograms, bufferIndex } from './decode.js';
import { simulate } from './simulate.js';
import type { BufferAccess, ImplementationGraph } from './types.js';
import { slicedPipeline } from '../testing/sliced.js';
import { optimalColoringCost } from '../testing/coloring.js';

registerExampleKernels();

function ig(doc: unknown, overlap?: boolean): ImplementationGraph {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return r.ig;
}

describe('memory sharing on a 50-node sliced pipeline, one core, without overlap', () => {
  const slice = 4 * 2 * 4; // bytes of one slice: 2 rows of 4 f32

  it('stays within 5% of the clique bound where the slices are 12, 16 or 24, views included', () => {
    // Before (views coloured apart, live the whole cycle): 36, 48 and 72 slices; now the frame
    // and the joined input share one storage, and the slices fit around them.
    for (const [slices, after] of [
      [12, 25],
      [16, 33],
      [24, 48],
    ]) {
      const g = ig(slicedPipeline(slices));
      expect(g.order).toHaveLength(50);
      for (const [pe, m] of Object.entries(g.memory)) {
        if (!m.before) continue;
        expect(m.after / m.lowerBound, `${slices} slices, ${pe}`).toBeLessThanOrEqual(1.05);
        expect(m.after, `${slices} slices, ${pe}`).toBe(after * slice);
      }
      expect(simulate(g, 4).violations).toEqual([]);
    }
  });

  it('8 slices x 6 stages: 17 slices, the least any sharing allocates (the clique bound, 16, is out of reach)', () => {
    // Was 24 slices. Positions: frame 0, stage k slice j at 1 + 8k + j, check 49. The frame is
    // live 0..8, the joined input 41..49; the 40 slice outputs t = 8k + j of stages 0..4 are
    // live t + 1 .. t + 9, so any 9 consecutive ones meet (9 colours, t mod 9, at least 1 slice
    // each). Frame and input share a colour of 8; none of the 9 classes fits in it (class 8's
    // last output, t = 35, is live 36..44, into the input), so 8 + 9 = 17 against a clique of 16.
    const g = ig(slicedPipeline(8));
    const m = g.memory['cpu@h0' as never];
    expect(m.lowerBound).toBe(16 * slice);
    expect(m.after).toBe(17 * slice);
    expect(m.colorBytes).toHaveLength(10);
    for (const sync of ['barrier', 'self-timed'] as const) expect(simulate(g, 4, { sync }).violations).toEqual([]);
  });
});

/**
 * Liveness read back from the programs agents run, not from the memory pass: on each PE the
 * transfers of a phase sit at that phase's position and the firings follow one another from the
 * last phase's position (firing, or overlap: then everything is in the one phase). A buffer is
 * live from its write to its last read; a read with a lag reads last cycle's data, so the buffer
 * is live round the cycle's end up to it. Buffers with 2 or more slots are live always.
 */
interface Life {
  write: number;
  end: number;
  wrap: number;
  whole: boolean;
  length: number;
}

function liveness(g: ImplementationGraph): { life: Life[]; live: boolean[][] } {
  const { buffers } = g;
  const life: Life[] = new Array(buffers.count);
  for (const program of Object.values(allPrograms(g))) {
    const fires = program.phases.at(-1)!.actions.filter((a) => a.op === 'fire').length;
    const length = Math.max(1, program.phases.length - 1 + fires);
    const mine = (a: BufferAccess) => {
      const k = bufferIndex(g, a.buffer);
      if (g.programs.pes[buffers.pe[k]].pe !== program.pe) return -1;
      life[k] ??= { write: 0, end: 0, wrap: -1, whole: buffers.depth[k] >= 2 || buffers.initial[k] > 0, length };
      return k;
    };
    const read = (a: BufferAccess, at: number) => {
      const k = mine(a);
      if (k < 0) return;
      if (a.lag === 0) life[k].end = Math.max(life[k].end, at);
      else life[k].wrap = Math.max(life[k].wrap, at);
    };
    const write = (a: BufferAccess, at: number) => {
      const k = mine(a);
      if (k < 0) return;
      life[k].write = at;
      life[k].end = Math.max(life[k].end, at);
    };
    let fired = 0;
    program.phases.forEach((phase, f) => {
      for (const a of phase.actions) {
        if (a.op === 'transfer') {
          read(a.from, f);
          write(a.to, f);
        } else if (a.op === 'fire') {
          const at = f + fired++;
          for (const x of Object.values(a.inputs)) read(x, at);
          for (const parts of Object.values(a.parts ?? {})) for (const x of parts) read(x, at);
          for (const x of Object.values(a.outputs)) write(x, at);
        }
      }
    });
  }
  return { life, live: life.map(positions) };
}

/** The positions where a life (a buffer's, or a unit's hull) is live. */
function positions(l: Life): boolean[] {
  return Array.from({ length: l.length }, (_, x) => l.whole || (x >= l.write && x <= l.end) || (l.wrap >= 0 && (x >= l.write || x <= l.wrap)));
}

/** Items as the memory pass documents them: a buffer, or a view unit live from its members' first write to their last read. */
function itemsOf(g: ImplementationGraph, p: number, life: Life[]) {
  const { buffers } = g;
  const groups = new Map<number, number[]>();
  for (let k = 0; k < buffers.count; k++) {
    if (buffers.pe[k] !== p) continue;
    const base = buffers.view[k] >= 0 ? buffers.view[k] : k;
    groups.set(base, [...(groups.get(base) ?? []), k]);
  }
  return [...groups.values()].map((members) => {
    const span = Math.max(...members.map((k) => (buffers.view[k] >= 0 ? buffers.viewOffset[k] : 0) + buffers.bytes[k]));
    const weight = span * Math.max(...members.map((k) => buffers.depth[k]));
    const ls = members.map((k) => life[k]);
    const hull: Life = {
      write: Math.min(...ls.map((l) => l.write)),
      end: Math.max(...ls.map((l) => l.end)),
      wrap: Math.max(...ls.map((l) => l.wrap)),
      whole: ls.some((l) => l.whole),
      length: ls[0].length,
    };
    const set = positions(hull);
    return { members, weight, whole: hull.whole, wraps: hull.wrap >= 0, set };
  });
}

function optimum(items: { weight: number; set: boolean[] }[]): number {
  const meet = (a: boolean[], b: boolean[]) => a.some((x, i) => x && b[i]);
  return optimalColoringCost(
    items.map((x) => x.weight),
    (i, j) => meet(items[i].set, items[j].set),
  );
}

const arbitraryDoc = fc.record({
  kind: fc.constantFrom('random', 'split/join', 'sdf'),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  nodes: fc.integer({ min: 2, max: 14 }),
  hosts: fc.integer({ min: 1, max: 3 }),
  maxGpus: fc.integer({ min: 0, max: 2 }),
  overlap: fc.boolean(),
});

function documentOf(p: { kind: string; seed: number; nodes: number; hosts: number; maxGpus: number; overlap: boolean }): unknown {
  if (p.kind === 'sdf') return sdfDocument(p.seed, { nodes: p.nodes, hosts: p.hosts, maxGpus: p.maxGpus, overlap: p.overlap }).doc;
  return randomDocument(p.seed, { ...p, splitJoin: p.kind === 'split/join' });
}

describe('memory colouring on random documents', () => {
  it('never shares storage bytes between buffers live at a common position, by liveness read from the programs', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const g = ig(documentOf(p));
        const { live } = liveness(g);
        for (const program of Object.values(allPrograms(g))) {
          for (const a of program.allocations) {
            const at = a.buffers.map((id) => bufferIndex(g, id));
            const off = a.buffers.map((_, i) => a.offsets?.[i] ?? 0);
            for (let i = 0; i < at.length; i++) {
              for (let j = i + 1; j < at.length; j++) {
                const [x, y] = [at[i], at[j]];
                // Disjoint byte ranges (the parts of one join) never conflict.
                if (off[i] + g.buffers.bytes[x] <= off[j] || off[j] + g.buffers.bytes[y] <= off[i]) continue;
                const both = live[x].some((v, q) => v && live[y][q]);
                expect(both, `${program.pe}: ${a.buffers[i]} and ${a.buffers[j]} share colour ${a.color}`).toBe(false);
              }
            }
          }
        }
        for (const [pe, m] of Object.entries(g.memory)) {
          expect(m.lowerBound, pe).toBeLessThanOrEqual(m.after);
          expect(m.after, pe).toBeLessThanOrEqual(m.before);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('small PEs are coloured at the brute-force optimum, and within 5% of the clique bound wherever it is reachable', () => {
    let small = 0;
    let reachable = 0;
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const g = ig(documentOf(p));
        const { life } = liveness(g);
        g.programs.pes.forEach(({ pe }, q) => {
          const m = g.memory[pe];
          const items = itemsOf(g, q, life);
          const shared = items.filter((x) => !x.whole);
          const whole = items.filter((x) => x.whole).reduce((s, x) => s + x.weight, 0);
          if (shared.length === 0 || shared.length > 8) return;
          small++;
          const best = whole + optimum(shared);
          expect(m.after, `${pe} of ${JSON.stringify(p)}`).toBe(best);
          if (best === m.lowerBound) {
            reachable++;
            expect(m.after / m.lowerBound).toBeLessThanOrEqual(1.05);
          }
        });
      }),
      { numRuns: 150 },
    );
    expect(small).toBeGreaterThan(50);
    expect(reachable).toBeGreaterThan(0);
  });

  it('equal-sized buffers without wrap-around take exactly the clique bound (an interval graph: left edge)', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const g = ig(documentOf(p));
        const { life } = liveness(g);
        g.programs.pes.forEach(({ pe }, q) => {
          const items = itemsOf(g, q, life).filter((x) => !x.whole);
          if (items.length === 0 || items.some((x) => x.weight !== items[0].weight || x.wraps)) return;
          expect(g.memory[pe].after, pe).toBe(g.memory[pe].lowerBound);
        });
      }),
      { numRuns: 150 },
    );
  });
});
