import { describe, expect, it } from 'vitest';
import { createProjectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
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
    s.getState().dispatch(changesFromAgent(before, 'h1', 'ws://127.0.0.1:7071', report).changes);
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

  it('emulated GPUs sharing adapter 0 stay one PE each, under the ids and with the memory the agent reports', () => {
    const emulated: PeReport[] = [
      { id: 'cpu@h2', kind: 'cpu', name: 'x86', vendor: 'x', memory: 3 * 2 ** 30 },
      ...[0, 1, 2].map((i) => ({ id: `gpu${i}@h2`, kind: 'gpu' as const, name: 'llvmpipe', vendor: 'mesa', memory: (i + 1) * 2 ** 28, adapter: 0 })),
    ];
    const s = createProjectStore(emptyDocument());
    const r = changesFromAgent(s.getState().doc, 'h2', 'ws://b', emulated);
    expect(r.skipped).toEqual([]);
    s.getState().dispatch(r.changes);
    const d = s.getState().doc;
    expect(d.arch.pes.filter((p) => p.host === 'h2').map((p) => [p.id, p.device, p.memory])).toEqual([
      ['cpu@h2', undefined, 3 * 2 ** 30],
      ['gpu0@h2', 0, 2 ** 28],
      ['gpu1@h2', 0, 2 * 2 ** 28],
      ['gpu2@h2', 0, 3 * 2 ** 28],
    ]);
    expect(d.arch.links.map((l) => `${l.a}-${l.b}`)).toEqual(['cpu@h2-gpu0@h2', 'cpu@h2-gpu1@h2', 'cpu@h2-gpu2@h2']);
  });

  it("asking again adds nothing new, keeps the user's edits and says why each PE was not added", () => {
    const s = createProjectStore(emptyDocument());
    s.getState().dispatch(
      changesFromAgent(
        s.getState().doc,
        'h0',
        'ws://a',
        report.map((p) => ({ ...p, id: p.id.replace('@h1', '@h0') })),
      ).changes,
    );
    s.getState().dispatch({ type: 'pe/update', id: 'cpu@h0', patch: { memory: 123 } });
    const again = changesFromAgent(
      s.getState().doc,
      'h0',
      'ws://a',
      report.map((p) => ({ ...p, id: p.id.replace('@h1', '@h0') })),
    );
    expect(again.changes).toEqual([]);
    expect(again.skipped).toEqual([
      'cpu@h0: already in the architecture (kept as it is)',
      'gpu0@h0: already in the architecture (kept as it is)',
      'gpu1@h0: already in the architecture (kept as it is)',
    ]);
    expect(s.getState().doc.arch.pes.find((p) => p.id === 'cpu@h0')?.memory).toBe(123);
  });

  it('a reported PE of another host is skipped with the reason', () => {
    const r = changesFromAgent(emptyDocument(), 'h1', 'ws://a', [...report, { id: 'gpu0@h9', kind: 'gpu', name: 'x', vendor: 'y', memory: 1, adapter: 0 }]);
    expect(r.skipped).toEqual(["gpu0@h9: not a PE of host h1 (an agent's PE ids end in @h1)"]);
    expect(r.changes.filter((c) => c.type === 'pe/add')).toHaveLength(3);
  });
});
