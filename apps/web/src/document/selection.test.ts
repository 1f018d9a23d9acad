import { describe, expect, it } from 'vitest';
import { emptyDocument } from './documents.js';
import { selectionForDiagnostic, selectionForPath, viewForSelection } from './selection.js';
import type { WrittenDocument } from '@pipeloom/core';

const doc: WrittenDocument = {
  ...emptyDocument(),
  app: {
    nodes: [
      { id: 'p', kernel: 'matrix.produce' },
      { id: 'c', kernel: 'matrix.consume' },
    ],
    edges: [{ from: { node: 'p', port: 'out' }, to: { node: 'c', port: 'in' } }],
  },
  arch: {
    hosts: [{ id: 'h0' }],
    pes: [
      { id: 'cpu@h0', host: 'h0', kind: 'cpu', memory: 1 },
      { id: 'gpu0@h0', host: 'h0', kind: 'gpu', memory: 1 },
    ],
    links: [{ a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie', bandwidth: 1, latency: 0, duplex: true }],
  },
};

describe('clicking a diagnostic selects its element', () => {
  it('node params path selects the node in the DFG view', () => {
    const s = selectionForPath(doc, 'app.nodes[1].params.width');
    expect(s).toEqual({ kind: 'node', id: 'c' });
    expect(viewForSelection(s!)).toBe('dfg');
  });
  it('edge index selects the edge by its port references', () => {
    expect(selectionForPath(doc, 'app.edges[0].to')).toEqual({ kind: 'edge', key: 'p.out->c.in' });
  });
  it('PE, host and link paths select in the architecture view', () => {
    expect(selectionForPath(doc, 'arch.pes[1].memory')).toEqual({ kind: 'pe', id: 'gpu0@h0' });
    expect(selectionForPath(doc, 'arch.hosts[0]')).toEqual({ kind: 'host', id: 'h0' });
    const l = selectionForPath(doc, 'arch.links[0].bandwidth');
    expect(l).toEqual({ kind: 'link', key: 'cpu@h0<->gpu0@h0' });
    expect(viewForSelection(l!)).toBe('arch');
  });
  it('a mapping path selects the mapping entry in the mapping view', () => {
    const s = selectionForPath(doc, 'mapping.p');
    expect(s).toEqual({ kind: 'mapping', node: 'p' });
    expect(viewForSelection(s!)).toBe('mapping');
  });
  it('ids in brackets work as well as indices', () => {
    expect(selectionForPath(doc, 'app.nodes[c]')).toEqual({ kind: 'node', id: 'c' });
    expect(selectionForPath(doc, 'arch.pes["gpu0@h0"]')).toEqual({ kind: 'pe', id: 'gpu0@h0' });
  });
  it('a path naming nothing selects nothing', () => {
    expect(selectionForPath(doc, 'app.nodes[9]')).toBeNull();
    expect(selectionForPath(doc, 'format')).toBeNull();
  });
});

describe('a diagnostic on a whole section', () => {
  it("an unmapped node reported on `mapping` selects that node's mapping entry", () => {
    expect(selectionForDiagnostic(doc, { path: 'mapping', message: 'node "c" is not mapped' })).toEqual({ kind: 'mapping', node: 'c' });
  });
});

describe('paths into composites and parameters', () => {
  const composite: WrittenDocument = {
    ...doc,
    params: { N: 2 },
    defs: {
      stage: {
        nodes: [
          { id: 'inc', kernel: 'matrix.increment' },
          { id: 'add', kernel: 'matrix.add' },
        ],
        edges: [{ from: { node: 'inc', port: 'out' }, to: { node: 'add', port: 'a' } }],
      },
    },
    app: {
      nodes: [
        { id: 's1', composite: 'stage' },
        { id: 'g', graph: { nodes: [{ id: 'x', kernel: 'matrix.increment' }], edges: [] } },
      ],
      edges: [],
    },
  };
  it("a def's node or edge is selected where it is written", () => {
    expect(selectionForPath(composite, 'defs.stage.nodes[1].params.width')).toEqual({ kind: 'node', id: 'add', at: { def: 'stage' } });
    expect(selectionForPath(composite, 'defs.stage.edges[0]')).toEqual({ kind: 'edge', key: 'inc.out->add.a', at: { def: 'stage' } });
  });
  it("an inline graph's node is selected inside its composite node", () => {
    expect(selectionForPath(composite, 'app.nodes[1].graph.nodes[0].params.nb_loop')).toEqual({ kind: 'node', id: 'x', at: { inline: ['g'] } });
  });
  it("a parameter's expression selects its row", () => {
    expect(selectionForPath(composite, 'params.N.value')).toEqual({ kind: 'param', name: 'N' });
    expect(viewForSelection({ kind: 'param', name: 'N' })).toBe('dfg');
    expect(selectionForPath(composite, 'params.M')).toBeNull();
  });
});
