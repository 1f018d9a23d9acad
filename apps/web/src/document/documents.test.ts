import { describe, expect, it } from 'vitest';
import type { ProjectDocument } from '@pipeloom/core';
import { nodeDepths } from './documents.js';

const dfg = (nodes: string[], edges: [string, string][]) =>
  ({
    app: {
      nodes: nodes.map((id) => ({ id, kernel: 'matrix.increment' })),
      edges: edges.map(([a, b]) => ({ from: { node: a, port: 'out' }, to: { node: b, port: 'in' } })),
    },
  }) as unknown as ProjectDocument;

describe("node depths for placing a file's nodes without positions", () => {
  it('is the longest path from a node without inputs', () => {
    const d = nodeDepths(
      dfg(
        ['a', 'b', 'c', 'd'],
        [
          ['a', 'b'],
          ['b', 'c'],
          ['a', 'c'],
          ['c', 'd'],
        ],
      ),
    );
    expect(Object.fromEntries(d)).toEqual({ a: 0, b: 1, c: 2, d: 3 });
  });

  it('takes a 20,000-node chain in stride (no recursion)', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `n${i}`);
    const d = nodeDepths(
      dfg(
        ids,
        ids.slice(1).map((id, i) => [ids[i], id]),
      ),
    );
    expect(d.get('n19999')).toBe(19_999);
  });

  it('places the nodes of a cycle (a document being edited) and those after it', () => {
    const d = nodeDepths(
      dfg(
        ['s', 'x', 'y', 'z'],
        [
          ['s', 'x'],
          ['x', 'y'],
          ['y', 'x'],
          ['y', 'z'],
        ],
      ),
    );
    expect([...d.keys()].sort()).toEqual(['s', 'x', 'y', 'z']);
    expect(d.get('y')!).toBeGreaterThan(d.get('x')!);
    expect(d.get('z')!).toBeGreaterThan(d.get('y')!);
  });
});
