import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SYNC_MODES, type ImplementationGraph, type ProjectDocument, type RunResult, type TraceEvent } from '@pipeloom/core';
import { gpusPerHost } from './cli/agents.js';
import { spawnLocalAgents } from './local/spawn.js';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, example, piic, root, runUntilKilled } from './testing/fixtures.js';
import { loadKernelPackages } from './kernels/load.js';

// Self-timed execution (core run/contract.ts; agent runtime/counters.ts) against barrier mode,
// on real agent processes on loopback and real WebGPU (llvmpipe): every example, both
// strategies, both sync modes, each kernel's own exact-value checks, and results identical
// between the modes. Two-host examples (piic, paper-fig5) run more iterations than their
// buffers have slots, so a sender must get credits back over the peer link to go on: a lost
// or unsent credit would hang the run.

// examples/sobel.json's kernels come from the example package: loaded here and by the agents.
const IMAGE = `${root}examples/kernels/image`;
await loadKernelPackages([IMAGE]);

// Examples reading and writing files need an agent's data root and their files: data-examples.test.ts runs them.
const EXAMPLES = readdirSync(`${root}examples`)
  .filter((f) => f.endsWith('.json'))
  .map((f) => f.slice(0, -'.json'.length))
  .filter((name) => !example(name).app.nodes.some((n) => n.kernel?.startsWith('io.')))
  .sort();

/** An example at a size CI runs in seconds; the kernels check the same things. */
function small(name: string): ProjectDocument {
  const doc = example(name);
  // A document sized by params (W x H matrices, composites' inner nodes included) is shrunk there.
  for (const size of ['W', 'H'] as const) if (doc.params?.[size] !== undefined) doc.params[size] = 32;
  // Literal sizes scale down together, so a split's slices still tile their frame (split-join: 512 -> 32, 64 -> 4).
  const sizes = doc.app.nodes.flatMap((n) => [n.params?.width, n.params?.height]).filter((x): x is number => typeof x === 'number');
  const k = Math.max(1, ...sizes) / 32;
  const scale = sizes.every((x) => Number.isInteger(x / k)) ? (x: number) => x / k : () => 32;
  for (const n of doc.app.nodes) {
    const p = (n.params ??= {});
    if (name === 'granulometry') {
      // Balls of radius 3 in 24^3, openings 1-5 on one GPU and 6-8 on the other.
      p.depth = p.height = p.width = 24;
      if ('radius' in p) Object.assign(p, { radius: 3, spheres: 4 });
      if ('levels' in p) p.levels = 9;
      if (n.id === 'open1') Object.assign(p, { first: 1, last: 5 });
      if (n.id === 'open2') Object.assign(p, { first: 6, last: 8 });
    } else if (name === 'saliency') Object.assign(p, { width: 64, height: 48 });
    else if (name === 'sobel') Object.assign(p, { width: 33, height: 17 }, 'sizes' in p ? { sizes: '33x17,17x9,17x9' } : {});
    else if ('length' in p) p.length = 1024;
    else if (typeof p.width === 'number' && typeof p.height === 'number') Object.assign(p, { width: scale(p.width), height: scale(p.height) });
  }
  return doc;
}

// One pair of agents serves every example: as many GPUs per host as any example maps onto.
const agentsOf = agentsForSuite(['h0', 'h1'], () => {
  const gpus: Record<string, number> = {};
  for (const name of EXAMPLES) for (const [h, n] of Object.entries(gpusPerHost(compileOrThrow(small(name), true)))) gpus[h] = Math.max(gpus[h] ?? 0, n);
  return { gpus, args: ['--allow-wgsl', '--kernels', IMAGE] };
});

const urls = () => agentsOf().agents.map((a) => a.url);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const fired = (events: TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);
const deepest = (ig: ImplementationGraph) => ig.programs.pes.reduce((d, p) => Math.max(d, ...p.slots), 1);

describe('every example, both strategies, both sync modes', () => {
  for (const name of EXAMPLES) {
    for (const overlap of [false, true]) {
      it(`${name} ${overlap ? 'with' : 'without'} overlap: exact checks pass in both modes, with identical results`, async () => {
        const ig = compileOrThrow(small(name), overlap);
        // Past the fill, and round every buffer's slots a few times.
        const iterations = ig.fillCycles + 3 * deepest(ig) + 2;
        const c = await connect(urls(), agentsOf().token);
        const results: Partial<Record<(typeof SYNC_MODES)[number], RunResult>> = {};
        try {
          expect(c.check(ig)).toEqual([]);
          for (const sync of SYNC_MODES) {
            const r = await c.run(ig, { iterations, sync }).done;
            expect(r.failure, sync).toBeUndefined();
            expect(r.ok).toBe(true);
            for (const node of ig.order) expect(fired(r.events, node), `${sync}: ${node}`).toEqual(range(iterations));
            const barriers = r.events.filter((e) => e.kind === 'barrier');
            if (sync === 'barrier') expect(barriers.length).toBeGreaterThan(0);
            else expect(barriers).toEqual([]);
            results[sync] = r;
          }
        } finally {
          c.close();
        }
        // Same data in the same slots per iteration: every report the kernels made is the same.
        const reports = (r: RunResult | undefined) => [...(r?.reports ?? [])].sort((a, b) => `${a.host} ${a.node}`.localeCompare(`${b.host} ${b.node}`));
        expect(reports(results['self-timed'])).toEqual(reports(results.barrier));
      });
    }
  }
});

