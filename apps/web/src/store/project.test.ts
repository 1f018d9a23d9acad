import { describe, expect, it } from 'vitest';
import { createProjectStore } from './project.js';
import { emptyDocument } from '../document/documents.js';
import { edgeKey, linkKey } from '../document/records.js';
import type { Change } from '../document/changes.js';

const piic: Change[] = [
  { type: 'node/add', node: { id: 'p', kernel: 'matrix.produce', params: { width: 8, height: 8 }, position: { x: 0, y: 0 } } },
  { type: 'node/add', node: { id: 'i1', kernel: 'matrix.increment', params: { width: 8, height: 8 } } },
  { type: 'edge/add', edge: { from: { node: 'p', port: 'out' }, to: { node: 'i1', port: 'in' } } },
];

function store() {
  const s = createProjectStore(emptyDocument());
  s.getState().dispatch(piic, { label: 'build' });
  return s;
}

describe('project store history', () => {
  it('undo and redo restore the document exactly, across graphs', () => {
    const s = store();
    const built = s.getState().doc;
    s.getState().dispatch({ type: 'host/add', host: { id: 'h1' } });
    s.getState().dispatch({ type: 'pe/add', pe: { id: 'cpu@h1', host: 'h1', kind: 'cpu', memory: 1024 } });
    s.getState().dispatch({ type: 'mapping/set', node: 'p', pe: 'cpu@h1' });
    expect(s.getState().doc.mapping).toEqual({ p: 'cpu@h1' });
    s.getState().undo();
    s.getState().undo();
    s.getState().undo();
    expect(s.getState().doc).toEqual(built);
    s.getState().redo();
    s.getState().redo();
    s.getState().redo();
    expect(s.getState().doc.mapping).toEqual({ p: 'cpu@h1' });
    expect(s.getState().doc.arch.pes.map((p) => p.id)).toEqual(['cpu@h0', 'cpu@h1']);
  });

  it("an edge's delay and init are set and removed as one undoable change each, restoring the edge exactly", () => {
    const s = store();
    const built = s.getState().doc;
    const key = edgeKey(built.app.edges[0]);
    s.getState().dispatch({ type: 'edge/update', key, delay: 'N', init: { node: 'seed' } });
    expect(s.getState().doc.app.edges[0]).toEqual({ ...built.app.edges[0], delay: 'N', init: { node: 'seed' } });
    s.getState().dispatch({ type: 'edge/update', key, delay: null, init: null });
    expect(s.getState().doc.app.edges[0]).toEqual(built.app.edges[0]);
    s.getState().undo();
    expect(s.getState().doc.app.edges[0].delay).toBe('N');
    s.getState().undo();
    expect(s.getState().doc).toEqual(built);
  });

  it('removing a node takes its edges and mapping entry, and one undo brings all back', () => {
    const s = store();
    s.getState().dispatch({ type: 'mapping/set', node: 'i1', pe: 'cpu@h0' });
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'node/remove', id: 'i1' });
    expect(s.getState().doc.app.edges).toEqual([]);
    expect(s.getState().doc.mapping).toEqual({});
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('removing a host removes its PEs, their links and the mapping onto them', () => {
    const s = store();
    s.getState().dispatch([
      { type: 'host/add', host: { id: 'h1' } },
      { type: 'pe/add', pe: { id: 'cpu@h1', host: 'h1', kind: 'cpu', memory: 1024 } },
      { type: 'link/add', link: { a: 'cpu@h0', b: 'cpu@h1', kind: 'ethernet', bandwidth: 1e9, latency: 1e-4, duplex: true } },
      { type: 'mapping/set', node: 'i1', pe: 'cpu@h1' },
    ]);
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'host/remove', id: 'h1' });
    const d = s.getState().doc;
    expect(d.arch.hosts.map((h) => h.id)).toEqual(['h0']);
    expect(d.arch.pes.map((p) => p.id)).toEqual(['cpu@h0']);
    expect(d.arch.links).toEqual([]);
    expect(d.mapping).toEqual({});
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('removing a host whose CPU and GPU are linked removes that link once; undo restores it', () => {
    const s = store();
    s.getState().dispatch([
      { type: 'pe/add', pe: { id: 'gpu0@h0', host: 'h0', kind: 'gpu', memory: 1024 } },
      { type: 'link/add', link: { a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie', bandwidth: 1e9, latency: 1e-5, duplex: true } },
      { type: 'mapping/set', node: 'i1', pe: 'gpu0@h0' },
    ]);
    const before = s.getState().doc;
    expect(s.getState().dispatch({ type: 'host/remove', id: 'h0' })).toBe(true);
    expect(s.getState().doc.arch).toEqual({ hosts: [], pes: [], links: [] });
    expect(s.getState().doc.mapping).toEqual({});
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('moves within one drag coalesce into one undo step and do not bump the compile revision', () => {
    const s = store();
    const rev = s.getState().revision;
    for (let x = 1; x <= 20; x++) s.getState().dispatch({ type: 'node/move', id: 'p', position: { x, y: x } }, { coalesce: 'drag-1' });
    s.getState().seal();
    expect(s.getState().revision).toBe(rev);
    expect(s.getState().doc.app.nodes[0].position).toEqual({ x: 20, y: 20 });
    s.getState().undo();
    expect(s.getState().doc.app.nodes[0].position).toEqual({ x: 0, y: 0 });
    s.getState().undo();
    expect(s.getState().doc.app.nodes).toEqual([]);
  });

  it('a sealed burst does not absorb the next one with the same key', () => {
    const s = store();
    s.getState().dispatch({ type: 'node/move', id: 'p', position: { x: 5, y: 5 } }, { coalesce: 'drag-1' });
    s.getState().seal();
    s.getState().dispatch({ type: 'node/move', id: 'p', position: { x: 9, y: 9 } }, { coalesce: 'drag-1' });
    s.getState().undo();
    expect(s.getState().doc.app.nodes[0].position).toEqual({ x: 5, y: 5 });
  });

  it('a new edit clears the redo stack', () => {
    const s = store();
    s.getState().undo();
    expect(s.getState().canRedo).toBe(true);
    s.getState().dispatch({ type: 'doc/update', patch: { name: 'x' } });
    expect(s.getState().canRedo).toBe(false);
  });

  it('renaming a node follows it through edges and mapping; undo renames back', () => {
    const s = store();
    s.getState().dispatch({ type: 'mapping/set', node: 'p', pe: 'cpu@h0' });
    s.getState().dispatch({ type: 'node/rename', id: 'p', to: 'P' });
    const d = s.getState().doc;
    expect(d.app.edges.map(edgeKey)).toEqual(['P.out->i1.in']);
    expect(d.mapping).toEqual({ P: 'cpu@h0' });
    s.getState().undo();
    expect(s.getState().doc.app.edges.map(edgeKey)).toEqual(['p.out->i1.in']);
  });

  it('renaming a PE follows it through links and mapping', () => {
    const s = store();
    s.getState().dispatch([
      { type: 'pe/add', pe: { id: 'gpu0@h0', host: 'h0', kind: 'gpu', memory: 1024 } },
      { type: 'link/add', link: { a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie', bandwidth: 1e9, latency: 1e-5, duplex: true } },
      { type: 'mapping/set', node: 'i1', pe: 'gpu0@h0' },
      { type: 'pe/rename', id: 'gpu0@h0', to: 'gpu1@h0' },
    ]);
    const d = s.getState().doc;
    expect(d.arch.links.map(linkKey)).toEqual(['cpu@h0<->gpu1@h0']);
    expect(d.mapping.i1).toBe('gpu1@h0');
  });

  it('a change naming a missing record is refused with a toast, leaving the document alone', () => {
    const s = store();
    const before = s.getState().doc;
    expect(s.getState().dispatch({ type: 'node/remove', id: 'nope' })).toBe(false);
    expect(s.getState().doc).toBe(before);
    expect(s.getState().toasts.at(-1)?.kind).toBe('error');
  });

  it('a batch that fails halfway applies nothing', () => {
    const s = store();
    const before = s.getState().doc;
    expect(
      s.getState().dispatch([
        { type: 'doc/update', patch: { name: 'y' } },
        { type: 'edge/add', edge: piic[2].type === 'edge/add' ? piic[2].edge : (null as never) },
      ]),
    ).toBe(false);
    expect(s.getState().doc).toBe(before);
  });
});

describe('loading a whole document', () => {
  const other = () => ({
    ...emptyDocument(),
    name: 'other',
    app: { nodes: [{ id: 'q', kernel: 'matrix.produce', params: { width: 8, height: 8 } }], edges: [] },
  });

  it('open is one undo step: undo brings back the replaced project with its edits, redo the opened one', () => {
    const s = store();
    s.getState().dispatch({ type: 'doc/update', patch: { name: 'mine' } });
    const mine = s.getState().doc;
    const loads = s.getState().loads;
    s.getState().select({ kind: 'node', id: 'p' });
    s.getState().open(other(), 'open other.json');
    expect(s.getState().doc.name).toBe('other');
    expect(s.getState().selection).toBeNull();
    expect(s.getState().undoLabel).toBe('open other.json');
    s.getState().undo();
    expect(s.getState().doc).toBe(mine);
    expect(s.getState().loads).toBe(loads + 2);
    // The edits made before the load are still below it.
    s.getState().undo();
    expect(s.getState().doc.name).toBe('untitled');
    s.getState().redo();
    s.getState().redo();
    expect(s.getState().doc.name).toBe('other');
  });

  it('an edit after an open does not merge into it, and undoing it keeps the opened project', () => {
    const s = store();
    s.getState().dispatch({ type: 'doc/update', patch: { name: 'typing' } }, { coalesce: 'name' });
    s.getState().open(other(), 'open other');
    s.getState().dispatch({ type: 'doc/update', patch: { name: 'other 2' } }, { coalesce: 'name' });
    s.getState().undo();
    expect(s.getState().doc.name).toBe('other');
    s.getState().undo();
    expect(s.getState().doc.name).toBe('typing');
  });

  it('load (the restored autosave at start) clears the history', () => {
    const s = store();
    s.getState().load(other());
    expect(s.getState().canUndo).toBe(false);
  });
});
