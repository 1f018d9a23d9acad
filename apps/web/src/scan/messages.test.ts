import { describe, expect, it } from 'vitest';
import { scanPlan, type Link, type WrittenDocument } from '@pipeloom/core';
import { findKernel } from '@pipeloom/kernels';
import { emptyDocument } from '../document/documents.js';
import { scanTimeline } from './lanes.js';
import { scanMessages } from './messages.js';
import { payloadWords } from '../document/scanNode.js';

// Two hosts, each a CPU and a GPU on PCIe; the CPUs joined by Ethernet at 0.1 ms and 1 MB/s
// (a slow network, so a message is worth seeing beside a 1 ms application).
const NET = { latency: 1e-4, bandwidth: 1e6 };
const PCIE = { latency: 1e-5, bandwidth: 4e6 };
function twoHosts(links = true): WrittenDocument {
  const d = emptyDocument();
  const hosts = ['h0', 'h1'].map((id, i) => ({ id, position: { x: i * 200, y: 0 } }));
  const pes = hosts.flatMap((h) => [
    { id: `cpu@${h.id}`, host: h.id, kind: 'cpu' as const, memory: 2 ** 30, position: { x: 20, y: 40 } },
    { id: `gpu0@${h.id}`, host: h.id, kind: 'gpu' as const, memory: 2 ** 30, position: { x: 20, y: 90 } },
  ]);
  const link = (a: string, b: string, kind: Link['kind'], c: { latency: number; bandwidth: number }): Link => ({ a, b, kind, ...c, duplex: true });
  return {
    ...d,
    arch: {
      hosts,
      pes,
      links: links ? [link('cpu@h0', 'gpu0@h0', 'pcie', PCIE), link('cpu@h1', 'gpu0@h1', 'pcie', PCIE), link('cpu@h0', 'cpu@h1', 'ethernet', NET)] : [],
    },
  };
}

const mulmod = findKernel('mat.mulmod')!;
// 3 x 3 matrices: W = 9 payload words, an element of (2 + 9) x 4 = 44 bytes.
const W = payloadWords(mulmod, { k: 3 })!;

describe("the scan timeline's messages", () => {
  it("an element of a 3 x 3 mat.mulmod is 44 bytes; a message takes the fastest route, its links' times summed; on one PE it is free", () => {
    expect(W).toBe(9);
    const pes = ['cpu@h0', 'cpu@h1', 'gpu0@h1', 'cpu@h1'];
    const m = scanMessages(twoHosts(), pes, W).messages!;
    expect(m.elementBytes).toBe(44);
    const time = (from: number, to: number) => m.link(from, to).latency + 44 / m.link(from, to).bandwidth;
    const net = NET.latency + 44 / NET.bandwidth;
    const pcie = PCIE.latency + 44 / PCIE.bandwidth;
    expect(time(0, 1)).toBeCloseTo(net, 15);
    expect(time(1, 0)).toBeCloseTo(net, 15);
    expect(time(1, 2)).toBeCloseTo(pcie, 15);
    // cpu@h0 -> cpu@h1 -> gpu0@h1: both links.
    expect(time(0, 2)).toBeCloseTo(net + pcie, 15);
    // Workers 1 and 3 share cpu@h1.
    expect(time(1, 3)).toBe(0);
    expect(m.summary).toContain('one element of 44 B, 21 µs cpu@h1 → gpu0@h1 to 165 µs cpu@h0 → gpu0@h1');
  });

  it('(a) on two hosts is longer than with free messages by the one message on its critical path', () => {
    // Kogge-Stone, N = 4 on p = 2 (w0 on cpu@h0, w1 on cpu@h1), c = 1 ms per application: each
    // worker scans its 2 elements (1 application, 0 to c); w1's network application needs w0's
    // block total, there at c + m (m = 0.1 ms + 44 B / 1 MB/s = 0.144 ms): c + m to 2c + m; its
    // second stage (1 application, also on w0's total) follows: 2c + m to 3c + m. Free: 3c.
    const plan = scanPlan(4, 2, 'kogge-stone', 'scan-then-propagate', 'inclusive');
    const hint = [1e-3, 1e-3];
    const free = scanTimeline({ plan, execution: 'eager', hint, run: null });
    const messages = scanMessages(twoHosts(), ['cpu@h0', 'cpu@h1'], W).messages!;
    const sent = scanTimeline({ plan, execution: 'eager', hint, run: null, messages });
    expect(free.bands[0].makespan).toBeCloseTo(3e-3, 15);
    expect(sent.bands[0].makespan).toBeCloseTo(3e-3 + 1.44e-4, 15);
    expect(sent.bands[0].makespan - free.bands[0].makespan).toBeCloseTo(1.44e-4, 15);
    // The late input is w1's wait before its network application.
    expect(sent.bands[0].lanes[1].slices.map((s) => s.kind)).toEqual(['local', 'wait', 'network', 'prop']);
    expect(sent.bands[0].lanes[1].wait).toBeCloseTo(1.44e-4, 15);
    // Both workers on cpu@h0: free again.
    const one = scanMessages(twoHosts(), ['cpu@h0', 'cpu@h0'], W).messages!;
    expect(scanTimeline({ plan, execution: 'eager', hint, run: null, messages: one }).bands[0].makespan).toBeCloseTo(3e-3, 15);
    expect(one.summary).toMatch(/every worker runs on one PE/);
  });

  it('what cannot be costed says why (the simulations then take messages as free)', () => {
    expect(scanMessages(twoHosts(false), ['cpu@h0', 'cpu@h1'], W).why).toBe(
      'no route from cpu@h0 to cpu@h1 in the architecture graph (link them in Architecture)',
    );
    expect(scanMessages(twoHosts(), ['cpu@h0', 'cpu@h7'], W).why).toBe('worker PE "cpu@h7" is not in the architecture graph');
    expect(scanMessages(twoHosts(), ['cpu@h0', 'cpu@h1'], undefined).why).toBe('the operator gives no element size for these params');
  });
});
