import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import { bufferNodes } from './decode.js';
import { simulate } from './simulate.js';
import { allPrograms } from './decode.js';
import { SYNC_MODES } from '../document/types.js';
import { selfTimedPlan } from './contract.js';
import { randomDocument } from '../testing/generate.js';
import type { BufferNode, ImplementationGraph } from './types.js';

const arbitraryDoc = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  nodes: fc.integer({ min: 1, max: 14 }),
  hosts: fc.integer({ min: 1, max: 4 }),
  maxGpus: fc.integer({ min: 0, max: 3 }),
  overlap: fc.boolean(),
});

function compiled(p: { seed: number; nodes: number; hosts: number; maxGpus: number; overlap: boolean }): ImplementationGraph {
  const r = compile(randomDocument(p.seed, p));
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return r.ig;
}

/** Every PE's host and kind, as the plan takes them. */
function pesOf(ig: ImplementationGraph) {
  return Object.fromEntries(ig.programs.pes.map((p) => [p.pe, { host: p.host as string, kind: p.kind }]));
}

describe('programs simulated in both sync modes', () => {
  it('every firing reads exactly iteration k - L on every input, never a transient, on random graphs', () => {
    fc.assert(
      fc.property(arbitraryDoc, fc.integer({ min: 0, max: 2 ** 31 - 1 }), (p, seed) => {
        const ig = compiled(p);
        for (const sync of SYNC_MODES) {
          // Self-timed: two interleavings per graph (seeded random start order and durations).
          for (const s of sync === 'barrier' ? [0] : [seed, seed + 1]) {
            const sim = simulate(ig, 5, { sync, seed: s });
            expect(sim.violations, sync).toEqual([]);
            for (const n of ig.order) expect(sim.fires[n], `${sync} ${n}`).toBe(5);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('and on hosts of several CPU PEs (cpus: 1..4, memory links between cores): every firing reads exactly iteration k - L', () => {
    fc.assert(
      fc.property(arbitraryDoc, fc.integer({ min: 0, max: 2 ** 31 - 1 }), (p, seed) => {
        const r = compile(randomDocument(p.seed, { ...p, maxCpus: 4 }));
        if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
        for (const sync of SYNC_MODES) {
          const sim = simulate(r.ig, 5, { sync, seed });
          expect(sim.violations, sync).toEqual([]);
          for (const n of r.ig.order) expect(sim.fires[n], `${sync} ${n}`).toBe(5);
        }
      }),
      { numRuns: 100 },
    );
  });

  it('busy PEs (more than 32 positions and colour classes in a cycle) still never share live storage', () => {
    // Random graphs of a few hundred nodes on one or two hosts: colouring's bit rows span
    // several words here, which the small graphs above never reach.
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          nodes: fc.integer({ min: 80, max: 240 }),
          hosts: fc.integer({ min: 1, max: 2 }),
          maxGpus: fc.integer({ min: 0, max: 1 }),
          overlap: fc.boolean(),
        }),
        (p) => {
          const ig = compiled(p);
          expect(simulate(ig, 3).violations).toEqual([]);
          expect(simulate(ig, 3, { sync: 'self-timed', seed: p.seed }).violations).toEqual([]);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('P-I-I-C runs clean with and without overlap', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));
    for (const overlap of [true, false]) {
      const r = compile(doc, { overlap });
      if (!r.ok) throw new Error('piic does not compile');
      expect(simulate(r.ig, 10).violations).toEqual([]);
      for (let seed = 0; seed < 5; seed++) expect(simulate(r.ig, 10, { sync: 'self-timed', seed }).violations).toEqual([]);
    }
  });

  it('reports a transient when a latency is one cycle too small, in both sync modes', () => {
    const r = compile(randomDocument(7, { nodes: 6, hosts: 2, maxGpus: 2, overlap: true }));
    if (!r.ok) throw new Error('does not compile');
    const starts = r.ig.programs.fire.startCycle;
    const delayed = starts.findIndex((c) => c > 0);
    if (delayed < 0) throw new Error('no delayed node in this graph');
    starts[delayed] -= 1;
    expect(simulate(r.ig, 4).violations.length).toBeGreaterThan(0);
    expect(simulate(r.ig, 4, { sync: 'self-timed' }).violations.length).toBeGreaterThan(0);
  });

  it('self-timed: every wait targets an access earlier in barrier order (cycle, phase), so no run can deadlock', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const ig = compiled(p);
        const programs = Object.values(allPrograms(ig));
        const plan = selfTimedPlan(programs, pesOf(ig));
        // Where each counter's action sits: its start cycle and phase.
        const at = new Map<number, { start: number; phase: number }>();
        for (const prog of programs) {
          prog.phases.forEach((ph, f) =>
            ph.actions.forEach((a, j) => {
              const e = plan.actions[prog.pe][f][j];
              for (const x of [e.access, e.send, e.receive]) if (x && a.op !== 'barrier') at.set(x.signal, { start: a.startCycle, phase: f });
            }),
          );
        }
        for (const prog of programs) {
          for (const phase of plan.actions[prog.pe]) {
            for (const e of phase) {
              for (const x of [e.access, e.send, e.receive]) {
                if (!x) continue;
                const me = at.get(x.signal)!;
                for (const w of x.waits) {
                  const them = at.get(w.counter)!;
                  // Iteration i waits for the target's iteration i + offset - 1, run in cycle start + i + offset - 1.
                  const cycle = them.start + w.offset - 1;
                  expect(
                    cycle < me.start || (cycle === me.start && them.phase < me.phase),
                    `${plan.counters[x.signal].name} waits ${plan.counters[w.counter].name}`,
                  ).toBe(true);
                }
              }
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('self-timed: the waits on other buffers sharing a storage are needed (dropping them makes reads race)', () => {
    // No overlap on one host with GPUs: memory colouring shares host and device storage
    // between fire outputs and copies. With those waits, clean; without, some run races.
    let failed = 0;
    let shared = 0;
    for (let seed = 0; seed < 40 && failed === 0; seed++) {
      const ig = compiled({ seed, nodes: 10, hosts: 1, maxGpus: 2, overlap: false });
      if (!Object.values(allPrograms(ig)).some((p) => p.allocations.some((a) => a.buffers.length > 1))) continue;
      shared++;
      for (let s = 0; s < 4; s++) {
        expect(simulate(ig, 6, { sync: 'self-timed', seed: s }).violations).toEqual([]);
        if (simulate(ig, 6, { sync: 'self-timed', seed: s, plan: { omitSharedStorageWaits: true } }).violations.length) failed++;
      }
    }
    expect(shared).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
  });
});

describe('compile on random graphs', () => {
  it('every consumer is reached by a buffer of its source on its PE', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const doc = randomDocument(p.seed, p);
        const ig = compiled(p);
        for (const e of doc.app.edges) {
          const pe = doc.mapping[e.to.node];
          const b = bufferNodes(ig).find((x) => x.pe === pe && x.source === e.from.node && x.port === e.from.port);
          expect(b?.consumers).toContainEqual({ node: e.to.node, port: e.to.port });
        }
      }),
      { numRuns: 200 },
    );
  });

  it('no two incompatible buffers share a colour', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const ig = compiled(p);
        const byColor = new Map<string, BufferNode[]>();
        for (const b of bufferNodes(ig)) {
          const key = `${b.pe}/${b.color}`;
          byColor.set(key, [...(byColor.get(key) ?? []), b]);
        }
        for (const group of byColor.values()) {
          if (group.length < 2) continue;
          // Multi-slot buffers keep data across cycles: never shared.
          for (const b of group) expect(b.depth).toBe(1);
          // The paper's rule: no computation node touches two buffers of one colour.
          const touched = new Map<string, number>();
          for (const b of group) {
            const nodes = new Set([...b.consumers.map((c) => c.node), ...('node' in b.from ? [b.from.node] : [])]);
            for (const n of nodes) touched.set(n, (touched.get(n) ?? 0) + 1);
          }
          for (const count of touched.values()) expect(count).toBe(1);
        }
        for (const [pe, m] of Object.entries(ig.memory)) {
          expect(m.lowerBound, pe).toBeLessThanOrEqual(m.after);
          expect(m.after, pe).toBeLessThanOrEqual(m.before);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('latencies are monotone along edges', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const doc = randomDocument(p.seed, p);
        const ig = compiled(p);
        for (const e of doc.app.edges) {
          const a = ig.latency[e.from.node as never];
          const b = ig.latency[e.to.node as never];
          if (doc.mapping[e.from.node] === doc.mapping[e.to.node]) expect(b).toBeGreaterThanOrEqual(a);
          else expect(b).toBeGreaterThan(a);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('compile is deterministic', () => {
    fc.assert(
      fc.property(arbitraryDoc, (p) => {
        const doc = randomDocument(p.seed, p);
        expect(JSON.stringify(compile(doc))).toBe(JSON.stringify(compile(structuredClone(doc))));
      }),
      { numRuns: 100 },
    );
  });
});
