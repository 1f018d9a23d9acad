import { describe, expect, it } from 'vitest';
import { isMemoryLane, laneLabel, transferLanes } from './lanes.js';

const pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }> = {
  'cpu@h0': { host: 'h0', kind: 'cpu' },
  'gpu0@h0': { host: 'h0', kind: 'gpu' },
  'gpu1@h0': { host: 'h0', kind: 'gpu' },
  'cpu@h1': { host: 'h1', kind: 'cpu' },
  'cpu0@h2': { host: 'h2', kind: 'cpu' },
  'cpu1@h2': { host: 'h2', kind: 'cpu' },
};
const pe = (id: string) => pes[id];

describe('transfer lanes', () => {
  it('a host-to-GPU copy and its read-back are drawn on the GPU, one lane per direction', () => {
    expect(transferLanes('cpu@h0', 'gpu0@h0', pe)).toEqual([{ pe: 'gpu0@h0', thread: 'recv:cpu@h0' }]);
    expect(transferLanes('gpu0@h0', 'cpu@h0', pe)).toEqual([{ pe: 'gpu0@h0', thread: 'send:cpu@h0' }]);
  });

  it('a GPU-to-GPU copy of one host (staged: read-back, then upload) is drawn on both GPUs, as the agent records it', () => {
    expect(transferLanes('gpu0@h0', 'gpu1@h0', pe)).toEqual([
      { pe: 'gpu0@h0', thread: 'send:gpu1@h0' },
      { pe: 'gpu1@h0', thread: 'recv:gpu0@h0' },
    ]);
  });

  it('a host-to-host transfer is drawn on the sender and the receiver', () => {
    expect(transferLanes('cpu@h0', 'cpu@h1', pe)).toEqual([
      { pe: 'cpu@h0', thread: 'send:cpu@h1' },
      { pe: 'cpu@h1', thread: 'recv:cpu@h0' },
    ]);
  });

  it('a copy between two CPU PEs of one host is drawn on its own lane, the send lane of the sender, and labelled a memory copy', () => {
    expect(transferLanes('cpu0@h2', 'cpu1@h2', pe)).toEqual([{ pe: 'cpu0@h2', thread: 'send:cpu1@h2' }]);
    expect(transferLanes('cpu1@h2', 'cpu0@h2', pe)).toEqual([{ pe: 'cpu1@h2', thread: 'send:cpu0@h2' }]);
    expect(laneLabel('cpu0@h2', 'send:cpu1@h2', pe)).toBe('cpu0@h2 -> cpu1@h2 (memory)');
    // Other lanes keep their labels, with or without knowing the PEs.
    expect(laneLabel('cpu@h0', 'send:cpu@h1', pe)).toBe('cpu@h0 -> cpu@h1');
    expect(laneLabel('gpu0@h0', 'send:cpu@h0', pe)).toBe('gpu0@h0 -> cpu@h0');
    expect(laneLabel('cpu0@h2', 'main', pe)).toBe('cpu0@h2');
    expect(laneLabel('cpu0@h2', 'send:cpu1@h2')).toBe('cpu0@h2 -> cpu1@h2');
    expect(isMemoryLane('cpu0@h2', 'send:cpu1@h2', pe)).toBe(true);
    expect(isMemoryLane('cpu0@h2', 'send:unknown', pe)).toBe(false);
  });

  it('labels read as arrows', () => {
    expect(laneLabel('gpu0@h0', 'send:cpu@h0')).toBe('gpu0@h0 -> cpu@h0');
    expect(laneLabel('gpu0@h0', 'recv:cpu@h0')).toBe('gpu0@h0 <- cpu@h0');
    expect(laneLabel('gpu0@h0', 'main')).toBe('gpu0@h0');
  });
});
