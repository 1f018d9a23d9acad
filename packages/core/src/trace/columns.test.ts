import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TraceColumns } from './columns.js';
import type { TraceEvent } from './event.js';

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'gpu0',
  thread: 'main',
  kind: 'fire',
  name: 'I1',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});

describe('TraceColumns', () => {
  it('gives each host / PE / thread its own lane, ordered host, PE, main thread first', () => {
    const c = new TraceColumns();
    c.append([ev(0, 1, { host: 'h1', pe: 'cpu0' }), ev(0, 1, { thread: 'send:cpu@h1' }), ev(0, 1), ev(2, 3), ev(0, 1, { host: 'h0', pe: 'cpu0' })]);
    expect(c.laneCount).toBe(4);
    expect(c.lanes().map((l) => `${l.host}/${l.pe}/${l.thread}`)).toEqual(['h0/cpu0/main', 'h0/gpu0/main', 'h0/gpu0/send:cpu@h1', 'h1/cpu0/main']);
    expect(c.laneLength(c.findLane('h0', 'gpu0', 'main'))).toBe(2);
    expect(c.findLane('h9', 'gpu0', 'main')).toBe(-1);
  });

  it('a window query returns the events intersecting it, including a long one that started before', () => {
    const c = new TraceColumns();
    c.append([ev(0, 100), ev(100, 110), ev(110, 120), ev(120, 130), ev(130, 400), ev(400, 410)]);
    const lane = 0;
    const ids = (t0: number, t1: number) => {
      const [a, b] = c.window(lane, t0, t1);
      return [...c.laneOrder(lane).subarray(a, b)].map((i) => c.start[i]);
    };
    expect(ids(50, 60)).toEqual([0]);
    expect(ids(105, 115)).toEqual([100, 110]);
    expect(ids(200, 300)).toEqual([130]);
    expect(ids(500, 600)).toEqual([]);
    expect(ids(-10, -1)).toEqual([]);
  });

  it('grows past its initial capacity and keeps every field', () => {
    const c = new TraceColumns();
    const n = 5000;
    const batch: TraceEvent[] = [];
    for (let i = 0; i < n; i++)
      batch.push(ev(i * 10, i * 10 + 5, { kind: i % 2 ? 'transfer' : 'fire', name: `b${i % 7}`, iteration: i, cycle: i + 1, bytes: i % 2 ? 4096 : undefined }));
    for (let i = 0; i < n; i += 333) c.append(batch.slice(i, i + 333));
    expect(c.length).toBe(n);
    expect(c.names.length).toBe(7);
    expect(c.event(4001)).toEqual({
      host: 'h0',
      pe: 'gpu0',
      thread: 'main',
      kind: 'transfer',
      name: 'b4',
      iteration: 4001,
      cycle: 4002,
      start: 40010,
      end: 40015,
      bytes: 4096,
    });
    expect(c.minStart).toBe(0);
    expect(c.maxEnd).toBe((n - 1) * 10 + 5);
    expect(c.toEvents()).toHaveLength(n);
  });

  it('gives back each event as appended: a staged transfer keeps its buffer apart from its label', () => {
    const via = '(nvlink, staged through host)';
    const half = { kind: 'transfer' as const, buffer: 'bn_4', from: 'bn_3', iteration: 1, cycle: 3, bytes: 64 };
    const events: TraceEvent[] = [
      ev(0, 300, { ...half, pe: 'gpu0@h0', thread: 'send:gpu1@h0', name: `bn_4 gpu0@h0->host ${via}` }),
      ev(0, 300, { ...half, pe: 'gpu1@h0', thread: 'recv:gpu0@h0', kind: 'wait', name: `wait bn_4 ${via}` }),
      ev(300, 500, { ...half, pe: 'gpu1@h0', thread: 'recv:gpu0@h0', name: `bn_4 host->gpu1@h0 ${via}` }),
      ev(500, 600, { pe: 'gpu1@h0', name: 'C', node: 'C', iteration: 1, cycle: 3 }),
    ];
    const c = new TraceColumns();
    c.append(events);
    expect(c.toEvents()).toEqual(events);
  });

  it('keeps a lane sorted when a batch arrives late', () => {
    const c = new TraceColumns();
    c.append([ev(0, 1), ev(10, 11), ev(20, 21)]);
    c.append([ev(5, 6), ev(15, 16)]);
    const order = [...c.laneOrder(0).subarray(0, c.laneLength(0))].map((i) => c.start[i]);
    expect(order).toEqual([0, 5, 10, 15, 20]);
    expect([...c.laneOrder(0).subarray(...c.window(0, 5.5, 14))].map((i) => c.start[i])).toEqual([5, 10]);
  });

  it('hit finds the event under a time, the shortest when nested', () => {
    const c = new TraceColumns();
    c.append([ev(0, 100, { kind: 'wait', name: 'barrier' }), ev(10, 20, { name: 'C' })]);
    expect(c.names[c.name[c.hit(0, 15)]]).toBe('C');
    expect(c.names[c.name[c.hit(0, 50)]]).toBe('barrier');
    expect(c.hit(0, 150)).toBe(-1);
    expect(c.hit(0, 101, 2)).toBe(0);
  });

  it('seek finds the first event starting at or after a time from any position (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 120 }),
        fc.nat(),
        fc.integer({ min: -10, max: 520 }),
        (starts, f, t) => {
          const c = new TraceColumns();
          c.append(starts.map((s) => ev(s, s + 1)));
          const sorted = [...starts].sort((a, b) => a - b);
          const from = f % (sorted.length + 1);
          let want = from;
          while (want < sorted.length && sorted[want] < t) want++;
          expect(c.seek(0, from, t)).toBe(want);
        },
      ),
    );
  });

  it('seek jumps to the first event starting at or after a time', () => {
    const c = new TraceColumns();
    c.append([ev(0, 1), ev(2, 3), ev(4, 5), ev(6, 7)]);
    expect(c.seek(0, 0, 3)).toBe(2);
    expect(c.seek(0, 3, 3)).toBe(3);
    expect(c.seek(0, 0, 99)).toBe(4);
  });

  it('window holds every event a linear scan finds, for any arrival order (property)', () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 200 }));
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 80 }), fc.integer({ min: -50, max: 1300 }), fc.integer({ min: 0, max: 400 }), (spans, t0, w) => {
        const c = new TraceColumns();
        const events = spans.map(([s, d]) => ev(s, s + d));
        for (let i = 0; i < events.length; i += 7) c.append(events.slice(i, i + 7));
        const t1 = t0 + w;
        const expected = events
          .filter((e) => e.end >= t0 && e.start <= t1)
          .map((e) => `${e.start}-${e.end}`)
          .sort();
        const [a, b] = c.window(0, t0, t1);
        const inRange = c.length ? [...c.laneOrder(0).subarray(a, b)] : [];
        const got = inRange
          .filter((i) => c.end[i] >= t0)
          .map((i) => `${c.start[i]}-${c.end[i]}`)
          .sort();
        expect(got).toEqual(expected);
      }),
    );
  });

  it("keeps a task-bag fire's task and a counter's value, and tells a lane of counters from a slice lane", () => {
    const c = new TraceColumns();
    const fire = ev(0, 10, { name: 'projbp[3]@5 (2)', node: 'projbp', iteration: 5, cycle: -1, task: { id: 'projbp[3]@5', share: 3, attempt: 2 } });
    const solo = ev(10, 20, { name: 'update@5', node: 'update', iteration: 5, cycle: -1, task: { id: 'update@5', attempt: 1 } });
    const depth = (start: number, value: number): TraceEvent => ({
      host: 'coordinator',
      pe: 'bag',
      thread: 'bag',
      kind: 'counter',
      name: 'bag depth',
      value,
      start,
      end: start,
      iteration: -1,
      cycle: -1,
    });
    c.append([fire, solo, depth(0, 36), depth(4, 0), depth(9, 0.5)]);
    expect(c.event(0)).toEqual(fire);
    expect(c.event(1)).toEqual(solo);
    expect(c.event(4)).toEqual(depth(9, 0.5));
    expect(c.event(3).value).toBe(0);
    expect(c.isCounterLane(c.findLane('coordinator', 'bag', 'bag'))).toBe(true);
    expect(c.isCounterLane(c.findLane('h0', 'gpu0', 'main'))).toBe(false);
    expect(c.sliceStart).toBe(0);
    expect(c.sliceEnd).toBe(20);
  });
});
