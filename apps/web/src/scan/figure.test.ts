import { describe, expect, it } from 'vitest';
import { NETWORKS, scanModel, scanPlan } from '@pipeloom/core';
import { networkModel } from '@pipeloom/core/internal';
import { scanFigure } from './figure.js';

// The Expand view's figure is read off core's plan: its network dots are figures 3.1-3.5's
// applications at p = 8 (identities counted), and its fired dots and edges are the plan's.

describe('scan figure', () => {
  it("at p = 8 the network rows hold the figures' applications: serial 7/7, Kogge-Stone 17/3, Sklansky 12/3, Brent-Kung 11/5, Blelloch 14/6", () => {
    const want = { serial: [7, 7], 'kogge-stone': [17, 3], sklansky: [12, 3], 'brent-kung': [11, 5], blelloch: [14, 6] } as const;
    for (const network of NETWORKS) {
      const f = scanFigure(scanPlan(64, 8, network, 'scan-then-propagate', 'inclusive'));
      const net = f.dots.filter((d) => d.row >= 1 && d.row <= f.rows.length - 2);
      expect([net.length, f.rows.length - 2], network).toEqual(want[network]);
      // Fired and pruned dots are the applications the network fires; free ones hold an identity.
      expect(f.counts.fired + f.counts.pruned, network).toBe(networkModel(network, 8).fired);
      expect(f.counts.free, network).toBe(networkModel(network, 8).applications - networkModel(network, 8).fired);
    }
  });

  it('Blelloch at p = 8 draws its 3 identity applications apart, free', () => {
    const f = scanFigure(scanPlan(64, 8, 'blelloch', 'scan-then-propagate', 'inclusive'));
    expect(f.dots.filter((d) => d.kind === 'free')).toHaveLength(3);
    expect(f.dots.filter((d) => d.kind === 'free').every((d) => d.applications === 0)).toBe(true);
  });

  it("every plan node is one dot, its data edges are lines, and its applications sum to the model's work", () => {
    for (const network of NETWORKS)
      for (const strategy of ['scan-then-propagate', 'reduce-then-scan'] as const)
        for (const output of ['inclusive', 'exclusive'] as const)
          for (const [N, p] of [
            [1, 1],
            [7, 3],
            [40, 5],
            [64, 8],
            [100, 13],
          ]) {
            const plan = scanPlan(N, p, network, strategy, output);
            const f = scanFigure(plan);
            const fired = f.dots.filter((d) => d.key !== undefined);
            expect(fired).toHaveLength(plan.nodes.length);
            expect(fired.reduce((s, d) => s + d.applications, 0)).toBe(scanModel(N, p, network, strategy, output).work);
            const edges = new Set(plan.nodes.flatMap((n, k) => n.inputs.flatMap((i) => i.runs.filter((r) => r.node >= 0).map((r) => `${r.node}->${k}`))));
            expect(f.lines.filter((l) => !l.faint)).toHaveLength(edges.size);
            // Columns hold the workers (and padded positions); local and second-stage dots sit in their worker's.
            expect(f.dots.every((d) => d.col >= 0 && d.col < f.columns && d.row >= 0 && d.row < f.rows.length)).toBe(true);
            expect(fired.filter((d) => d.kind !== 'network').every((d) => d.col < p)).toBe(true);
          }
  });
});
