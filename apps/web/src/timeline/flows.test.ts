import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument, predict, TraceColumns } from '@pipeloom/core';
import { FlowIndex } from './flows.js';

// Flow arrows on the P-I-I-C plan: every transfer into a buffer points at the firing that
// reads it in the same iteration (the predictor names nodes and buffers as the agents do).

const parsed = parseDocument(readFileSync(new URL('../../../../examples/piic.json', import.meta.url), 'utf8'));
if (!parsed.ok) throw new Error('examples/piic.json does not parse');
const r = predict(parsed.doc, { timelineEvents: 5000 });
if (!r.ok) throw new Error('examples/piic.json does not predict');
const plan = r.prediction.overlap!;
const c = new TraceColumns();
c.append(plan.timeline);

describe('flow arrows', () => {
  it('each transfer feeds the firing of the node reading its buffer, same iteration, starting after it ends', () => {
    const index = new FlowIndex(c, plan.ig);
    const all = c.lanes().map((l) => l.index);
    const flows = index.visible(all, { t0: c.minStart, t1: c.maxEnd }, 10_000);
    expect(flows.length).toBeGreaterThan(0);
    const readers = new Set(flows.map((f) => c.names[c.node[f.to]]));
    // P's data crosses to I1 (h0's GPU), I1's to I2 on h1, I2's to C.
    expect([...readers].sort()).toEqual(expect.arrayContaining(['C', 'I1', 'I2']));
    for (const f of flows) {
      expect(c.kind[f.from]).toBe(1);
      expect(c.kind[f.to]).toBe(0);
      expect(c.iteration[f.to]).toBe(c.iteration[f.from]);
      expect(c.start[f.to]).toBeGreaterThanOrEqual(c.end[f.from] - 1e-6);
    }
  });

  it('only transfers in the window, at most `max`, and firings appended later are found too', () => {
    const half = new TraceColumns();
    const events = [...plan.timeline].sort((a, b) => a.start - b.start);
    half.append(events.filter((e) => e.kind !== 'fire'));
    const index = new FlowIndex(half, plan.ig);
    const lanes = () => half.lanes().map((l) => l.index);
    expect(index.visible(lanes(), { t0: half.minStart, t1: half.maxEnd })).toEqual([]);
    half.append(events.filter((e) => e.kind === 'fire'));
    expect(index.visible(lanes(), { t0: half.minStart, t1: half.maxEnd }, 3)).toHaveLength(3);
    expect(index.visible(lanes(), { t0: half.maxEnd + 1, t1: half.maxEnd + 2 })).toEqual([]);
  });
});
