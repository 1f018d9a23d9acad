import { describe, expect, it } from 'vitest';
import { scanModel, speedupCurve } from './model.js';
import { buildNetwork, IDENTITY, networkStats, NETWORKS, resolveNetwork } from './networks.js';

describe('prefix networks', () => {
  it('at p = 8 match figures 3.1-3.5: serial 7/7, Kogge-Stone 17/3, Sklansky 12/3, Brent-Kung 11/5, Blelloch 14/6 (11 fired)', () => {
    const at8 = (n: (typeof NETWORKS)[number]) => {
      const s = networkStats(buildNetwork(n, 8));
      return [s.applications, s.levels, s.fired];
    };
    expect(at8('serial')).toEqual([7, 7, 7]);
    expect(at8('kogge-stone')).toEqual([17, 3, 17]);
    expect(at8('sklansky')).toEqual([12, 3, 12]);
    expect(at8('brent-kung')).toEqual([11, 5, 11]);
    expect(at8('blelloch')).toEqual([14, 6, 11]);
  });

  it('every network on every p <= 70 yields each worker its prefixes, operands adjacent and in order', () => {
    for (const network of NETWORKS)
      for (let p = 1; p <= 70; p++) {
        const net = buildNetwork(network, p);
        for (const a of net.applications) {
          if (a.free) continue;
          const [l, r] = [net.values[a.left], net.values[a.right]];
          expect(l.hi + 1).toBe(r.lo);
          expect(a.worker).toBeLessThan(p);
        }
        for (let i = 0; i < p; i++) {
          const e = net.exclusive[i];
          if (i === 0) expect(e).toBe(IDENTITY);
          else expect([net.values[e].lo, net.values[e].hi]).toEqual([0, i - 1]);
          const inc = net.inclusive[i];
          if (inc !== undefined) expect([net.values[inc].lo, net.values[inc].hi]).toEqual([0, i]);
        }
        // The last worker's inclusive prefix is the total every network holds.
        expect(net.inclusive[p - 1]).toBeDefined();
      }
  });

  it('hillis-steele names Kogge-Stone; unknown names resolve to nothing', () => {
    expect(resolveNetwork('hillis-steele')).toBe('kogge-stone');
    expect(resolveNetwork('ladner-fischer')).toBeUndefined();
  });
});

describe('scan model', () => {
  it('Kogge-Stone with Algorithm 9: span (N/p - 1) + log2 p + (N/p - 1) when p divides N', () => {
    const m = scanModel(64, 8, 'kogge-stone');
    expect(m.span.depth).toBe(7 + 3 + 7);
    expect(m.span.levels).toBe(17);
    expect(m.speedup).toBeCloseTo(63 / 17);
    // The network part is the figure's; the local stages are 7 per worker.
    expect(m.networkPart).toMatchObject({ applications: 17, levels: 3 });
    expect(m.workers.every((w) => w.local.applications === 7)).toBe(true);
  });

  it('p = 1 is the serial scan: N - 1 applications, no message, speedup 1', () => {
    for (const network of NETWORKS) {
      const m = scanModel(50, 1, network);
      expect([m.work, m.messages, m.span.depth, m.speedup]).toEqual([49, 0, 49, 1]);
    }
  });

  it('rounds make each network level wait for the whole previous one: never shallower than eager', () => {
    for (const network of NETWORKS)
      for (const p of [3, 8, 13]) {
        const eager = scanModel(100, p, network);
        const rounds = scanModel(100, p, network, 'scan-then-propagate', 'inclusive', 'rounds');
        expect(rounds.span.depth).toBeGreaterThanOrEqual(eager.span.depth);
        expect(rounds.work).toBe(eager.work);
      }
  });

  it("the speedup curve (figures 4.6-4.7): Kogge-Stone at least Blelloch's, serial best at small p", () => {
    const ks = speedupCurve(256, 'kogge-stone', 64);
    const bl = speedupCurve(256, 'blelloch', 64);
    const serial = speedupCurve(256, 'serial', 64);
    expect(ks.best.speedup).toBeGreaterThanOrEqual(bl.best.speedup);
    expect(serial.best.p).toBeLessThan(ks.best.p);
    expect(serial.best.speedup).toBeLessThan(ks.best.speedup);
  });
});
