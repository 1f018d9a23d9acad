import { describe, expect, it } from 'vitest';
import { laneLabel, transferLanes, unionLength } from './lanes.js';
import { traceStats } from './stats.js';

const pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }> = {
  'cpu@h0': { host: 'h0', kind: 'cpu' },
  'gpu0@h0': { host: 'h0', kind: 'gpu' },
  'cpu@h1': { host: 'h1', kind: 'cpu' },
};
const pe = (id: string) => pes[id];

describe('transfer lanes', () => {
  it('a host-to-GPU copy and its read-back are drawn on the GPU, one lane per direction', () => {
    expect(transferLanes('cpu@h0', 'gpu0@h0', pe)).toEqual([{ pe: 'gpu0@h0', thread: 'recv:cpu@h0' }]);
    expect(transferLanes('gpu0@h0', 'cpu@h0', pe)).toEqual([{ pe: 'gpu0@h0', thread: 'send:cpu@h0' }]);
  });

  it('a host-to-host transfer is drawn on the sender and the receiver', () => {
    expect(transferLanes('cpu@h0', 'cpu@h1', pe)).toEqual([
      { pe: 'cpu@h0', thread: 'send:cpu@h1' },
      { pe: 'cpu@h1', thread: 'recv:cpu@h0' },
    ]);
  });

  it('labels read as arrows', () => {
    expect(laneLabel('gpu0@h0', 'send:cpu@h0')).toBe('gpu0@h0 -> cpu@h0');
    expect(laneLabel('gpu0@h0', 'recv:cpu@h0')).toBe('gpu0@h0 <- cpu@h0');
    expect(laneLabel('gpu0@h0', 'main')).toBe('gpu0@h0');
  });
});

describe('busy time', () => {
  it('counts overlapping intervals once', () => {
    expect(unionLength([{ start: 0, end: 10 }, { start: 2, end: 8 }, { start: 20, end: 25 }, { start: 24, end: 30 }])).toBe(20);
    expect(unionLength([])).toBe(0);
  });

  it('keeps a thread with concurrent transfers at or under 100% utilisation', () => {
    const base = { host: 'h0', pe: 'gpu0@h0', thread: 'recv:cpu@h0', kind: 'transfer' as const, name: 'bn_1', iteration: 0, cycle: 0 };
    const s = traceStats([
      { ...base, start: 0, end: 100 },
      { ...base, start: 0, end: 100, name: 'bn_2' },
    ]);
    expect(s.threads[0].busy).toBe(100);
    expect(s.threads[0].utilisation).toBe(1);
  });
});
