import { describe, expect, it } from 'vitest';
import { TraceColumns, type TraceEvent } from '@pipeloom/core';
import { lanePairs, pixel, rasterLane } from './raster.js';

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'gpu0@h0',
  thread: 'main',
  kind: 'fire',
  name: 'I1',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});
const COLORS = [1, 2, 3, 4]; // fire, transfer, wait, barrier
const row = (c: TraceColumns, t0: number, t1: number, width = 100) => {
  const px = new Uint32Array(width * 2);
  const named: number[] = [];
  const stats = { boxes: 0 };
  rasterLane(px, width, c, 0, { t0, t1 }, 0, width, 0, 2, COLORS, named, 20, stats);
  // Both rows are painted alike.
  expect([...px.subarray(width)]).toEqual([...px.subarray(0, width)]);
  return { px: [...px.subarray(0, width)], named, boxes: stats.boxes };
};

describe('timeline raster', () => {
  it('paints each event over its pixels in its kind colour, names only wide ones', () => {
    const c = new TraceColumns();
    c.append([ev(10, 40), ev(50, 55, { kind: 'barrier', name: 'phase 1' }), ev(120, 130)]);
    const { px, named } = row(c, 0, 100);
    expect(px.slice(10, 40).every((p) => p === 1)).toBe(true);
    expect(px.slice(50, 55).every((p) => p === 4)).toBe(true);
    expect(px[5]).toBe(0);
    expect(px[45]).toBe(0);
    expect(px[60]).toBe(0);
    expect(named).toEqual([0]);
  });

  it('merges events narrower than a pixel into one box per pixel run, costing one step per pixel', () => {
    const c = new TraceColumns();
    const events: TraceEvent[] = [];
    for (let i = 0; i < 10_000; i++) events.push(ev(i, i + 0.5, { kind: i % 2 ? 'wait' : 'fire' }));
    c.append(events);
    const { px, boxes } = row(c, 0, 10_000);
    expect(px.every((p) => p === 1 || p === 3)).toBe(true);
    expect(boxes).toBeLessThanOrEqual(100);
  });

  it('an event that started before the window still covers its start', () => {
    const c = new TraceColumns();
    c.append([ev(-500, 30, { kind: 'transfer' })]);
    const { px } = row(c, 0, 100);
    expect(px.slice(0, 30).every((p) => p === 2)).toBe(true);
    expect(px[31]).toBe(0);
  });

  it('lists measured and predicted lanes once each, host by host, main thread first', () => {
    const m = new TraceColumns();
    m.append([ev(0, 1, { thread: 'send:cpu@h1' }), ev(0, 1)]);
    const p = new TraceColumns();
    p.append([ev(0, 1), ev(0, 1, { host: 'h1', pe: 'cpu@h1' })]);
    expect(lanePairs(m, p).map((t) => [t.key, t.measured >= 0, t.predicted >= 0])).toEqual([
      ['h0/gpu0@h0/main', true, true],
      ['h0/gpu0@h0/send:cpu@h1', true, false],
      ['h1/cpu@h1/main', false, true],
    ]);
  });

  it('colours are little-endian RGBA pixels, faded ones blended over white', () => {
    const view = new Uint8Array(new Uint32Array([pixel('#3b82f6')]).buffer);
    expect([...view]).toEqual([0x3b, 0x82, 0xf6, 255]);
    const faded = new Uint8Array(new Uint32Array([pixel('#000000', 0.5)]).buffer);
    expect([...faded]).toEqual([128, 128, 128, 255]);
  });
});
