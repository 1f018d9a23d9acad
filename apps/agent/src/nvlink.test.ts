import { describe, expect, it } from 'vitest';
import { allPrograms, predict, toChromeTrace, TraceColumns, type ImplementationGraph, type ProjectDocument, type TraceEvent } from '@pipeloom/core';
import { spawnLocalAgents } from './local/spawn.js';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, example } from './testing/fixtures.js';

// A GPU-to-GPU link (NVLink) inside one host: the compiler routes I1's output from gpu0@h0 to
// gpu1@h0 straight over it, and the agent copies it for real, staged through host memory, in
// the phase the compiler placed it, so the consumer's exact checks hold. Real agent, real
// WebGPU (two emulated GPU PEs on the CPU adapter).

const agentsOf = agentsForSuite(['h0'], { gpus: { h0: 2 } });

/** P-I-I-C on one host, P cpu, I1 gpu0, I2 gpu1, C cpu, with an NVLink between the two GPUs. */
function nvlinked(iterations: number, nvlink = { bandwidth: 2e10, latency: 1e-6 }): ProjectDocument {
  const doc = example('piic-single-host');
  for (const n of doc.app.nodes) {
    n.params = { ...n.params, width: 64, height: 64 };
    if ('nb_loop' in n.params) n.params.nb_loop = 5;
  }
  (doc.arch.links ??= []).push({ a: 'gpu0@h0', b: 'gpu1@h0', kind: 'nvlink', duplex: true, ...nvlink });
  doc.options = { ...doc.options, iterations };
  return doc;
}

/** The plan's transfers whose both ends are GPUs. */
function gpuToGpu(ig: ImplementationGraph) {
  const out: { from: string; to: string; fromPe: string; toPe: string; kind: string }[] = [];
  for (const p of Object.values(allPrograms(ig))) {
    if (p.pe !== 'gpu0@h0') continue;
    for (const phase of p.phases) {
      for (const a of phase.actions) {
        if (a.op === 'transfer' && a.fromPe.startsWith('gpu') && a.toPe.startsWith('gpu'))
          out.push({ from: a.from.buffer, to: a.to.buffer, fromPe: a.fromPe, toPe: a.toPe, kind: a.link.kind });
      }
    }
  }
  return out;
}

