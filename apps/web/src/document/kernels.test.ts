import { describe, expect, it } from 'vitest';
import { emptyDocument } from './documents.js';
import { findKernel } from '@pipeloom/kernels';
import { closesLoop, connectionProblem, freshNodeId, writtenParams } from './kernels.js';
import type { WrittenDocument } from '@pipeloom/core';

const doc: WrittenDocument = {
  ...emptyDocument(),
  app: {
    nodes: [
      { id: 'p', kernel: 'matrix.produce', params: { width: 64, height: 64 } },
      { id: 'i', kernel: 'matrix.increment', params: { width: 64, height: 64 } },
      { id: 'small', kernel: 'matrix.increment', params: { width: 32, height: 64 } },
      { id: 'c', kernel: 'matrix.consume', params: { width: 64, height: 64 } },
    ],
    edges: [{ from: { node: 'p', port: 'out' }, to: { node: 'i', port: 'in' } }],
  },
};

describe("connections are checked against the kernels' port types", () => {
  it('matching types connect', () => {
    expect(connectionProblem(doc, { node: 'i', port: 'out' }, { node: 'c', port: 'in' })).toBeNull();
  });
  it('a type mismatch names both ports and both types', () => {
    expect(connectionProblem(doc, { node: 'i', port: 'out' }, { node: 'small', port: 'in' })).toBe(
      'type mismatch: i.out produces matrix<f32>[64x64] but small.in expects matrix<f32>[64x32]',
    );
  });
  it('an input already fed says by what', () => {
    expect(connectionProblem(doc, { node: 'small', port: 'out' }, { node: 'i', port: 'in' })).toMatch(/already fed by p.out/);
  });
  it('a connection closing a loop (or a node feeding itself) is allowed, and said to close one: the editor gives it a delay', () => {
    const d2 = { ...doc, app: { ...doc.app, edges: [{ from: { node: 'i', port: 'out' }, to: { node: 'c', port: 'in' } }] } };
    d2.app.nodes = doc.app.nodes.map((n) => (n.id === 'c' ? { id: 'c', kernel: 'matrix.increment', params: { width: 64, height: 64 } } : n));
    expect(connectionProblem(d2, { node: 'c', port: 'out' }, { node: 'i', port: 'in' })).toBeNull();
    expect(closesLoop(d2, { node: 'c' }, { node: 'i' })).toBe(true);
    expect(closesLoop(d2, { node: 'i' }, { node: 'i' })).toBe(true);
    expect(closesLoop(d2, { node: 'p' }, { node: 'i' })).toBe(false);
  });
  it('new node ids come from the kernel name and never collide', () => {
    expect(freshNodeId(doc, 'matrix.increment')).toBe('increment');
    expect(freshNodeId({ ...doc, app: { ...doc.app, nodes: [...doc.app.nodes, { id: 'increment', kernel: 'matrix.increment' }] } }, 'matrix.increment')).toBe(
      'increment2',
    );
  });
});

describe('the params the designer writes', () => {
  it("a split kernel's count and index are left to tasks unless the node sets them itself", () => {
    const projbp = findKernel('mlem.projbp')!;
    expect(Object.keys(writtenParams(projbp, {})).sort()).toEqual(['angles', 'size']);
    expect(writtenParams(projbp, { shares: 3, share: 1 })).toMatchObject({ shares: 3, share: 1 });
  });
});
