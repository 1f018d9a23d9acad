import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowerDocument } from '@pipeloom/core';
import { readDocument } from '../document/documents.js';
import { createProjectStore } from './project.js';

// Mapping entries that are PE lists (a node with tasks): the store's changes keep the document
// valid and every change undoes in one step.

const mlem = () => readDocument(readFileSync(new URL('../../../../examples/mlem.json', import.meta.url), 'utf8')).doc!;

describe('PE lists in the store', () => {
  it('mlem.json opens with projbp on its two PEs and tasks "K", and saves them as written', () => {
    const doc = mlem();
    expect(doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0']);
    expect(doc.app.nodes.find((n) => n.id === 'projbp')?.tasks).toBe('K');
    // Save writes the document as JSON; reading it back gives the same list.
    expect(readDocument(JSON.stringify(doc)).doc!.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0']);
  });

  it('a list set, undone and redone restores the entry exactly', () => {
    const s = createProjectStore(mlem());
    s.getState().dispatch({ type: 'pe/add', pe: { id: 'cpu@h1', host: 'h0', kind: 'cpu', memory: 2 ** 30 } });
    s.getState().dispatch({ type: 'mapping/set', node: 'projbp', pe: ['gpu0@h0', 'cpu@h0', 'cpu@h1'] });
    expect(s.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0', 'cpu@h1']);
    s.getState().undo();
    expect(s.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0']);
    s.getState().redo();
    expect(s.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0', 'cpu@h1']);
  });

  it("removing tasks turns the node's list back to its first PE in the same undo step, and the document lowers", () => {
    const s = createProjectStore(mlem());
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'node/update', id: 'projbp', tasks: null }, { label: 'projbp: no tasks' });
    const after = s.getState().doc;
    expect(after.app.nodes.find((n) => n.id === 'projbp')?.tasks).toBeUndefined();
    expect(after.mapping.projbp).toBe('gpu0@h0');
    expect(lowerDocument(after).diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
    expect(s.getState().canUndo).toBe(false);
  });

  it('setting tasks leaves the mapping as it is', () => {
    const s = createProjectStore(mlem());
    s.getState().dispatch({ type: 'node/update', id: 'projbp', tasks: 6 });
    expect(s.getState().doc.app.nodes.find((n) => n.id === 'projbp')?.tasks).toBe(6);
    expect(s.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0']);
  });

  it('deleting a PE of a list keeps the others (one left: a plain PE id); one undo brings the list back', () => {
    const s = createProjectStore(mlem());
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'pe/remove', id: 'gpu0@h0' });
    expect(s.getState().doc.mapping).toEqual({ phantom: 'cpu@h0', projbp: 'cpu@h0' });
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('deleting a host removes each of its PEs from the lists, and entries left with none', () => {
    const s = createProjectStore(mlem());
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'host/remove', id: 'h0' });
    expect(s.getState().doc.mapping).toEqual({});
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });

  it('renaming a PE renames it inside lists; renaming the node keeps its list', () => {
    const s = createProjectStore(mlem());
    s.getState().dispatch({ type: 'pe/rename', id: 'cpu@h0', to: 'host-cpu' });
    expect(s.getState().doc.mapping.projbp).toEqual(['gpu0@h0', 'host-cpu']);
    s.getState().dispatch({ type: 'node/rename', id: 'projbp', to: 'pb' });
    expect(s.getState().doc.mapping.pb).toEqual(['gpu0@h0', 'host-cpu']);
    expect(s.getState().doc.mapping.projbp).toBeUndefined();
  });

  it('deleting the node takes its list with it, and undo restores both', () => {
    const s = createProjectStore(mlem());
    const before = s.getState().doc;
    s.getState().dispatch({ type: 'node/remove', id: 'projbp' });
    expect(s.getState().doc.mapping.projbp).toBeUndefined();
    s.getState().undo();
    expect(s.getState().doc).toEqual(before);
  });
});
