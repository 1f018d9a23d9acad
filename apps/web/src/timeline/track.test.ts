import { describe, expect, it } from 'vitest';
import { predict, TraceColumns, type TraceEvent } from '@pipeloom/core';
import {
  buildTracks,
  layoutRows,
  registerTrackKind,
  trackKinds,
  tracksSignature,
  GROUP_PAD,
  TRACK_GAP,
  type Frame,
  type Track,
  type TrackKind,
} from './track.js';
import './tracks/index.js';
import { RETRY_COLOR, RETRY_STRIPE } from './tracks/slices.js';
import { pixel } from './raster.js';
import { EVENT_KINDS } from './kinds/index.js';

const ev = (over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'cpu@h0',
  thread: 'main',
  kind: 'fire',
  name: 'P',
  iteration: 0,
  cycle: 0,
  start: 0,
  end: 10,
  ...over,
});
const store = (events: TraceEvent[]) => {
  const c = new TraceColumns();
  c.append(events);
  return c;
};
const frame = (width = 100, rows = 20): Frame => ({
  px: new Uint32Array(width * rows),
  stride: width,
  x0: 0,
  width,
  dpr: 1,
  win: { t0: 0, t1: 100 },
  labels: [],
  boxes: 0,
});

describe('track registry', () => {
  it('has the built-in kinds, and the event kinds in core kind-code order', () => {
    expect(trackKinds().map((k) => k.id)).toEqual(expect.arrayContaining(['slices', 'predicted', 'in-flight', 'counters']));
    expect(EVENT_KINDS.map((k) => k.id)).toEqual(['fire', 'transfer', 'wait', 'barrier', 'counter']);
  });

  it('a lane stacks its measured slices then its plan; switched-off kinds make no tracks', () => {
    const m = store([ev(), ev({ host: 'h1', pe: 'cpu@h1' })]);
    const p = store([ev({ start: 0, end: 12 }), ev({ thread: 'send:gpu0@h0', kind: 'transfer', name: 'bn_1' })]);
    const on = buildTracks({ measured: m, predicted: p, shown: new Set(['predicted']) });
    expect(on.map((t) => `${t.kind} ${t.host}/${t.thread}`)).toEqual([
      'slices h0/main',
      'predicted h0/main',
      'slices h0/send:gpu0@h0',
      'predicted h0/send:gpu0@h0',
      'slices h1/main',
    ]);
    const off = buildTracks({ measured: m, predicted: p, shown: new Set() });
    expect(off.map((t) => t.kind)).toEqual(['slices', 'slices']);
    // Counters are opt-in: a host-wide track after the host's lanes.
    const counters = buildTracks({ measured: store([ev(), ev({ thread: 'send:cpu@h1', kind: 'transfer', start: 2, end: 8 })]), shown: new Set(['in-flight']) });
    expect(counters.map((t) => `${t.kind} ${t.label}`)).toEqual([
      'slices h0 · cpu@h0 · main',
      'slices h0 · cpu@h0 · send:cpu@h1',
      'in-flight h0 · transfers in flight',
    ]);
  });

  it("draws a copy between two CPU PEs of one host on the sender's own lane, labelled a memory copy, from core's prediction", () => {
    // P -> C on two cores of h0 (cpus: 2): the plan has the copy's lane before the run does.
    const r = predict({
      format: 'pipeloom/v2',
      app: {
        nodes: [
          { id: 'P', kernel: 'matrix.produce', params: { width: 8, height: 8 } },
          { id: 'C', kernel: 'matrix.consume', params: { width: 8, height: 8 } },
        ],
        edges: [{ from: { node: 'P', port: 'out' }, to: { node: 'C', port: 'in' } }],
      },
      arch: { hosts: [{ id: 'h0', cpus: 2 }], pes: [], links: [] },
      mapping: { P: 'cpu0@h0', C: 'cpu1@h0' },
      options: { iterations: 4 },
    });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
    const s = r.prediction.overlap!;
    const tracks = buildTracks({ measured: store([]), predicted: store(s.timeline), graph: s.ig, shown: new Set(['predicted']) });
    expect(tracks.filter((t) => t.kind === 'slices').map((t) => t.label)).toEqual([
      'h0 · cpu0@h0 · main',
      'h0 · cpu0@h0 · send:cpu1@h0 (memory)',
      'h0 · cpu1@h0 · main',
    ]);
  });

  it('a kind registered later adds its tracks without touching the timeline, and replaces one of the same id', () => {
    const made: string[] = [];
    const marker = (label: string): TrackKind => ({
      id: 'test-marker',
      tracks: ({ measured }) =>
        measured.lanes().map((l): Track => ({
          kind: 'test-marker',
          host: l.host,
          pe: l.pe,
          thread: l.thread,
          order: 5,
          label,
          height: 4,
          measuredLane: -1,
          paint: (f) => void made.push(`${label}@${f.width}`),
          hit: () => [label],
        })),
    });
    const before = trackKinds().length;
    registerTrackKind(marker('a'));
    registerTrackKind(marker('b'));
    expect(trackKinds().length).toBe(before + 1);
    const t = buildTracks({ measured: store([ev()]), shown: new Set() });
    expect(t.map((x) => x.kind)).toEqual(['slices', 'test-marker']);
    t[1].paint(frame(), 0, 4, 2);
    expect(made).toEqual(['b@100']);
    expect(t[1].hit(5, 0)).toEqual(['b']);
    // Leave the registry as the other tests expect it.
    (trackKinds() as TrackKind[]).splice(
      trackKinds().findIndex((k) => k.id === 'test-marker'),
      1,
    );
  });

  it('lays tracks out lane group by lane group, padded, the plan 1 px under its lane', () => {
    const m = store([ev(), ev({ host: 'h1', pe: 'cpu@h1' })]);
    const p = store([ev()]);
    const { rows, height, groups } = layoutRows(buildTracks({ measured: m, predicted: p, shown: new Set(['predicted']) }));
    expect(rows.map((r) => [r.track.kind, r.top, r.first, r.group])).toEqual([
      ['slices', GROUP_PAD, true, 0],
      ['predicted', GROUP_PAD + 16 + TRACK_GAP, false, 0],
      ['slices', 2 * GROUP_PAD + 16 + TRACK_GAP + 7 + GROUP_PAD, true, 1],
    ]);
    expect(groups.map((g) => g.host)).toEqual(['h0', 'h1']);
    expect(height).toBe(groups[1].top + groups[1].height);
  });

  it('slice tracks paint in their kind colour and name wide slices; hits describe the event with what its kind adds', () => {
    const m = store([
      ev({ start: 0, end: 60 }),
      ev({ thread: 'recv:cpu@h1', kind: 'transfer', name: 'bn_2', buffer: 'bn_2', from: 'bn_1', start: 10, end: 20, bytes: 4096 }),
    ]);
    const [main, recv] = buildTracks({ measured: m, shown: new Set() });
    const f = frame();
    main.paint(f, 0, 16, 8);
    expect(f.labels).toEqual([{ text: 'P', x0: 0, x1: 60, y: 8 }]);
    expect(f.px[30]).not.toBe(0);
    expect(recv.hit(15, 0)).toEqual(['transfer bn_2', 'h0 · cpu@h0 · recv:cpu@h1', 'iteration 0 · cycle 0', '10.0 µs at 10 µs', '4,096 bytes', 'bn_1 -> bn_2']);
    expect(recv.hit(50, 0)).toBeNull();
  });

  it("the in-flight counter paints the most transfers at once in each pixel, scaled to the run's most", () => {
    const m = store([
      ev({ thread: 'send:a', kind: 'transfer', start: 0, end: 50 }),
      ev({ thread: 'send:b', kind: 'transfer', start: 20, end: 30 }),
      ev({ thread: 'send:b', kind: 'transfer', start: 30, end: 40 }),
    ]);
    const t = buildTracks({ measured: m, shown: new Set(['in-flight']) }).find((x) => x.kind === 'in-flight')!;
    const f = frame(100, 10);
    t.paint(f, 0, 10, 5);
    const column = (x: number) => [...Array(10).keys()].filter((y) => f.px[y * 100 + x] !== 0).length;
    expect(column(10)).toBe(5);
    expect(column(25)).toBe(10);
    expect(column(35)).toBe(10);
    expect(column(45)).toBe(5);
    expect(column(60)).toBe(0);
    expect(t.hit(25, 0)![0]).toBe('2 transfers in flight');
  });

  const sample = (start: number, value: number, name = 'bag depth'): TraceEvent => ({
    host: 'coordinator',
    pe: 'bag',
    thread: 'bag',
    kind: 'counter',
    name,
    value,
    start,
    end: start,
    iteration: -1,
    cycle: -1,
  });

  it("the bag's samples make a counter track per counter instead of a slice track; a counter first sampled later rebuilds the tracks", () => {
    const m = store([ev(), sample(0, 4), sample(5, 3)]);
    const src = { measured: m, shown: new Set<string>() };
    const before = tracksSignature(src);
    expect(buildTracks(src).map((t) => `${t.kind} ${t.label}`)).toEqual(['counters coordinator · bag depth', 'slices h0 · cpu@h0 · main']);
    m.append([sample(6, 1, 'in flight')]);
    expect(tracksSignature(src)).not.toBe(before);
    expect(buildTracks(src).map((t) => `${t.kind} ${t.label}`)).toEqual([
      'counters coordinator · bag depth',
      'counters coordinator · in flight',
      'slices h0 · cpu@h0 · main',
    ]);
  });

  it("a counter track draws its value as a step line over a filled area, scaled to the run's largest, with its value on hover", () => {
    const m = store([sample(10, 4), sample(40, 2), sample(70, 0)]);
    const [t] = buildTracks({ measured: m, shown: new Set() });
    const f = frame(100, 12);
    t.paint(f, 0, 12, 6);
    const line = pixel('#0d9488');
    // The line's row in each column (rows 11 .. 1 hold 0 .. 4).
    const lineRow = (x: number) => [...Array(12).keys()].find((y) => f.px[y * 100 + x] === line);
    expect(lineRow(5)).toBeUndefined();
    expect(lineRow(20)).toBe(1);
    expect(lineRow(50)).toBe(6);
    expect(lineRow(80)).toBe(11);
    // Where it steps (x 40: 4 -> 2), the line spans both levels.
    expect([...Array(12).keys()].filter((y) => f.px[y * 100 + 40] === line)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(f.px[11 * 100 + 20]).not.toBe(0);
    expect(t.hit(50, 0)).toEqual(['bag depth 2', 'coordinator · bag at 50 µs', 'at most 4 in the run']);
    expect(t.hit(5, 0)).toBeNull();
  });

  it('labels task slices by their name, hatches a second attempt and says its task, share and attempt', () => {
    const task = (share: number, attempt: number, start: number, end: number) =>
      ev({
        name: attempt > 1 ? `projbp[${share}]@0 (${attempt})` : `projbp[${share}]@0`,
        node: 'projbp',
        cycle: -1,
        start,
        end,
        task: { id: `projbp[${share}]@0`, share, attempt },
      });
    const m = store([task(0, 1, 0, 45), task(1, 2, 50, 95)]);
    const [lane] = buildTracks({ measured: m, shown: new Set() });
    const f = frame(100, 16);
    lane.paint(f, 0, 16, 8);
    expect(f.labels.map((l) => l.text)).toEqual(['projbp[0]@0', 'projbp[1]@0 (2)']);
    const count = (color: number, x0: number, x1: number) => f.px.subarray(0, 16 * 100).filter((p, k) => k % 100 >= x0 && k % 100 < x1 && p === color).length;
    expect(count(RETRY_COLOR, 0, 45) + count(RETRY_STRIPE, 0, 45)).toBe(0);
    // Framed: both rows and both columns of its edge (45 + 45 + 14 + 14 pixels).
    expect(count(RETRY_COLOR, 50, 95)).toBe(118);
    expect(count(RETRY_STRIPE, 50, 95)).toBeGreaterThan(100);
    expect(lane.hit(70, 0)).toContain('task projbp[1]@0 · share 1 · attempt 2 (requeued)');
    expect(lane.hit(20, 0)).toContain('task projbp[0]@0 · share 0 · attempt 1');
  });
});
