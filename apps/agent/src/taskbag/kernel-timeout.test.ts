import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type BagTaskMessage, type ProjectDocument } from '@pipeloom/core';
import { loadKernelPackages } from '../kernels/load.js';
import { agentsForSuite } from '../testing/suite.js';
import { BagClient } from '../testing/bag-client.js';
import { bagGraphOrThrow, connect, root } from '../testing/fixtures.js';

// The agent's kernel time limit in task-bag runs: a package kernel whose CPU twin never returns
// (testing/spin-kernel) fails its task naming node, PE and limit; the PE's thread is stopped and
// replaced, the bag counts the attempts and fails the run after its last one, and the agent
// answers /healthz throughout and takes the next run.

const SPIN = `${root}apps/agent/src/testing/spin-kernel`;
await loadKernelPackages([SPIN]);
const agentsOf = agentsForSuite(['h0'], { gpus: { h0: 1 }, args: ['--kernels', SPIN, '--kernel-timeout', '1'] });

const LENGTH = 64;

function spinDoc(forever: boolean): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: `spin ${forever ? 'forever' : 'once'}`,
    app: {
      nodes: [
        { id: 'P', kernel: 'vector.produce', params: { length: LENGTH } },
        { id: 'S', kernel: 'test.spin', params: { length: LENGTH, forever } },
        { id: 'C', kernel: 'vector.check', params: { length: LENGTH } },
      ],
      edges: [
        { from: { node: 'P', port: 'out' }, to: { node: 'S', port: 'in' } },
        { from: { node: 'S', port: 'out' }, to: { node: 'C', port: 'in' } },
      ],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }] },
    mapping: { P: 'cpu@h0', S: 'cpu@h0', C: 'cpu@h0' },
    options: { overlap: false, iterations: 2, mode: 'taskbag' },
  } as unknown as ProjectDocument;
}

const graphOf = bagGraphOrThrow;

async function healthz(wsUrl: string): Promise<{ status: number; body: string }> {
  const r = await fetch(`${wsUrl.replace(/^ws/, 'http')}/healthz`);
  return { status: r.status, body: await r.text() };
}

const LIMIT = "ran past the agent's kernel time limit (1 s)";

describe('a task-bag kernel that never returns', () => {
  it("fails its task on each attempt naming node, PE and limit, then the run after the bag's attempts; /healthz answers throughout and the agent runs the next document", async () => {
    const { agents, token } = agentsOf();
    const url = agents[0].url;
    const c = await connect([url], token);
    try {
      // Asked while the run goes on: after the first attempt was stopped, as the second is given.
      let during: Promise<{ status: number; body: string }> | undefined;
      const r = await c.runBag(graphOf(spinDoc(true)), { iterations: 1, pes: ['cpu@h0'], onBag: (b) => void (b.requeued >= 1 && (during ??= healthz(url))) })
        .done;
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({ host: 'h0', pe: 'cpu0@h0', node: 'S', iteration: 0 });
      expect(r.failure?.message).toContain('failed 3 times');
      expect(r.failure?.message).toContain(`node S (test.spin) on cpu0@h0 ${LIMIT} at iteration 0`);
      expect(r.failure?.message).toContain('--kernel-timeout');
      expect(r.bag?.requeued).toBe(3);
      // Each stopped attempt is drawn, named failed; the producer's slice is kept.
      const failed = r.events.filter((e) => e.kind === 'fire' && e.node === 'S' && e.name.endsWith(' failed'));
      expect(failed.map((e) => e.task?.attempt)).toEqual([1, 2, 3]);
      expect(r.events.some((e) => e.kind === 'fire' && e.node === 'P')).toBe(true);
      expect(await during).toEqual({ status: 200, body: JSON.stringify({ status: 'ok' }) });
      expect(await healthz(url)).toEqual({ status: 200, body: JSON.stringify({ status: 'ok' }) });
      // The same agent, the same PE: the next run commits every task.
      const again = await c.runBag(graphOf(spinDoc(false)), { iterations: 2 }).done;
      expect(again.failure).toBeUndefined();
      expect(again.ok).toBe(true);
      expect(again.bag).toMatchObject({ committed: 6, requeued: 0 });
    } finally {
      c.close();
    }
  }, 120_000);

  it("on a GPU PE (its CPU twin, with the PE's device open): the task fails naming the PE, and the PE runs its next task on a new thread", async () => {
    const { agents, token } = agentsOf();
    const url = agents[0].url;
    const client = await BagClient.connect(url, token);
    try {
      const runId = `spin-${randomBytes(4).toString('hex')}`;
      const nodes = [
        { id: 'S', kernel: 'test.spin', params: { length: LENGTH, forever: true } },
        { id: 'T', kernel: 'test.spin', params: { length: LENGTH, forever: false } },
      ];
      client.send({ type: 'bag-deploy', runId, secret: randomBytes(16).toString('hex'), hosts: [{ id: 'h0', url }], nodes });
      expect((await client.next((m) => m.type === 'deployed' || m.type === 'error')).type).toBe('deployed');
      client.send({ type: 'start', runId });
      const task = (id: string, node: number): BagTaskMessage => ({
        type: 'task',
        runId,
        id,
        node,
        iteration: 0,
        attempt: 1,
        pe: 'gpu0@h0',
        inputs: [{ port: 'in', bytes: LENGTH * 4, element: 'f32', init: { value: 1 } }],
        outputs: [{ port: 'out', key: `${id}:out`, bytes: LENGTH * 4 }],
      });
      client.send(task('S@0', 0));
      client.send(task('T@0', 1));
      const stopped = await client.result('S@0');
      expect(stopped).toMatchObject({ type: 'task-failed', pe: 'gpu0@h0' });
      expect(stopped).not.toHaveProperty('peLost');
      expect((stopped as { message: string }).message).toContain(`node S (test.spin) on gpu0@h0 ${LIMIT}`);
      expect(await client.result('T@0')).toMatchObject({ type: 'task-done', pe: 'gpu0@h0' });
      expect(await healthz(url)).toEqual({ status: 200, body: JSON.stringify({ status: 'ok' }) });
      client.send({ type: 'stop', runId, reason: 'test over' });
      expect(await client.next((m) => m.type === 'stopped')).toMatchObject({ freed: true });
    } finally {
      client.close();
    }
  }, 60_000);
});
