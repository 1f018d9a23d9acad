import { describe, expect, it } from 'vitest';
import { createProjectStore, emptyDocument } from '../store/project.js';
import { changesFromAgent } from './fromAgent.js';
import type { PeReport } from '@pipeloom/core';

const report: PeReport[] = [
  { id: 'cpu@h1', kind: 'cpu', name: 'x86', vendor: 'x', memory: 2 ** 34 },
  { id: 'gpu0@h1', kind: 'gpu', name: 'llvmpipe', vendor: 'mesa', memory: 2 ** 30, adapter: 0 },
  { id: 'gpu1@h1', kind: 'gpu', name: 'llvmpipe', vendor: 'mesa', memory: 2 ** 30, adapter: 1 },
];

describe('add from agent', () => {
  it('creates the host with its agent URL, one PE per report and PCIe from its CPU to each GPU, as one undo step', () => {
    const s = createProjectStore(emptyDocument());
    const before = s.getState().doc;
    s.getState().dispatch(changesFromAgent(before, 'h1', 'ws://127.0.0.1:7071', report));
    const d = s.getState().doc;
    expect(d.arch.hosts.find((h) => h.id === 'h1')?.agent).toBe('ws://127.0.0.1:7071');
    expect(d.arch.pes.filter((p) => p.host === 'h1').map((p) => [p.id, p.kind, p.device])).toEqual([
      ['cpu@h1', 'cpu', undefined],
      ['gpu0@h1', 'gpu', 0],
      ['gpu1@h1', 'gpu', 1],
    ]);
    expect(d.arch.links.map((l) => `${l.a}-${l.b}:${l.kind}`)).toEqual(['cpu@h1-gpu0@h1:pcie', 'cpu@h1-gpu1@h1:pcie']);
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('asking again adds nothing new and keeps the user\'s edits', () => {
    const s = createProjectStore(emptyDocument());
    s.getState().dispatch(changesFromAgent(s.getState().doc, 'h0', 'ws://a', report));
    s.getState().dispatch({ type: 'pe/update', id: 'cpu@h0', patch: { memory: 123 } });
    expect(changesFromAgent(s.getState().doc, 'h0', 'ws://a', report)).toEqual([]);
    expect(s.getState().doc.arch.pes.find((p) => p.id === 'cpu@h0')?.memory).toBe(123);
  });
});
