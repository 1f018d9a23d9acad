import { describe, expect, it } from 'vitest';
import { compile, type ProjectDocument } from '@pipeloom/core';
import { fillIo } from './fill.js';

// io.read and io.write carry the kind of data the kernels they meet name (`kind`): a sink's is
// filled from the node feeding it, as its shape and dtype are, so it connects to any producer.

const doc = (sinkParams: Record<string, unknown>): ProjectDocument => ({
  format: 'pipeloom/v2',
  name: 'kinds',
  app: {
    nodes: [
      { id: 'sens', kernel: 'io.read', params: { path: 'd:s.npy', kind: 'volume', dtype: 'f32', shape: '4x4x4' } },
      { id: 'est', kernel: 'io.read', params: { path: 'd:e.npy', kind: 'volume', dtype: 'f32', shape: '4x4x4' } },
      { id: 'bp', kernel: 'io.read', params: { path: 'd:b.npy', kind: 'volume', dtype: 'f32', shape: '4x4x4' } },
      { id: 'update', kernel: 'mlem.update', params: { size: 4 } },
      { id: 'out', kernel: 'io.write', params: { path: 'd:o.npy', when: 'last', ...sinkParams } },
    ],
    edges: [
      { from: { node: 'est', port: 'out' }, to: { node: 'update', port: 'previous' } },
      { from: { node: 'bp', port: 'out' }, to: { node: 'update', port: 'backprojection' } },
      { from: { node: 'sens', port: 'out' }, to: { node: 'update', port: 'sensitivity' } },
      { from: { node: 'update', port: 'estimate' }, to: { node: 'out', port: 'in' } },
    ],
  },
  arch: { hosts: [{ id: 'h0', cpus: 1 }], pes: [], links: [] },
  mapping: { sens: 'cpu@h0', est: 'cpu@h0', bp: 'cpu@h0', update: 'cpu@h0', out: 'cpu@h0' },
  options: { overlap: false, iterations: 1 },
});

describe('the kind of data io ports carry', () => {
  it("a source with kind volume feeds a volume port; a sink's kind, shape and dtype are filled from the node feeding it", () => {
    const filled = fillIo(doc({}), undefined);
    expect(filled.diagnostics).toEqual([]);
    expect(filled.doc.app.nodes.find((n) => n.id === 'out')?.params).toMatchObject({ kind: 'volume', shape: '4x4x4', dtype: 'f32' });
    const r = compile(filled.doc, { overlap: false });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('without it (and unfilled), a sink takes an array, and the edge says the kinds differ', () => {
    const r = compile(doc({ shape: '4x4x4', dtype: 'f32' }), { overlap: false });
    expect(r.diagnostics.map((d) => d.message)).toContainEqual('type mismatch: update.estimate is volume<f32>[4x4x4] but out.in expects array<f32>[4x4x4]');
  });
});
