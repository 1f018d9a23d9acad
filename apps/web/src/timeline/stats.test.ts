import { describe, expect, it } from 'vitest';
import { TraceColumns, type TraceEvent } from '@pipeloom/core';
import { busyPerCycle, rangeStats } from './stats.js';
import { maxOver, transfersInFlight } from './counters.js';

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'cpu@h0',
  thread: 'main',
  kind: 'fire',
  name: 'P',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});
const store = (events: TraceEvent[]) => {
  const c = new TraceColumns();
  c.append(events);
  return c;
};

describe('range statistics', () => {
  // Four cycles of 100 µs on one lane: a 60 µs firing then a 20 µs wait; a copy lane beside it.
  const events: TraceEvent[] = [];
  for (let k = 0; k < 4; k++) {
    events.push(
      ev(k * 100, k * 100 + 60, { cycle: k, iteration: k }),
      ev(k * 100 + 60, k * 100 + 80, { kind: 'wait', name: 'wait bn_1', cycle: k, iteration: k }),
    );
    events.push(
      ev(k * 100 + 10, k * 100 + 40, { thread: 'send:cpu@h1', kind: 'transfer', name: 'bn_2', cycle: k, iteration: k }),
      ev(k * 100 + 20, k * 100 + 50, { thread: 'send:cpu@h1', kind: 'transfer', name: 'bn_3', cycle: k, iteration: k }),
    );
  }
  const c = store(events);

  it('busy share per lane counts fires and transfers, overlapping copies once, clipped to the range; waits are not busy', () => {
    const s = rangeStats(c, 0, 200);
    const main = s.lanes.find((l) => l.key === 'h0/cpu@h0/main')!;
    const send = s.lanes.find((l) => l.key === 'h0/cpu@h0/send:cpu@h1')!;
    expect(main.share).toBeCloseTo(120 / 200);
    expect(main.events).toBe(4);
    expect(send.busy).toBeCloseTo(80);
    expect(s.events).toBe(8);
    // Clipped: from the middle of the first firing.
    expect(rangeStats(c, 30, 60).lanes.find((l) => l.key === 'h0/cpu@h0/main')!.busy).toBeCloseTo(30);
  });

  it('mean cycle: time between the ends of consecutive cycles that end in the range', () => {
    const s = rangeStats(c, 50, 400);
    expect(s.cycles).toBe(4);
    expect(s.meanCycle).toBeCloseTo(100);
    expect(rangeStats(c, 0, 90).meanCycle).toBeNull();
  });

  it('an empty range or store has no events and no busy time', () => {
    expect(rangeStats(c, 1000, 2000).events).toBe(0);
    expect(rangeStats(new TraceColumns(), 0, 10)).toMatchObject({ events: 0, lanes: [], cycles: 0, meanCycle: null });
  });

  it("busy per cycle over a span of cycles, per lane (the Run view's measured/predicted table)", () => {
    const b = busyPerCycle(c, 1, 3);
    expect(b.get('h0/cpu@h0/main')).toBeCloseTo(60);
    expect(b.get('h0/cpu@h0/send:cpu@h1')).toBeCloseTo(40);
    expect(busyPerCycle(c, 3, 2).size).toBe(0);
  });
});

describe('counters', () => {
  it('transfers in flight per host: back-to-back copies are not two at once', () => {
    const c = store([
      ev(0, 10, { kind: 'transfer', thread: 'send:a' }),
      ev(10, 20, { kind: 'transfer', thread: 'send:a' }),
      ev(5, 15, { kind: 'transfer', thread: 'send:b' }),
      ev(0, 30, { host: 'h1', pe: 'cpu@h1' }),
    ]);
    const s = transfersInFlight(c);
    expect([...s.keys()]).toEqual(['h0']);
    const h0 = s.get('h0')!;
    expect(h0.max).toBe(2);
    expect(maxOver(h0, 10, 10)).toBe(2);
    expect(maxOver(h0, 16, 19)).toBe(1);
    expect(maxOver(h0, 25, 30)).toBe(0);
  });
});