const fired = (events: TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const staged = (events: TraceEvent[]) => events.filter((e) => e.kind === 'transfer' && e.name.includes('staged through host'));

describe('NVLink between two GPUs of one host', () => {
  for (const overlap of [false, true])
    for (const sync of ['self-timed', 'barrier'] as const) {
      it(`copies gpu0 -> gpu1 through the host, consumer's checks exact every iteration, ${overlap ? 'with' : 'without'} overlap, ${sync}`, async () => {
        const iterations = 12;
        const ig = compileOrThrow(nvlinked(iterations), overlap);
        // The compiler took the NVLink: one transfer straight from gpu0@h0 to gpu1@h0.
        const direct = gpuToGpu(ig);
        expect(direct).toEqual([expect.objectContaining({ fromPe: 'gpu0@h0', toPe: 'gpu1@h0', kind: 'nvlink' })]);
        const [t] = direct;
        const c = await connect(
          agentsOf().agents.map((a) => a.url),
          agentsOf().token,
        );
        try {
          expect(c.check(ig)).toEqual([]);
          const r = await c.run(ig, { iterations, sync }).done;
          expect(r.failure).toBeUndefined();
          expect(r.ok).toBe(true);
          for (const n of ['P', 'I1', 'I2', 'C']) expect(fired(r.events, n)).toEqual(range(iterations));
          // Each GPU traced its half, every iteration, on the lane towards the other GPU.
          const halves = staged(r.events);
          const sent = halves.filter((e) => e.pe === 'gpu0@h0' && e.thread === 'send:gpu1@h0');
          const received = halves.filter((e) => e.pe === 'gpu1@h0' && e.thread === 'recv:gpu0@h0');
          expect(sent.map((e) => e.iteration)).toEqual(range(iterations));
          expect(received.map((e) => e.iteration)).toEqual(range(iterations));
          expect(sent[0]).toMatchObject({ name: `${t.to} gpu0@h0->host (nvlink, staged through host)`, buffer: t.to, from: t.from });
          expect(received[0]).toMatchObject({ name: `${t.to} host->gpu1@h0 (nvlink, staged through host)`, buffer: t.to, from: t.from });
          // Within the phase: each iteration is received in the cycle it was sent.
          expect(received.map((e) => e.cycle)).toEqual(sent.map((e) => e.cycle));
          // The predicted timeline draws both halves' lanes too.
          const predicted = predict(nvlinked(iterations));
          if (!predicted.ok) throw new Error('must predict');
          const lanes = (es: readonly TraceEvent[]) => new Set(es.filter((e) => e.kind !== 'barrier').map((e) => `${e.pe} ${e.thread}`));
          expect(lanes(r.events)).toEqual(lanes(predicted.prediction[overlap ? 'overlap' : 'noOverlap']!.timeline));
          // Through the column store (the web app's path) the halves keep their buffers, so the
          // exported flow arrows run I1's firing -> gpu0's read-back and gpu1's upload -> I2.
          const columns = new TraceColumns();
          columns.append(r.events);
          const chrome = toChromeTrace(columns.toEvents(), ig).traceEvents;
          const lane = (name: string) => chrome.find((e) => e.name === 'thread_name' && e.args?.name === name)!;
          const arrowsAt = (ph: 's' | 'f', l: string, ts: number) => chrome.filter((e) => e.ph === ph && e.tid === lane(l).tid && e.ts === ts).length;
          expect(arrowsAt('f', 'gpu0@h0 -> gpu1@h0', sent[0].start)).toBe(1);
          expect(arrowsAt('f', 'gpu1@h0 <- gpu0@h0', received[0].start)).toBe(1);
          expect(arrowsAt('s', 'gpu1@h0 <- gpu0@h0', received[0].start)).toBeGreaterThanOrEqual(1);
        } finally {
          c.close();
        }
      });
    }

  it('a run stopped mid-way ends on both GPU threads, and the agent takes the next run', async () => {
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const h = c.run(compileOrThrow(nvlinked(1_000_000), true), { iterations: 1_000_000, onProgress: (p) => p.cycle > 5 && h.stop('enough') });
      expect((await h.done).failure).toEqual({ host: 'coordinator', message: 'enough' });
      const again = await c.run(compileOrThrow(nvlinked(3), false), { iterations: 3 }).done;
      expect(again.failure).toBeUndefined();
    } finally {
      c.close();
    }
  });

  it('the source GPU lost mid-run: the run fails naming it, and the agent takes the next run', async () => {
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 2 }, env: { PIPELOOM_FAULT: 'lose-device:gpu0@h0:20' } });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      try {
        const r = await c.run(compileOrThrow(nvlinked(1_000_000), true), { iterations: 1_000_000 }).done;
        expect(r.ok).toBe(false);
        expect(r.failure).toMatchObject({ host: 'h0', pe: 'gpu0@h0' });
        // The same agent takes the next run (short enough to end before the injected fault's cycle).
        const again = await c.run(compileOrThrow(nvlinked(3), true), { iterations: 3 }).done;
        expect(again.failure).toBeUndefined();
      } finally {
        c.close();
      }
    } finally {
      await local.stop();
    }
  });

  it("with link emulation the staged copy lasts at least the NVLink's time", async () => {
    // 16 KiB at 1.6384 MB/s: 10 ms; PCIe slower still, so the NVLink stays the route.
    const iterations = 4;
    const doc = nvlinked(iterations, { bandwidth: 1.6384e6, latency: 0 });
    doc.arch.hosts[0].pcie = { bandwidth: 0.8192e6, latency: 0 };
    const ig = compileOrThrow(doc, true);
    expect(gpuToGpu(ig)).toHaveLength(1);
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.run(ig, { iterations, emulateLinks: true }).done;
      expect(r.failure).toBeUndefined();
      expect(fired(r.events, 'C')).toEqual(range(iterations));
      // gpu0's half holds the bytes for the link's time before gpu1 may take them.
      const sent = staged(r.events).filter((e) => e.pe === 'gpu0@h0');
      expect(sent.map((e) => e.iteration)).toEqual(range(iterations));
      for (const e of sent) expect(e.end - e.start, `iteration ${e.iteration}`).toBeGreaterThanOrEqual(10_000);
    } finally {
      c.close();
    }
  });
});
