import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { predict } from '../predict/predict.js';
import { chromeSliceCounts, pajeHostFields, pajeStateCounts, pjDump } from '../testing/pajeng.js';
import { toChromeTrace, traceMetadata } from './chrome.js';
import type { TraceEvent } from './event.js';
import { toPajeTrace } from './paje.js';

// Each trace is read back by PajeNG's pj_dump (Debian's pajeng), not by a parser of ours.

const piic = JSON.parse(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'cpu0',
  thread: 'main',
  kind: 'fire',
  name: 'A',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});

describe('Paje trace export', () => {
  it('pj_dump reads every Chrome slice of a predicted run as one state on the same lane, and every flow as one link', () => {
    // Barrier mode with overlap: consecutive transfers of one lane touch within float noise.
    const r = predict(piic, { iterations: 20, sync: 'barrier', overlap: true });
    if (!r.ok) throw new Error('P-I-I-C must predict');
    const p = r.prediction.overlap!;
    const chrome = toChromeTrace(p.timeline, p.ig);
    const d = pjDump(toPajeTrace(p.timeline, p.ig));
    expect(pajeStateCounts(d)).toEqual(chromeSliceCounts(chrome));
    expect(d.links).toHaveLength(chrome.traceEvents.filter((e) => e.ph === 's').length);
    // Float noise is no crossing: no overflow lane.
    expect(d.containers.filter((c) => / \(\d+\)$/.test(c.name))).toEqual([]);
    // Same times (seconds, to the nanosecond) and names as the Chrome slices.
    const slices = chrome.traceEvents
      .filter((e) => e.ph === 'X')
      .map((e) => `${e.name} ${e.cat} ${e.args?.iteration} ${(e.ts! / 1e6).toFixed(6)} ${(e.dur! / 1e6).toFixed(6)}`);
    const states = d.states.map((s) => `${s.value} ${s.kind} ${s.iteration} ${s.start.toFixed(6)} ${(s.end - s.start).toFixed(6)}`);
    expect(states.sort()).toEqual(slices.sort());
  });

  it("nests hosts, PEs and lanes, and lists the graph's lanes even where no event fell", () => {
    const r = predict(piic, { iterations: 4 });
    if (!r.ok) throw new Error('P-I-I-C must predict');
    const p = r.prediction.overlap!;
    const d = pjDump(toPajeTrace([], p.ig));
    const at = (type: string) => d.containers.filter((c) => c.type === type);
    expect(
      at('Host')
        .map((c) => c.name)
        .sort(),
    ).toEqual(['host h0', 'host h1']);
    expect(at('PE').find((c) => c.name === 'gpu0@h0')?.parent).toBe('host h0');
    expect(at('Lane').find((c) => c.name === 'cpu@h0 send:cpu@h1')?.parent).toBe('cpu@h0');
    expect(at('Lane').map((c) => c.name)).toContain('gpu0@h0 main');
    expect(d.states).toEqual([]);
  });

  it('nested events are imbricated; one that crosses another goes on an overflow lane with its own times', () => {
    const events = [ev(0, 10, { kind: 'barrier', name: 'barrier fire' }), ev(2, 5, { name: 'B' }), ev(8, 15, { name: 'C' }), ev(15, 16, { name: 'D' })];
    const d = pjDump(toPajeTrace(events));
    const by = new Map(d.states.map((s) => [s.value, s]));
    expect(by.get('barrier fire')).toMatchObject({ container: 'cpu0 main', start: 0, end: 10e-6, imbrication: 0, kind: 'barrier' });
    expect(by.get('B')).toMatchObject({ container: 'cpu0 main', start: 2e-6, end: 5e-6, imbrication: 1 });
    expect(by.get('C')).toMatchObject({ container: 'cpu0 main (2)', start: 8e-6, end: 15e-6 });
    // Once nothing is open, the lane itself takes events again.
    expect(by.get('D')).toMatchObject({ container: 'cpu0 main', start: 15e-6, end: 16e-6 });
    expect(d.containers.find((c) => c.name === 'cpu0 main (2)')?.parent).toBe('cpu0');
  });

  it("keeps each event's fields, a name with quotes, commas or line breaks, and the metadata on each host", () => {
    const events = [
      ev(0, 1.5, {
        kind: 'transfer',
        name: 'bn_4 gpu0@h0->host (nvlink, staged through "host")\n',
        buffer: 'bn_4',
        from: 'bn_3',
        iteration: 3,
        cycle: 5,
        bytes: 4096,
      }),
      ev(-2, 0, { kind: 'wait', name: 'wait bn_4', buffer: 'bn_4', thread: 'recv:gpu1', pe: 'gpu0' }),
    ];
    const metadata = traceMetadata(
      { ...piic, name: 'P-I-I-C "two", hosts' },
      { source: 'measured', overlap: true, agents: [{ host: 'h0', agentVersion: '0.1.0' }] },
    );
    const text = toPajeTrace(events, undefined, metadata);
    expect(pajeHostFields(text).get('host h0')).toEqual({
      source: 'measured',
      document: "P-I-I-C 'two', hosts",
      hash: metadata.document.hash,
      strategy: 'overlap',
      sync: 'barrier',
      calibration: 'none',
      agent: '0.1.0',
    });
    const d = pjDump(text);
    const [transfer] = d.states.filter((s) => s.kind === 'transfer');
    expect(transfer).toMatchObject({
      value: "bn_4 gpu0@h0->host (nvlink, staged through 'host') ",
      iteration: 3,
      cycle: 5,
      bytes: 4096,
      node: '-',
      buffer: 'bn_4',
      start: 0,
      end: 1.5e-6,
    });
    // A measured event before the run's zero (another host's clock): containers start with it.
    expect(d.states.find((s) => s.kind === 'wait')).toMatchObject({ container: 'gpu0 recv:gpu1', start: -2e-6, end: 0 });
  });

  it("draws a link per data flow, from the writer's start to the reader's, on their lanes", () => {
    const events = [
      ev(0, 1, { name: 'P', node: 'P' }),
      ev(1, 2, { kind: 'transfer', name: 'bn_2', buffer: 'bn_2', from: 'bn_1', thread: 'send:cpu1' }),
      ev(3, 4, { kind: 'transfer', name: 'bn_3', buffer: 'bn_3', from: 'bn_2', pe: 'cpu1', host: 'h1', thread: 'recv:cpu0' }),
    ];
    const d = pjDump(toPajeTrace(events));
    // Without the graph: transfer -> next transfer of the same data.
    expect(d.links).toEqual([{ start: 1e-6, end: 3e-6, from: 'cpu0 send:cpu1', to: 'cpu1 recv:cpu0', key: 'f1' }]);
  });

  it("writes counter samples as variables on their lane, holding each value until the next sample, and a task's label as its state", () => {
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
    const events = [
      sample(0, 4),
      sample(0, 0, 'in flight'),
      ev(1, 5, { name: 'projbp[0]@0 (2)', node: 'projbp', task: { id: 'projbp[0]@0', share: 0, attempt: 2 } }),
      sample(2, 3),
      sample(2, 1, 'in flight'),
      sample(6, 0),
    ];
    const d = pjDump(toPajeTrace(events));
    expect(d.states.map((s) => `${s.container} ${s.value}`)).toEqual(['cpu0 main projbp[0]@0 (2)']);
    expect(d.containers.find((c) => c.name === 'bag bag')).toMatchObject({ parent: 'bag', type: 'Lane' });
    const v = (type: string) =>
      d.variables.filter((x) => x.type === type).map((x) => [x.start * 1e6, x.end * 1e6, x.value].map((n) => Math.round(n * 1e3) / 1e3));
    expect(v('bag depth')).toEqual([
      [0, 2, 4],
      [2, 6, 3],
      [6, 6, 0],
    ]);
    expect(v('in flight')).toEqual([
      [0, 2, 0],
      [2, 6, 1],
    ]);
  });
});
