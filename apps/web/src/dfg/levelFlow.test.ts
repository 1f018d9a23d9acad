import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WrittenDocument } from '@pipeloom/core';
import { readDocument } from '../document/documents.js';
import { applyChanges } from '../document/changes.js';
import { estimated, expandChanges, levelFlow } from './levelFlow.js';

const doc = readDocument(readFileSync(new URL('../../../../examples/composite.json', import.meta.url), 'utf8')).doc!;

const flow = (d: WrittenDocument, at = {}, prefix = '') =>
  levelFlow({
    doc: d,
    at,
    prefix,
    sizeOf: (_, n) => estimated(d, n),
    node: (n) => ({ type: n.kernel ? 'kernel' : 'composite', data: {} }),
    group: () => ({ type: 'group', data: {} }),
    edge: () => ({}),
  });

describe('the DFG canvas at a level', () => {
  it('draws a collapsed composite as one node with its ports, edges to them as written', () => {
    const f = flow(doc);
    expect(f.nodes.map((n) => `${n.id}:${n.type}`)).toEqual(['P:kernel', 's1:composite', 's2:composite', 'C:kernel']);
    expect(f.edges.map((e) => `${e.source}.${e.sourceHandle}->${e.target}.${e.targetHandle}`)).toEqual(['P.out->s1.in', 's1.out->s2.in', 's2.out->C.in']);
  });

  it('expanded in place: a group holding the inner nodes, edges to its ports drawn to the inner ports bound to them, the nodes to its right moved aside', () => {
    const s1 = doc.app.nodes[1];
    const changes = expandChanges(doc, undefined, s1, (_, n) => estimated(doc, n));
    const expanded = applyChanges(doc, changes).doc;
    const f = flow(expanded);
    expect(f.nodes.map((n) => `${n.id}:${n.type}:${n.parentId ?? ''}`)).toEqual([
      'P:kernel:',
      's1:group:',
      's1/inc:kernel:s1',
      's1/add:kernel:s1',
      's2:composite:',
      'C:kernel:',
    ]);
    expect(f.edges.map((e) => `${e.source}.${e.sourceHandle}->${e.target}.${e.targetHandle}`)).toEqual([
      'P.out->s1/inc.in',
      'P.out->s1/add.b',
      's1/add.out->s2.in',
      's2.out->C.in',
      's1/inc.out->s1/add.a',
    ]);
    expect(f.where.get('s1/add')).toEqual({ kind: 'node', at: { def: 'stage' }, id: 'add', flatId: 's1/add' });
    const group = f.nodes[1];
    expect(expanded.app.nodes[2].position!.x - doc.app.nodes[2].position!.x).toBe((group.width as number) - estimated(doc, s1).width);
    // Collapsing moves them back.
    const back = applyChanges(
      expanded,
      expandChanges(expanded, undefined, expanded.app.nodes[1], (_, n) => estimated(expanded, n)),
    ).doc;
    expect(back).toEqual(doc);
  });

  it('inside a def: its nodes by local id, flattened ids under the instance entered', () => {
    const f = flow(doc, { def: 'stage' }, 's2/');
    expect(f.nodes.map((n) => n.id)).toEqual(['inc', 'add']);
    expect(f.where.get('add')).toMatchObject({ flatId: 's2/add' });
  });
});
