import { describe, expect, it } from 'vitest';
import type { ProjectDocument } from '@pipeloom/core';
import { spawnLocalAgents } from './local/spawn.js';
import { compileOrThrow, connect } from './testing/fixtures.js';

// A checker whose expectation comes from the graph (no increments or offsets written): a join
// of two incremented streams, checked exactly on real agents; a wrong override fails the run.

function join(consume: Record<string, number> = {}): ProjectDocument {
  const size = { width: 16, height: 8 };
  return {
    format: 'pipeloom/v1',
    name: 'checked join',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: size },
        { id: 'I1', kernel: 'matrix.increment', params: { ...size, nb_loop: 100 } },
        { id: 'I2', kernel: 'matrix.increment', params: { ...size, nb_loop: 7 } },
        { id: 'A', kernel: 'matrix.add', params: size },
        { id: 'C', kernel: 'matrix.consume', params: { ...size, ...consume } },
      ],
      edges: [
        { from: { node: 'P', port: 'out' }, to: { node: 'I1', port: 'in' } },
        { from: { node: 'P', port: 'out' }, to: { node: 'I2', port: 'in' } },
        { from: { node: 'I1', port: 'out' }, to: { node: 'A', port: 'a' } },
        { from: { node: 'I2', port: 'out' }, to: { node: 'A', port: 'b' } },
        { from: { node: 'A', port: 'out' }, to: { node: 'C', port: 'in' } },
      ],
    },
    arch: {
      hosts: [
        { id: 'h0', cpus: 1, gpus: 1, pcie: { bandwidth: 5e9, latency: 1e-5 } },
        { id: 'h1', cpus: 1, gpus: 1, pcie: { bandwidth: 5e9, latency: 1e-5 } },
      ],
      pes: [],
      links: [],
      network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
    },
    mapping: { P: 'cpu@h0', I1: 'gpu0@h0', I2: 'gpu0@h1', A: 'gpu0@h1', C: 'cpu@h1' },
    options: { overlap: true, iterations: 8 },
  };
}

describe('checkers derived from the graph, on agents', () => {
  it('C after add(I1(P), I2(P)) checks 2 x iteration + 2 exactly and passes; an explicit wrong offset fails naming the iteration', async () => {
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 } });
    try {
      const c = await connect(local.agents.map((a) => a.url), local.token);
      try {
        const ok = await c.run(compileOrThrow(join(), true), { iterations: 8 }).done;
        expect(ok.failure).toBeUndefined();
        expect(ok.ok).toBe(true);
        const wrong = await c.run(compileOrThrow(join({ expected_offset: 1 }), true), { iterations: 8 }).done;
        expect(wrong.ok).toBe(false);
        expect(wrong.failure?.node).toBe('C');
        expect(wrong.failure?.message).toMatch(/iteration 0/);
      } finally {
        c.close();
      }
    } finally {
      await local.stop();
    }
  }, 120_000);
});
