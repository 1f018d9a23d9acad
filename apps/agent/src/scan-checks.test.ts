import { describe, expect, it } from 'vitest';
import type { ProjectDocument } from '@pipeloom/core';
import { loadKernelPackages } from './kernels/load.js';
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
      const c = await connect(agentsOf().agents.map((a) => a.url), agentsOf().token);
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
