// @vitest-environment jsdom
import { act, createRef } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TraceColumns, type TraceEvent } from '@pipeloom/core';
import { Timeline, type TimelineHandle } from './Timeline.js';

// The timeline's input handling in jsdom. jsdom lays nothing out and has no canvas, so every
// element reports an 800x400 box at the origin; the drawing itself is covered by tracks.test.ts
// and, in Chromium, by `npm run bench:timeline`.

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
// jsdom has no 2D canvas: its getContext logs "not implemented" and returns null; return null quietly.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'gpu0@h0',
  thread: 'main',
  kind: 'fire',
  name: 'I1',
  iteration: 3,
  cycle: 4,
  start,
  end,
  ...over,
});

let root: Root;
let host: HTMLDivElement;
const realRect = HTMLElement.prototype.getBoundingClientRect;
beforeEach(() => {
  HTMLElement.prototype.getBoundingClientRect = () =>
    ({ x: 0, y: 0, left: 0, top: 0, width: 800, height: 400, right: 800, bottom: 400, toJSON: () => ({}) }) as DOMRect;
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
  HTMLElement.prototype.getBoundingClientRect = realRect;
});

// jsdom has no PointerEvent; React reads the same fields from a MouseEvent of that type.
const pointer = (type: string, init: MouseEventInit) => new MouseEvent(type, { ...init, bubbles: true });
const q = (testid: string) => host.querySelector(`[data-testid="${testid}"]`) as HTMLElement | null;
const frames = (n: number) =>
  act(
    () =>
      new Promise<void>((r) => {
        let k = 0;
        const f = () => (++k >= n ? r() : requestAnimationFrame(f));
        requestAnimationFrame(f);
      }),
  );

async function mount(measured: TraceColumns, predicted?: TraceColumns) {
  const ref = createRef<TimelineHandle>();
  await act(async () => root.render(<Timeline ref={ref} measured={measured} predicted={predicted} version={measured.version} />));
  await frames(2);
  return ref;
}

describe('Timeline', () => {
  it('opens on the whole trace, following it', async () => {
    const m = new TraceColumns();
    m.append([ev(0, 400), ev(500, 1000)]);
    const tl = await mount(m);
    const w = tl.current!.window();
    expect(w.t0).toBeLessThanOrEqual(0);
    expect(w.t1).toBeGreaterThanOrEqual(1000);
    expect((q('timeline-follow') as HTMLButtonElement).disabled).toBe(true);
    expect(q('timeline-lanes')!.dataset.lanes).toBe('1');
  });

  it('the wheel zooms about the pointer and stops following; Follow live fits again', async () => {
    const m = new TraceColumns();
    m.append([ev(0, 400), ev(500, 1000)]);
    const tl = await mount(m);
    const before = tl.current!.window();
    const canvas = q('timeline-canvas')!;
    // Pointer at the middle of the tracks (gutter 196 px, tracks 604 px wide).
    const x = 196 + 302;
    const anchor = before.t0 + 0.5 * (before.t1 - before.t0);
    await act(async () => canvas.dispatchEvent(new WheelEvent('wheel', { deltaY: -300, clientX: x, clientY: 50, bubbles: true, cancelable: true })));
    const after = tl.current!.window();
    expect(after.t1 - after.t0).toBeLessThan((before.t1 - before.t0) * 0.6);
    expect((anchor - after.t0) / (after.t1 - after.t0)).toBeCloseTo(0.5);
    expect((q('timeline-follow') as HTMLButtonElement).disabled).toBe(false);
    await act(async () => q('timeline-follow')!.click());
    expect(tl.current!.window()).toEqual(before);
  });

  it('shift+wheel and drag pan; W held zooms in, A held pans left', async () => {
    const m = new TraceColumns();
    m.append([ev(0, 1000)]);
    const tl = await mount(m);
    const canvas = q('timeline-canvas')!;
    const w0 = tl.current!.window();
    const span = w0.t1 - w0.t0;
    await act(async () =>
      canvas.dispatchEvent(new WheelEvent('wheel', { deltaY: 151, shiftKey: true, clientX: 400, clientY: 50, bubbles: true, cancelable: true })),
    );
    const w1 = tl.current!.window();
    expect(w1.t0 - w0.t0).toBeCloseTo((151 / 604) * span);
    expect(w1.t1 - w1.t0).toBeCloseTo(span);

    await act(async () => {
      canvas.dispatchEvent(pointer('pointerdown', { clientX: 400, clientY: 50 }));
      canvas.dispatchEvent(pointer('pointermove', { clientX: 400 + 302, clientY: 50 }));
      canvas.dispatchEvent(pointer('pointerup', { clientX: 400 + 302, clientY: 50 }));
    });
    const w2 = tl.current!.window();
    expect(w1.t0 - w2.t0).toBeCloseTo(span / 2);

    await act(async () => canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'w', bubbles: true })));
    await frames(5);
    await act(async () => canvas.dispatchEvent(new KeyboardEvent('keyup', { key: 'w', bubbles: true })));
    const w3 = tl.current!.window();
    expect(w3.t1 - w3.t0).toBeLessThan(span * 0.9);
    await act(async () => canvas.dispatchEvent(new KeyboardEvent('keydown', { key: 'a', bubbles: true })));
    await frames(3);
    await act(async () => canvas.dispatchEvent(new KeyboardEvent('keyup', { key: 'a', bubbles: true })));
    expect(tl.current!.window().t0).toBeLessThan(w3.t0);
  });

  it('hovering an event shows its node, thread, iteration, cycle, duration and bytes; the predicted band shows the plan', async () => {
    const m = new TraceColumns();
    m.append([ev(0, 500, { kind: 'transfer', name: 'bn_2', bytes: 16384, thread: 'send:cpu@h1' })]);
    const p = new TraceColumns();
    p.append([ev(500, 1000, { kind: 'transfer', name: 'bn_2', thread: 'send:cpu@h1', iteration: 7, cycle: 9 })]);
    const tl = await mount(m, p);
    tl.current!.setWindow({ t0: 0, t1: 1000 });
    const canvas = q('timeline-canvas')!;
    // Row 0: measured band from y = 22 + 2 to 40, predicted band below it.
    await act(async () => canvas.dispatchEvent(pointer('pointermove', { clientX: 196 + 100, clientY: 30 })));
    const tip = q('timeline-tooltip')!.textContent!;
    expect(tip).toContain('transfer bn_2');
    expect(tip).toContain('h0 · gpu0@h0 · send:cpu@h1');
    expect(tip).toContain('iteration 3 · cycle 4');
    expect(tip).toContain('500.0 µs');
    expect(tip).toContain('16,384 bytes');
    await act(async () => canvas.dispatchEvent(pointer('pointermove', { clientX: 196 + 450, clientY: 44 })));
    expect(q('timeline-tooltip')!.textContent).toContain('predicted transfer bn_2');
    expect(q('timeline-tooltip')!.textContent).toContain('iteration 7 · cycle 9');
    await act(async () => canvas.dispatchEvent(pointer('pointermove', { clientX: 100, clientY: 30 })));
    expect(q('timeline-tooltip')).toBeNull();
  });
});
