import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, type WrittenDocument } from '@pipeloom/core';
import { readDocument } from './documents.js';
import { applyChanges } from './changes.js';
import { groupChanges, ungroupChanges } from './hierarchy.js';
import { graphAt, instancePrefixes, levelAt } from './graphs.js';

const example = (name: string) => readDocument(readFileSync(new URL(`../../../../examples/${name}`, import.meta.url), 'utf8')).doc!;

function apply(doc: WrittenDocument, r: ReturnType<typeof groupChanges>): WrittenDocument {
  if ('error' in r) throw new Error(r.error);
  return applyChanges(doc, r.changes).doc;
}

/** An implementation graph as comparable text: typed arrays as lists, ids renamed by `rename`. */
function igText(doc: WrittenDocument, rename: (s: string) => string = (s) => s): string {
  const r = compile(doc);
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return rename(JSON.stringify(r.ig, (_, v) => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v)));
}

describe('group a selection into a composite', () => {
  it('P-I-I-C: I1 and I2 become one inline composite with the boundary edges as its ports, mapping kept per inner node', () => {
    const doc = example('piic.json');
    const grouped = apply(doc, groupChanges(doc, undefined, ['I1', 'I2']));
    expect(grouped.app.nodes.map((n) => n.id)).toEqual(['P', 'group', 'C']);
    const g = grouped.app.nodes[1];
    expect(g.graph?.inputs).toEqual([{ name: 'in', to: [{ node: 'I1', port: 'in' }] }]);
    expect(g.graph?.outputs).toEqual([{ name: 'out', from: { node: 'I2', port: 'out' } }]);
    expect(g.graph?.edges).toEqual([{ from: { node: 'I1', port: 'out' }, to: { node: 'I2', port: 'in' } }]);
    expect(grouped.app.edges).toEqual([
      { from: { node: 'P', port: 'out' }, to: { node: 'group', port: 'in' } },
      { from: { node: 'group', port: 'out' }, to: { node: 'C', port: 'in' } },
    ]);
    expect(grouped.mapping).toEqual({ P: 'cpu@h0', 'group/I1': 'gpu0@h0', 'group/I2': 'gpu0@h1', C: 'cpu@h1' });
    // Inner positions are relative to the group's.
    expect(g.position).toEqual(doc.app.nodes[1].position);
    expect(g.graph?.nodes[0].position).toEqual({ x: 0, y: 0 });
  });

  it('compiles to the same implementation graph as before grouping (ids aside)', () => {
    for (const [file, ids] of [
      ['piic.json', ['I1', 'I2']],
      ['composite.json', ['s1', 's2']],
      ['split-join.json', ['S', 'C']],
    ] as const) {
      const doc = example(file);
      const grouped = apply(doc, groupChanges(doc, undefined, [...ids]));
      expect(
        igText(grouped, (s) => s.replaceAll('group/', '')),
        file,
      ).toBe(igText(doc));
    }
  });

  it('ungroup after group restores the document exactly', () => {
    for (const [file, ids] of [
      ['piic.json', ['I1', 'I2']],
      ['piic.json', ['P', 'I1']],
      ['composite.json', ['P', 's1']],
      ['split-join.json', ['P', 'S', 'C']],
    ] as const) {
      const doc = example(file);
      const grouped = apply(doc, groupChanges(doc, undefined, [...ids]));
      expect(apply(grouped, ungroupChanges(grouped, undefined, 'group')), `${file} ${ids}`).toEqual(doc);
    }
  });

  it('one producer feeding two grouped nodes is one input bound to both', () => {
    const doc = example('composite.json');
    // Inside defs.stage: the stage's own input feeds inc and add; group them and the stage's binding goes through the group.
    const at = { def: 'stage' };
    const grouped = apply(doc, groupChanges(doc, at, ['inc', 'add']));
    const stage = graphAt(grouped, at)!;
    expect(stage.inputs).toEqual([{ name: 'in', to: [{ node: 'group', port: 'in' }] }]);
    expect(stage.outputs).toEqual([{ name: 'out', from: { node: 'group', port: 'out' } }]);
    expect(stage.nodes[0].graph?.inputs).toEqual([
      {
        name: 'in',
        to: [
          { node: 'inc', port: 'in' },
          { node: 'add', port: 'b' },
        ],
      },
    ]);
    // The whole-composite and per-node mapping of both instances moved inside the group.
    expect(grouped.mapping).toEqual({ P: 'cpu@h0', s1: 'gpu0@h0', s2: 'gpu0@h1', 's2/group/add': 'cpu@h1', C: 'cpu@h1' });
    expect(igText(grouped, (s) => s.replaceAll('group/', ''))).toBe(igText(doc));
    expect(apply(grouped, ungroupChanges(grouped, at, 'group'))).toEqual(doc);
  });
});

describe('ungroup a composite', () => {
  it('inlines a def instance with its params written in, ids that would collide prefixed, the whole-composite mapping spread', () => {
    const doc = example('composite.json');
    const once = apply(doc, ungroupChanges(doc, undefined, 's1'));
    expect(once.app.nodes.map((n) => n.id)).toEqual(['P', 'inc', 'add', 's2', 'C']);
    expect(once.app.nodes[1].params).toEqual({ width: 'W', height: 'H', nb_loop: '(L0)' });
    const twice = apply(once, ungroupChanges(once, undefined, 's2'));
    expect(twice.app.nodes.map((n) => n.id)).toEqual(['P', 'inc', 'add', 's2_inc', 's2_add', 'C']);
    expect(twice.app.nodes[3].params).toEqual({ width: 'W', height: 'H', nb_loop: '(L0 + 1)' });
    expect(twice.mapping).toEqual({ P: 'cpu@h0', inc: 'gpu0@h0', add: 'gpu0@h0', s2_inc: 'gpu0@h1', s2_add: 'cpu@h1', C: 'cpu@h1' });
    const ids = (s: string) => s.replaceAll('s1/', '').replaceAll('s2/inc', 's2_inc').replaceAll('s2/add', 's2_add');
    expect(igText(twice)).toBe(ids(igText(doc)));
  });

  it('refuses a node that is not a composite', () => {
    const doc = example('piic.json');
    expect(ungroupChanges(doc, undefined, 'I1')).toEqual({ error: 'I1 is not a composite node' });
  });
});

describe('levels', () => {
  it('a level of instance ids resolves to where its graph is written; a def is instantiated under each of its instances', () => {
    const doc = example('composite.json');
    expect(levelAt(doc, ['s2'])).toEqual({ def: 'stage' });
    expect(levelAt(doc, ['P'])).toBeUndefined();
    expect(instancePrefixes(doc, { def: 'stage' })).toEqual(['s1/', 's2/']);
    const grouped = apply(doc, groupChanges(doc, undefined, ['s1']));
    expect(levelAt(grouped, ['group', 's1'])).toEqual({ def: 'stage' });
    expect(levelAt(grouped, ['group'])).toEqual({ def: undefined, inline: ['group'] });
    expect(instancePrefixes(grouped, { def: 'stage' })).toEqual(['group/s1/', 's2/']);
  });
});
