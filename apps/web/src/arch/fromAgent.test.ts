import { describe, expect, it } from 'vitest';
import { createProjectStore } from '../store/project.js';
import { emptyDocument } from '../document/documents.js';
import { changesFromAgent } from './fromAgent.js';
import type { PeReport, ProcessingElement, WrittenDocument } from '@pipeloom/core';
import { CPUS_PER_ROW, LINK_DEFAULTS, PE_SIZE, peSlot } from '../document/archDefaults.js';

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

  describe('an agent serving several cores', () => {
    const cores = (host: string, n: number): PeReport[] =>
      Array.from({ length: n }, (_, i) => ({ id: `cpu${i}@${host}`, kind: 'cpu' as const, name: 'AMD EPYC', vendor: 'x86_64', memory: 12 * 2 ** 30 }));
    const gpu = (host: string): PeReport => ({ id: `gpu0@${host}`, kind: 'gpu', name: 'llvmpipe', vendor: 'mesa', memory: 2 ** 30, adapter: 0 });
    const box = (p: ProcessingElement) => ({ x: p.position!.x, y: p.position!.y, w: PE_SIZE.width, h: PE_SIZE.height });
    const overlapping = (d: WrittenDocument) =>
      d.arch.pes.flatMap((p, i) =>
        d.arch.pes
          .slice(i + 1)
          .filter((q) => q.host === p.host && Math.abs(box(p).x - box(q).x) < PE_SIZE.width && Math.abs(box(p).y - box(q).y) < PE_SIZE.height)
          .map((q) => `${p.id}/${q.id}`),
      );

    it('fills the host with every core, a memory link between every two, PCIe from the first core to the GPU, with the memory the agent reports', () => {
      const s = createProjectStore(emptyDocument());
      const r = changesFromAgent(s.getState().doc, 'h1', 'ws://a', [...cores('h1', 4), gpu('h1')]);
      expect(r.skipped).toEqual([]);
      s.getState().dispatch(r.changes);
      const d = s.getState().doc;
      expect(d.arch.pes.filter((p) => p.host === 'h1').map((p) => [p.id, p.kind, p.memory])).toEqual([
        ['cpu0@h1', 'cpu', 12 * 2 ** 30],
        ['cpu1@h1', 'cpu', 12 * 2 ** 30],
        ['cpu2@h1', 'cpu', 12 * 2 ** 30],
        ['cpu3@h1', 'cpu', 12 * 2 ** 30],
        ['gpu0@h1', 'gpu', 2 ** 30],
      ]);
      expect(d.arch.links.map((l) => `${l.a}-${l.b}:${l.kind}`)).toEqual([
        'cpu0@h1-cpu1@h1:memory',
        'cpu0@h1-cpu2@h1:memory',
        'cpu0@h1-cpu3@h1:memory',
        'cpu1@h1-cpu2@h1:memory',
        'cpu1@h1-cpu3@h1:memory',
        'cpu2@h1-cpu3@h1:memory',
        'cpu0@h1-gpu0@h1:pcie',
      ]);
      const memory = d.arch.links.find((l) => l.kind === 'memory')!;
      expect([memory.bandwidth, memory.latency]).toEqual([LINK_DEFAULTS.memory.bandwidth, LINK_DEFAULTS.memory.latency]);
    });

    it.each([3, 4, 8, 16])('lays out %i cores in rows of four, no two PEs overlapping, the GPU under every core', (n) => {
      const d = createProjectStore(emptyDocument()).getState().doc;
      const r = changesFromAgent(d, 'h1', 'ws://a', [...cores('h1', n), gpu('h1')]);
      const s = createProjectStore(emptyDocument());
      s.getState().dispatch(r.changes);
      const after = s.getState().doc;
      expect(overlapping(after)).toEqual([]);
      const at = (id: string) => after.arch.pes.find((p) => p.id === id)!.position;
      for (let k = 0; k < n; k++) expect(at(`cpu${k}@h1`), `cpu${k}@h1`).toEqual(peSlot(k % CPUS_PER_ROW, Math.floor(k / CPUS_PER_ROW)));
      expect(at('gpu0@h1')).toEqual(peSlot(0, Math.ceil(n / CPUS_PER_ROW)));
    });

    it("a document's cpu@h0 is the agent's first core: cpu0@h0 is not added twice, the other cores join it by memory links", () => {
      // A new project's host h0 has its cpu@h0 already.
      const s = createProjectStore(emptyDocument());
      const r = changesFromAgent(s.getState().doc, 'h0', 'ws://a', [...cores('h0', 3), gpu('h0')]);
      expect(r.skipped).toEqual(['cpu0@h0: cpu@h0 in the architecture is this core (kept as it is)']);
      s.getState().dispatch(r.changes);
      const d = s.getState().doc;
      expect(d.arch.pes.map((p) => p.id)).toEqual(['cpu@h0', 'cpu1@h0', 'cpu2@h0', 'gpu0@h0']);
      expect(d.arch.links.map((l) => `${l.a}-${l.b}:${l.kind}`)).toEqual([
        'cpu@h0-cpu1@h0:memory',
        'cpu@h0-cpu2@h0:memory',
        'cpu1@h0-cpu2@h0:memory',
        'cpu@h0-gpu0@h0:pcie',
      ]);
      expect(overlapping(d)).toEqual([]);
    });

    it("an older agent's cpu@h0 is the document's cpu0@h0", () => {
      const s = createProjectStore({ ...emptyDocument(), arch: { hosts: [], pes: [], links: [] } });
      s.getState().dispatch(changesFromAgent(s.getState().doc, 'h0', 'ws://a', cores('h0', 2)).changes);
      const r = changesFromAgent(s.getState().doc, 'h0', 'ws://a', [{ ...cores('h0', 1)[0], id: 'cpu@h0' }]);
      expect(r).toEqual({ changes: [], skipped: ['cpu@h0: cpu0@h0 in the architecture is this core (kept as it is)'] });
    });
  });
});
