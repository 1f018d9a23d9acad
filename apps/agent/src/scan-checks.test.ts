import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBytes, type ProjectDocument } from '@pipeloom/core';
import { loadKernelPackages } from './kernels/load.js';
import { spawnLocalAgents, type LocalAgents } from './local/spawn.js';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, example, root } from './testing/fixtures.js';

// A scan's run-time checks on real agents: an f32 operator (testing/nan-operator: NaN on the
// application whose right operand starts at element 12) run through a scan document on two
// agents; the run stops at that application, naming the expanded node, the operands' ranges
// and the PE, and keeps its trace. Worker 1 of 2 holds elements 8 .. 15, so its local scan
// meets [8, 11] (+) [12, 12]: once on its CPU twin, once in its WGSL on a GPU PE.

const NAN_OPERATOR = `${root}apps/agent/src/testing/nan-operator`;
await loadKernelPackages([NAN_OPERATOR]);
const agentsOf = agentsForSuite(['h0', 'h1'], { args: ['--allow-wgsl', '--kernels', NAN_OPERATOR] });

function nanDoc(workers: string[]): ProjectDocument {
  const doc = example('scan-mulmod');
  doc.app.nodes = [
    { id: 'src', kernel: 'test.ones', params: { count: 16 } },
    { id: 'scan1', type: 'scan', params: { operator: 'test.nanat', network: 'kogge-stone', bad: 12 } },
  ];
  doc.app.edges = [{ from: { node: 'src', port: 'out' }, to: { node: 'scan1', port: 'in' } }];
  doc.mapping = { src: 'cpu@h0', scan1: workers } as unknown as ProjectDocument['mapping'];
  return doc;
}

describe('a scan whose f32 operator gives NaN', () => {
  for (const pe of ['cpu@h1', 'gpu0@h1'])
    it(`stops the run naming the node, the ranges and the PE (${pe}), and keeps its trace`, async () => {
      const ig = compileOrThrow(nanDoc(['cpu@h0', pe]), false);
      const c = await connect(
        agentsOf().agents.map((a) => a.url),
        agentsOf().token,
      );
      try {
        expect(c.check(ig)).toEqual([]);
        const r = await c.run(ig, { iterations: 2 }).done;
        expect(r.ok).toBe(false);
        expect(r.failure).toMatchObject({ host: 'h1', pe, node: 'scan1/local.w1' });
        expect(r.failure?.message).toContain('[8, 11] (+) [12, 12] gave a non-finite result');
        // The trace up to the failure is kept: the source and worker 0's local scan fired.
        const fired = new Set(r.events.filter((e) => e.kind === 'fire').map((e) => e.node));
        expect(fired.has('src')).toBe(true);
        expect(fired.has('scan1/local.w0')).toBe(true);
      } finally {
        c.close();
      }
    }, 60_000);
});

