import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { PeerMessage } from '@pipeloom/core';
import type { PeerLink } from '../peer/link.js';
import { ClusterBarrier } from './barrier.js';

// Hosts wired together in memory: the messages are the ones peer links carry, each delivered
// after `delay(from, to)` macrotask turns (0: the next microtask).
function cluster(hosts: string[], localPes: number, delay: (from: string, to: string) => number = () => 0) {
  const barriers = new Map<string, ClusterBarrier>();
  const sent: { from: string; to: string; m: PeerMessage }[] = [];
  for (const me of hosts) {
    const peers = new Map<string, PeerLink>();
    for (const other of hosts) {
      if (other === me) continue;
      peers.set(other, {
        send: (m: PeerMessage) => {
          sent.push({ from: me, to: other, m });
          const deliver = () => {
            if (m.type === 'barrier') barriers.get(other)!.token(m.seq, m.round);
          };
          let turns = delay(me, other);
          const later = () => (turns-- > 0 ? setImmediate(later) : deliver());
          if (turns > 0) later();
          else queueMicrotask(deliver);
        },
      } as unknown as PeerLink);
    }
    barriers.set(me, new ClusterBarrier(me, hosts, localPes, peers));
  }
  return { barriers, sent };
}

describe('cluster barrier', () => {
  it('releases nobody until every PE of every host has arrived, then everybody', async () => {
    const { barriers, sent } = cluster(['h0', 'h1', 'h2'], 2);
    const released: string[] = [];
    const wait = (h: string, pe: number) =>
      barriers
        .get(h)!
        .arrive(7)
        .then(() => released.push(`${h}/${pe}`));
    const all = [wait('h0', 0), wait('h1', 0), wait('h1', 1), wait('h2', 0), wait('h2', 1)];
    await new Promise((r) => setTimeout(r, 10));
    expect(released).toEqual([]);
    all.push(wait('h0', 1));
    await Promise.all(all);
    expect(released.sort()).toEqual(['h0/0', 'h0/1', 'h1/0', 'h1/1', 'h2/0', 'h2/1']);
    // Tokens only, a dissemination barrier: ceil(log2 3) = 2 rounds, one token per host per round,
    // in round r to the host 2^r places on.
    expect(sent.map((s) => `${s.from}->${s.to} ${s.m.type} ${(s.m as { round: number }).round}`).sort()).toEqual([
      'h0->h1 barrier 0',
      'h0->h2 barrier 1',
      'h1->h0 barrier 1',
      'h1->h2 barrier 0',
      'h2->h0 barrier 0',
      'h2->h1 barrier 1',
    ]);
  });

  it('two hosts meet in one message each way', async () => {
    const { barriers, sent } = cluster(['h0', 'h1'], 1);
    await Promise.all([barriers.get('h0')!.arrive(3), barriers.get('h1')!.arrive(3)]);
    expect(sent.map((s) => `${s.from}->${s.to}`).sort()).toEqual(['h0->h1', 'h1->h0']);
  });

  it('a single host needs no message', async () => {
    const { barriers, sent } = cluster(['h0'], 2);
    await Promise.all([barriers.get('h0')!.arrive(1), barriers.get('h0')!.arrive(1)]);
    expect(sent).toEqual([]);
  });

  it('keeps successive barriers apart', async () => {
    const { barriers } = cluster(['h0', 'h1'], 1);
    const order: string[] = [];
    const a = barriers
      .get('h0')!
      .arrive(1)
      .then(() => order.push('h0 1'));
    const b = barriers
      .get('h1')!
      .arrive(1)
      .then(() => order.push('h1 1'));
    await Promise.all([a, b]);
    const c = barriers
      .get('h1')!
      .arrive(2)
      .then(() => order.push('h1 2'));
    await new Promise((r) => setTimeout(r, 10));
    expect(order.sort()).toEqual(['h0 1', 'h1 1']);
    await Promise.all([c, barriers.get('h0')!.arrive(2)]);
    expect(order).toContain('h1 2');
  });

  it('any number of hosts, arriving in any order with messages of any delay: nobody passes before the last arrival, everybody after', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 9 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            // Per host: macrotask turns before it arrives; per ordered pair: turns a message takes.
            arrive: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: n, maxLength: n }),
            delays: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: n * n, maxLength: n * n }),
            barriers: fc.integer({ min: 1, max: 3 }),
          }),
        ),
        async ({ n, arrive, delays, barriers: count }) => {
          const hosts = Array.from({ length: n }, (_, i) => `h${i}`);
          const { barriers } = cluster(hosts, 1, (a, b) => delays[hosts.indexOf(a) * n + hosts.indexOf(b)]);
          for (let seq = 0; seq < count; seq++) {
            const arrived = new Set<string>();
            let early = false;
            const turns = (k: number) => new Promise<void>((r) => (k > 0 ? setImmediate(() => turns(k - 1).then(r)) : r()));
            await Promise.all(
              hosts.map(async (h, i) => {
                await turns(arrive[i]);
                arrived.add(h);
                await barriers.get(h)!.arrive(seq);
                if (arrived.size < n) early = true;
              }),
            );
            expect(early).toBe(false);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
