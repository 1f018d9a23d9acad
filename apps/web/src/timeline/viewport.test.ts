import { describe, expect, it } from 'vitest';
import { fit, formatDuration, formatTime, pan, ticks, zoom } from './viewport.js';

describe('timeline viewport', () => {
  it('zooming keeps the time under the pointer in place', () => {
    const w = zoom({ t0: 0, t1: 1000 }, 0.5, 250);
    expect(w).toEqual({ t0: 125, t1: 625 });
    expect((250 - w.t0) / (w.t1 - w.t0)).toBeCloseTo(0.25);
  });

  it('zooming in stops at a tenth of a microsecond across the view', () => {
    let w = { t0: 0, t1: 1000 };
    for (let i = 0; i < 200; i++) w = zoom(w, 0.5, 500);
    expect(w.t1 - w.t0).toBeCloseTo(0.1);
  });

  it('panning shifts both edges', () => {
    expect(pan({ t0: 10, t1: 20 }, -5)).toEqual({ t0: 5, t1: 15 });
  });

  it('fit shows the whole trace from time zero with a margin, or a default span when empty', () => {
    expect(fit(100, 1100)).toEqual({ t0: -20, t1: 1120 });
    expect(fit(Infinity, -Infinity)).toEqual({ t0: 0, t1: 1000 });
  });

  it('ruler ticks fall on 1-2-5 steps about 110 pixels apart', () => {
    const { step, times } = ticks({ t0: 3, t1: 1003 }, 1100);
    expect(step).toBe(100);
    expect(times[0]).toBe(100);
    expect(times.at(-1)).toBe(1000);
    expect(ticks({ t0: 0, t1: 7e6 }, 700).step).toBe(2e6);
  });

  it('times and durations print in the unit that reads best', () => {
    expect(formatTime(1500, 500)).toBe('1.5 ms');
    expect(formatTime(2000, 1000)).toBe('2 ms');
    expect(formatTime(1500, 100)).toBe('1.5 ms');
    expect(formatTime(2_000_000, 1e6)).toBe('2 s');
    expect(formatTime(12, 2)).toBe('12 µs');
    expect(formatDuration(3.5)).toBe('3.50 µs');
    expect(formatDuration(2500)).toBe('2.500 ms');
  });
});