// A scan's replicated context against what the agents report (Coordinator.check): image
// registration (reg2d.compose) reads the series' pyramids on every worker. h1's agent offers
// its CPU 40,000 bytes (--cpu-memory), less than 9 frames of 32 x 32 (47.3 KiB); its llvmpipe
// GPU binds at most 128 MiB, less than 100 frames of 512 x 512 (131.25 MiB). The document
// itself gives every PE plenty, so only the agents' figures can refuse it.
describe("a scan whose context does not fit a worker's PE as its agent reports it", () => {
  let local: LocalAgents[] = [];
  beforeAll(async () => {
    // Started together, on one token.
    const token = randomBytes(16).toString('hex');
    const started = await Promise.allSettled([spawnLocalAgents(['h0'], { token }), spawnLocalAgents(['h1'], { token, args: ['--cpu-memory', '40000'] })]);
    local = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });
  afterAll(async () => {
    await Promise.all(local.map((l) => l.stop()));
  });

  function reg2dDoc(side: number, frames: number, workers: string[]): ProjectDocument {
    const series = { width: side, height: side, frames };
    const doc = example('scan-mulmod');
    doc.app.nodes = [
      { id: 'frames', kernel: 'reg2d.frames', params: series },
      { id: 'pairs', kernel: 'reg2d.pair', params: { ...series, count: frames - 1 } },
      { id: 'scan1', type: 'scan', params: { operator: 'reg2d.compose', network: 'kogge-stone', ...series } },
    ];
    doc.app.edges = [
      { from: { node: 'frames', port: 'frames' }, to: { node: 'pairs', port: 'frames' } },
      { from: { node: 'pairs', port: 'out' }, to: { node: 'scan1', port: 'in' } },
      { from: { node: 'frames', port: 'frames' }, to: { node: 'scan1', port: 'frames' } },
    ];
    doc.arch.hosts = doc.arch.hosts.map((h) => ({ ...h, cpuMemory: 2 ** 32, gpuMemory: 2 ** 32 }));
    doc.mapping = { frames: 'cpu@h0', pairs: 'cpu@h0', scan1: workers } as unknown as ProjectDocument['mapping'];
    return doc;
  }

  it("over the CPU PE's memory: check and run name the scan, the context port, the worker and the limit", async () => {
    const ig = compileOrThrow(reg2dDoc(32, 9, ['cpu@h0', 'cpu@h1']), false);
    const c = await connect(
      local.flatMap((l) => l.agents.map((a) => a.url)),
      local[0].token,
    );
    try {
      const problems = c.check(ig);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ path: 'mapping.scan1[1]', severity: 'error' });
      expect(problems[0].message).toMatch(
        /^scan "scan1": context port "frames" \(47\.3 KiB\) on worker 1's PE cpu@h1 exceeds its memory \(39\.1 KiB as agent h1 reports\)$/,
      );
      expect(problems[0].hint).toBe('shrink the data feeding scan1.frames, or map worker 1 to a PE with more memory');
      const r = await c.run(ig, { iterations: 1 }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toContain('context port "frames" (47.3 KiB) on worker 1\'s PE cpu@h1 exceeds its memory');
    } finally {
      c.close();
    }
  }, 60_000);

  it("over the GPU PE's storage-binding limit: named likewise, with the adapter's limit", async () => {
    const ig = compileOrThrow(reg2dDoc(512, 100, ['cpu@h0', 'gpu0@h1']), false);
    const c = await connect(
      local.flatMap((l) => l.agents.map((a) => a.url)),
      local[0].token,
    );
    try {
      const limit = c.agents.find((a) => a.host === 'h1')!.pes.find((p) => p.id === 'gpu0@h1')!.limits!.maxStorageBufferBindingSize;
      const problems = c.check(ig);
      expect(limit).toBeLessThan(100 * 1_376_256);
      // Two problems, both named by the scan: the GPU's copy is staged on cpu@h1 (40,000 bytes), and the copy is over the binding limit.
      expect(problems, JSON.stringify(problems, null, 1)).toHaveLength(2);
      expect(problems.map((x) => x.path)).toEqual(['mapping.scan1[1]', 'mapping.scan1[1]']);
      const [relay, d] = problems;
      expect(relay.message).toMatch(
        /^scan "scan1": context port "frames" \(131 MiB\), relayed through cpu@h1 to worker 1's PE gpu0@h1, exceeds cpu@h1's memory \(39\.1 KiB as agent h1 reports\)$/,
      );
      expect(relay.hint).toBe('shrink the data feeding scan1.frames, give cpu@h1 more memory, or map worker 1 to a PE the data reaches another way');
      expect(d.message).toBe(
        `scan "scan1": context port "frames" (131 MiB) on worker 1's PE gpu0@h1 exceeds its storage-binding limit (maxStorageBufferBindingSize ${formatBytes(limit)}): a kernel binds the whole context`,
      );
      expect(d.hint).toBe('shrink the data feeding scan1.frames, or map worker 1 to a PE with a larger binding limit (a CPU PE has none)');
    } finally {
      c.close();
    }
  }, 60_000);
});