describe('self-timed waits are traced and cut by abort', () => {
  it('a self-timed P-I-I-C traces its waits as "wait <buffer>" slices, never a barrier', async () => {
    const ig = compileOrThrow(piic({ iterations: 30 }), false);
    const c = await connect(urls(), agentsOf().token);
    try {
      const r = await c.run(ig, { iterations: 30, sync: 'self-timed' }).done;
      expect(r.failure).toBeUndefined();
      const waits = r.events.filter((e) => e.kind === 'wait');
      // C on cpu@h1 waits for I2's results at least once (fill: the data is not there yet).
      expect(waits.length).toBeGreaterThan(0);
      const buffers = new Set<string>(ig.buffers.id);
      for (const w of waits) expect(buffers.has(w.name.replace(/^wait /, '').split(' ')[0]), w.name).toBe(true);
    } finally {
      c.close();
    }
  });

  it('a GPU PE submits each self-timed cycle as one batch: its copies and firings of a cycle end together', async () => {
    const ig = compileOrThrow(piic({ iterations: 30 }), false);
    const c = await connect(urls(), agentsOf().token);
    try {
      const r = await c.run(ig, { iterations: 30, sync: 'self-timed' }).done;
      expect(r.failure).toBeUndefined();
      const ends = new Map<string, Set<number>>();
      let both = 0;
      const kinds = new Map<string, Set<string>>();
      for (const e of r.events) {
        if (!e.pe.startsWith('gpu')) continue;
        const key = `${e.pe} ${e.cycle}`;
        if (e.kind !== 'fire' && e.kind !== 'transfer') continue;
        (ends.get(key) ?? ends.set(key, new Set()).get(key)!).add(e.end);
        (kinds.get(key) ?? kinds.set(key, new Set()).get(key)!).add(e.kind);
      }
      // gpu-batch.ts: a cycle's slices end when its batch completed (a wait on another thread
      // completes a batch early, so some cycles have two). Separate waits would never end a
      // copy and a firing at the same microsecond; batches do, in many cycles.
      for (const [key, k] of kinds) if (k.size === 2 && ends.get(key)!.size === 1) both++;
      expect(both).toBeGreaterThan(5);
    } finally {
      c.close();
    }
  });

  it('a self-timed run stopped mid-way ends on every agent, and they take the next run', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const ig = compileOrThrow(piic({ iterations: 1_000_000, size: 32 }), true);
      let stoppedAt = 0;
      const h = c.run(ig, {
        iterations: 1_000_000,
        sync: 'self-timed',
        onProgress: (p) => {
          if (stoppedAt || p.cycle <= 10) return;
          stoppedAt = performance.now();
          h.stop('enough');
        },
      });
      const r = await h.done;
      expect(r.failure).toEqual({ host: 'coordinator', message: 'enough' });
      expect(performance.now() - stoppedAt).toBeLessThan(10_000);
      // What both hosts had done is kept: C's checked iterations, in order from 0.
      const checked = fired(r.events, 'C');
      expect(checked.length).toBeGreaterThan(5);
      expect(checked).toEqual(range(checked.length));
      const again = await c.run(compileOrThrow(piic({ iterations: 3 }), true), { iterations: 3, sync: 'self-timed' }).done;
      expect(again.failure).toBeUndefined();
    } finally {
      c.close();
    }
  });

  it('an agent killed mid-run (self-timed): the run fails naming it, its streamed trace is kept', async () => {
    const local = await spawnLocalAgents(['h0', 'h1']);
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const {
        result: r,
        killed,
        stoppedAfter,
        streamed,
      } = await runUntilKilled(c, compileOrThrow(piic({ iterations: 1_000_000, size: 32 }), true), local.agents[1], 'self-timed');
      c.close();
      expect(killed).toBe(true);
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toMatch(/h1/);
      expect(stoppedAfter).toBeLessThan(5000);
      const kept = new Set(r.events);
      expect(streamed.filter((e) => !kept.has(e))).toEqual([]);
      // h0 kept running until the failure reached it: its own events are there too.
      expect(r.events.some((e) => e.host === 'h0' && e.kind === 'fire')).toBe(true);
    } finally {
      await local.stop();
    }
  });
});
