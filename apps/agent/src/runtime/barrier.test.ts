import { describe, expect, it } from 'vitest';
import type { PeerMessage } from '@pipeloom/core/coordinator/protocol';
import type { PeerLink } from '../peer/link.js';
import { ClusterBarrier } from './barrier.js';

// Three hosts wired together in memory: the messages are the ones peer links carry.
function cluster(hosts: string[], localPes: number) {
  const barriers = new Map<string, ClusterBarrier>();
  const sent: { from: string; to: string; m: PeerMessage }[] = [];
  for (const me of hosts) {
    const peers = new Map<string, PeerLink>();
    for (const other of hosts) {
      if (other === me) continue;
      peers.set(other, {
        send: (m: PeerMessage) => {
          sent.push({ from: me, to: other, m });
          queueMicrotask(() => {
            const b = barriers.get(other)!;
            if (m.type === 'barrier') b.hostArrived(m.seq);
            else if (m.type === 'release') b.release(m.seq);
          });
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
    const wait = (h: string, pe: number) => barriers.get(h)!.arrive(7).then(() => released.push(`${h}/${pe}`));
    const all = [wait('h0', 0), wait('h1', 0), wait('h1', 1), wait('h2', 0), wait('h2', 1)];
    await new Promise((r) => setTimeout(r, 10));
    expect(released).toEqual([]);
    all.push(wait('h0', 1));
    await Promise.all(all);
    expect(released.sort()).toEqual(['h0/0', 'h0/1', 'h1/0', 'h1/1', 'h2/0', 'h2/1']);
    // Tokens only, through the root (the first host): one arrival from each other host, one release to each.
    expect(sent.map((s) => `${s.from}->${s.to} ${s.m.type}`).sort()).toEqual(['h0->h1 release', 'h0->h2 release', 'h1->h0 barrier', 'h2->h0 barrier']);
  });

  it('keeps successive barriers apart', async () => {
    const { barriers } = cluster(['h0', 'h1'], 1);
    const order: string[] = [];
    const a = barriers.get('h0')!.arrive(1).then(() => order.push('h0 1'));
    const b = barriers.get('h1')!.arrive(1).then(() => order.push('h1 1'));
    await Promise.all([a, b]);
    const c = barriers.get('h1')!.arrive(2).then(() => order.push('h1 2'));
    await new Promise((r) => setTimeout(r, 10));
    expect(order.sort()).toEqual(['h0 1', 'h1 1']);
    await Promise.all([c, barriers.get('h0')!.arrive(2)]);
    expect(order).toContain('h1 2');
  });
});
