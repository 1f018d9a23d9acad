import { describe, expect, it } from 'vitest';
import { checkedJoinDocument } from '@pipeloom/core/testing';
import { spawnLocalAgents } from './local/spawn.js';
import { compileOrThrow, connect } from './testing/fixtures.js';

// A checker whose expectation comes from the graph (no increments or offsets written): a join
// of two incremented streams, checked exactly on real agents; a wrong override fails the run.

const join = (consume: Record<string, number> = {}) => checkedJoinDocument({ width: 16, height: 8, nbLoop2: 7, hosts: 2, iterations: 8, consume });

describe('checkers derived from the graph, on agents', () => {
  it('C after add(I1(P), I2(P)) checks 2 x iteration + 2 exactly and passes; an explicit wrong offset fails naming the iteration', async () => {
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 } });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
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
