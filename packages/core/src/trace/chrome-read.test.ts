import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { toChromeTrace, traceMetadata } from './chrome.js';
import { readChromeTrace } from './chrome-read.js';
import type { TraceEvent } from './event.js';

const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

const depth = (start: number, value: number, name = 'bag depth'): TraceEvent => ({
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

/** A task-bag run's events: shares of projbp on two hosts, a requeued one, the bag's counters. */
function taskBagEvents(): TraceEvent[] {
  const fire = (host: string, share: number, attempt: number, start: number, end: number): TraceEvent => ({
    host,
    pe: `cpu@${host}`,
    thread: 'main',
    kind: 'fire',
    name: attempt > 1 ? `projbp[${share}]@0 (${attempt})` : `projbp[${share}]@0`,
    node: 'projbp',
    iteration: 0,
    cycle: -1,
    start,
    end,
    task: { id: `projbp[${share}]@0`, share, attempt },
  });
  return [
    depth(0, 4),
    depth(0, 0, 'in flight'),
    fire('h0', 0, 1, 1.25, 10.1),
    fire('h1', 1, 1, 1.5, 12.7),
    depth(1.5, 2),
    fire('h0', 2, 2, 10.1, 19.3),
    { ...fire('h0', 3, 1, 19.3, 19.2), task: { id: 'update@0', attempt: 1 }, name: 'update@0', node: 'update' },
    depth(20, 0),
  ];
}

const sortKey = (e: TraceEvent) => `${e.host}|${e.pe}|${e.thread}|${e.start}|${e.name}|${e.kind}`;
const sorted = (es: readonly TraceEvent[]) => [...es].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
const roundTrip = (events: readonly TraceEvent[]) => {
  const r = readChromeTrace(JSON.stringify(toChromeTrace(events)));
  if (!r.ok) throw new Error(JSON.stringify(r.diagnostics));
  return r.events;
};

describe('Chrome trace read back', () => {
  it('gives back a task-bag trace exactly: task id, share, attempt, counter samples, an end before its start', () => {
    const events = taskBagEvents();
    expect(sorted(roundTrip(events))).toEqual(sorted(events));
  });

  it("writes counters as C events holding only their value, on the coordinator's process", () => {
    const t = toChromeTrace(taskBagEvents());
    const c = t.traceEvents.filter((e) => e.ph === 'C');
    expect(c.map((e) => [e.name, e.ts, e.args])).toEqual([
      ['bag depth', 0, { value: 4 }],
      ['in flight', 0, { value: 0 }],
      ['bag depth', 1.5, { value: 2 }],
      ['bag depth', 20, { value: 0 }],
    ]);
    const proc = t.traceEvents.find((e) => e.name === 'process_name' && e.pid === c[0].pid);
    expect(proc?.args?.name).toBe('host coordinator');
    const requeued = t.traceEvents.find((e) => e.ph === 'X' && e.name === 'projbp[2]@0 (2)');
    expect(requeued?.args).toMatchObject({ task: 'projbp[2]@0', share: 2, attempt: 2 });
  });

  it("gives back a predicted trace with its metadata, the graph's flows left out", () => {
    const r = predict(piic, { nodeTimes: { P: 1e-4, C: 1e-4, I1: 1e-3, I2: 1e-3 }, iterations: 10 });
    if (!r.ok) throw new Error('does not predict');
    const p = r.prediction.overlap!;
    const metadata = traceMetadata(piic, { source: 'predicted', overlap: true });
    const back = readChromeTrace(JSON.stringify(toChromeTrace(p.timeline, p.ig, metadata)));
    expect(back.ok && back.metadata).toEqual(metadata);
    expect(back.ok && sorted(back.events)).toEqual(sorted(p.timeline));
  });

  it('round-trips any events (property)', () => {
    const name = fc.string({ minLength: 1, maxLength: 12 });
    const time = fc.double({ min: -1e6, max: 1e9, noNaN: true, noDefaultInfinity: true });
    const slice = fc.record({
      host: fc.constantFrom('h0', 'h1', '__proto__'),
      pe: fc.constantFrom('cpu', 'gpu0', 'a b'),
      thread: fc.constantFrom('main', 'send:cpu@h1', 'recv:gpu0@h0', 'odd thread'),
      kind: fc.constantFrom('fire' as const, 'transfer' as const, 'wait' as const, 'barrier' as const),
      name,
      iteration: fc.integer({ min: -1, max: 1000 }),
      cycle: fc.integer({ min: -1, max: 1000 }),
      start: time,
      end: time,
      node: fc.option(name, { nil: undefined }),
      bytes: fc.option(fc.integer({ min: 0, max: 2 ** 40 }), { nil: undefined }),
      task: fc.option(fc.record({ id: name, share: fc.option(fc.nat(200), { nil: undefined }), attempt: fc.integer({ min: 1, max: 3 }) }), { nil: undefined }),
    });
    const counter = fc
      .tuple(time, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('bag depth', 'in flight'))
      .map(([t, v, n]) => depth(t, v, n));
    fc.assert(
      fc.property(fc.array(fc.oneof(slice, counter), { maxLength: 40 }), (raw) => {
        // Absent optional fields are left out, as events are built; a PE id names its host (ids are unique across hosts).
        const events = raw.map((e) => JSON.parse(JSON.stringify(e.kind === 'counter' ? e : { ...e, pe: `${e.pe}@${e.host}` })) as TraceEvent);
        expect(sorted(roundTrip(events))).toEqual(sorted(events));
      }),
    );
  });

  it('names what is wrong with a file that is not a trace, never throwing', () => {
    const first = (text: string, limits = {}) => {
      const r = readChromeTrace(text, limits);
      return r.ok ? 'ok' : `${r.diagnostics[0].path}: ${r.diagnostics[0].message}`;
    };
    expect(first('{"traceEvents": [')).toMatch(/^trace: is not JSON/);
    expect(first('{"format": "pipeloom/v1"}')).toBe('traceEvents: is missing: this is not a Chrome trace');
    expect(first('[]')).toBe('ok');
    const base = toChromeTrace(taskBagEvents());
    const edit = (k: number, patch: object) => JSON.stringify({ ...base, traceEvents: base.traceEvents.map((e, i) => (i === k ? { ...e, ...patch } : e)) });
    const x = base.traceEvents.findIndex((e) => e.ph === 'X');
    const c = base.traceEvents.findIndex((e) => e.ph === 'C');
    expect(first(edit(x, { ts: 'soon' }))).toBe(`traceEvents[${x}].ts: must be a finite number, not "soon"`);
    expect(first(edit(x, { cat: 'nap' }))).toBe(`traceEvents[${x}].cat: must be one of fire, transfer, wait, barrier, not "nap"`);
    expect(first(edit(x, { tid: 999 }))).toMatch(/sits on process \d+ thread 999, which no process_name/);
    expect(first(edit(c, { args: { value: null } }))).toBe(`traceEvents[${c}].args.value: must be a finite number, not null`);
    expect(first(edit(x, { name: 'n'.repeat(2000) }))).toBe(`traceEvents[${x}].name: is 2000 characters long, more than 1000`);
    expect(first(JSON.stringify(base), { maxEvents: 3 })).toBe('traceEvents: holds more than 3 events');
    expect(first(JSON.stringify(base), { maxChars: 100 })).toMatch(/^trace: the file holds [\d,]+ characters, more than the 100/);
    // One bad field repeated in a million events is a short list.
    const many = JSON.stringify({ traceEvents: Array.from({ length: 1000 }, () => ({ ph: 'X', pid: 1 })) });
    const r = readChromeTrace(many);
    expect(!r.ok && r.diagnostics.length).toBe(20);
  });
});
