import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readDocument } from '../document/documents.js';
import type { Change } from '../document/changes.js';
import { groupChanges, ungroupChanges } from '../document/hierarchy.js';
import { graphAt } from '../document/graphs.js';
import { createProjectStore } from './project.js';

// Group and ungroup (document/hierarchy.ts) as the store dispatches them: each one undo step.

const example = (name: string) => readDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8')).doc!;

describe('one undo step each', () => {
  it('group, ungroup, a param edit and a rename inside a def each undo exactly and redo', () => {
    const doc = example('composite.json');
    const s = createProjectStore(doc);
    const steps: Change[][] = [];
    const g = groupChanges(doc, undefined, ['s1', 's2']);
    if ('error' in g) throw new Error(g.error);
    steps.push(g.changes);
    const states = [doc];
    const run = (cs: Change[]) => {
      expect(s.getState().dispatch(cs)).toBe(true);
      states.push(s.getState().doc);
    };
    run(g.changes);
    const u = ungroupChanges(s.getState().doc, undefined, 'group');
    if ('error' in u) throw new Error(u.error);
    run(u.changes);
    run([{ type: 'param/set', name: 'L0', value: '2 * W' }]);
    run([{ type: 'param/set', name: 'K', value: 3 }]);
    run([{ type: 'node/rename', id: 'add', to: 'sum', at: { def: 'stage' } }]);
    run([{ type: 'node/update', id: 'P', rates: { out: 2 } }]);
    const last = s.getState().doc;
    expect(graphAt(last, { def: 'stage' })!.outputs).toEqual([{ name: 'out', from: { node: 'sum', port: 'out' } }]);
    expect(last.mapping['s2/sum']).toBe('cpu@h1');
    expect(Object.keys(last.params!)).toEqual(['W', 'H', 'L0', 'K']);
    for (let i = states.length - 2; i >= 0; i--) {
      s.getState().undo();
      expect(s.getState().doc).toEqual(states[i]);
    }
    for (let i = 1; i < states.length; i++) {
      s.getState().redo();
      expect(s.getState().doc).toEqual(states[i]);
    }
  });

  it('removing a node inside a def takes its edges, bindings and the mapping entries of every instance', () => {
    const doc = example('composite.json');
    const s = createProjectStore(doc);
    s.getState().dispatch({ type: 'node/remove', id: 'add', at: { def: 'stage' } });
    const d = s.getState().doc;
    expect(graphAt(d, { def: 'stage' })).toMatchObject({ edges: [], inputs: [{ name: 'in', to: [{ node: 'inc', port: 'in' }] }], outputs: [] });
    expect(d.mapping['s2/add']).toBeUndefined();
    s.getState().undo();
    expect(s.getState().doc).toEqual(doc);
  });
});
