import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { compile } from '../compile/compile.js';
import { lowerDocument } from './lower.js';
import { analyze } from './validate.js';
import type { AppNode, WrittenDocument } from './types.js';

// document/tasks.ts: a node with `tasks: K` lowered to K shares and a generic.sum combine.

const mlem = (): WrittenDocument => JSON.parse(readFileSync(new URL('../../../../examples/mlem.json', import.meta.url), 'utf8'));

/** The mlem example with projbp's tasks, mapping and (optionally) params replaced. */
function withTasks(tasks: number | string | undefined, target: string | string[] = ['gpu0@h0', 'cpu@h0'], params?: Record<string, number>): WrittenDocument {
  const doc = mlem();
  const projbp = doc.app.nodes.find((n) => n.id === 'projbp')!;
  if (tasks === undefined) delete projbp.tasks;
  else projbp.tasks = tasks;
  if (params) projbp.params = { ...projbp.params, ...params };
  doc.mapping.projbp = target;
  return doc;
}

const lower = (doc: WrittenDocument, params?: Record<string, number>) => lowerDocument(doc, { params });
const errors = (doc: unknown, params?: Record<string, number>) =>
  analyze(doc, { params })
    .diagnostics.filter((d) => d.severity === 'error')
    .map(formatDiagnostic);

describe('tasks: K lowered to shares and a combine', () => {
  it('makes shares projbp[0..3] with the split params and a marker, and a generic.sum combine keeping the id projbp', () => {
    const { lowered, diagnostics } = lower(withTasks(4));
    expect(diagnostics).toEqual([]);
    const nodes = lowered!.doc.app.nodes;
    const byId = new Map(nodes.map((n) => [n.id, n]));
    for (let j = 0; j < 4; j++) {
      const s = byId.get(`projbp[${j}]`)!;
      expect(s.kernel).toBe('mlem.projbp');
      expect(s.params).toEqual({ size: 16, angles: 36, shares: 4, share: j });
      expect(s.share).toEqual({ node: 'projbp', index: j, of: 4 });
      expect(s.tasks).toBeUndefined();
    }
    const c = byId.get('projbp')!;
    expect(c).toMatchObject({ kernel: 'generic.sum', params: { count: 4, kind: 'volume', shape: '16,16,16' }, combine: { node: 'projbp', of: 4 } });
    expect(c.requires).toBeUndefined();
    // Every lowered node of projbp names projbp as written.
    nodes.forEach((n, i) => {
      if (n.id.startsWith('projbp')) expect(lowered!.nodePaths[i]).toBe('app.nodes[1]');
    });
  });

  it("feeds every share what fed the node (same port, delay and init), each share the combine's in{j}, and the node's consumers from the combine", () => {
    const { lowered } = lower(withTasks(3, 'cpu@h0'));
    const edges = lowered!.doc.app.edges.map((e, i) => ({
      e: `${e.from.node}.${e.from.port} -> ${e.to.node}.${e.to.port}${e.delay ? ` delay ${e.delay}` : ''}${e.init ? ` init ${JSON.stringify(e.init)}` : ''}`,
      at: lowered!.edgePaths[i],
    }));
    expect(edges).toEqual(
      expect.arrayContaining([
        ...[0, 1, 2].map((j) => ({ e: `phantom.sinogram -> projbp[${j}].sinogram`, at: 'app.edges[0]' })),
        ...[0, 1, 2].map((j) => ({ e: `update.estimate -> projbp[${j}].estimate delay 4 init {"value":1}`, at: 'app.edges[1]' })),
        { e: 'projbp.sum -> update.backprojection', at: 'app.edges[2]' },
        ...[0, 1, 2].map((j) => ({ e: `projbp[${j}].backprojection -> projbp.in${j}`, at: 'app.nodes[1].tasks' })),
      ]),
    );
    expect(edges.length).toBe(7 + 2 * 2 + 3);
  });

  it('maps share j onto L[j mod P] and the combine onto L[0]; one PE takes them all; a share named in the mapping keeps its own PE', () => {
    const pick = (doc: WrittenDocument) => {
      const m = lower(doc).lowered!.doc.mapping;
      return Object.fromEntries(Object.entries(m).filter(([k]) => k.startsWith('projbp')));
    };
    expect(pick(withTasks(5))).toEqual({
      'projbp[0]': 'gpu0@h0',
      'projbp[1]': 'cpu@h0',
      'projbp[2]': 'gpu0@h0',
      'projbp[3]': 'cpu@h0',
      'projbp[4]': 'gpu0@h0',
      projbp: 'gpu0@h0',
    });
    expect(pick(withTasks(2, 'cpu@h0'))).toEqual({ 'projbp[0]': 'cpu@h0', 'projbp[1]': 'cpu@h0', projbp: 'cpu@h0' });
    const own = withTasks(2, ['cpu@h0']);
    own.mapping['projbp[1]'] = 'gpu0@h0';
    expect(pick(own)).toEqual({ 'projbp[0]': 'cpu@h0', 'projbp[1]': 'gpu0@h0', projbp: 'cpu@h0' });
  });

  it('K = 1 still expands: one share and a combine of one', () => {
    const nodes = lower(withTasks(1, 'gpu0@h0')).lowered!.doc.app.nodes;
    expect(nodes.filter((n) => n.id.startsWith('projbp')).map((n) => [n.id, n.kernel, n.params])).toEqual([
      ['projbp[0]', 'mlem.projbp', { size: 16, angles: 36, shares: 1, share: 0 }],
      ['projbp', 'generic.sum', { count: 1, kind: 'volume', shape: '16,16,16' }],
    ]);
  });

  it("evaluates tasks as an expression over the document params (the example's K), with --param overrides", () => {
    expect(lower(withTasks('K'), { K: 6 }).lowered!.doc.app.nodes.filter((n: AppNode) => n.share).length).toBe(6);
  });

  it('compiles in static mode: the PACCO passes see K + 1 plain nodes', () => {
    const r = compile(withTasks(4), { overlap: false });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(r.ok && r.ig.order.length).toBe(4 + 1 + 3);
  });
});

describe('tasks refused, naming the element and the fix', () => {
  it('tasks below 1, not whole, or negative', () => {
    expect(errors(withTasks(0))).toEqual([
      'app.nodes[1].tasks: node "projbp": tasks 0 is not a whole number of tasks, 1 or more (write how many shares its work splits into: 1 or more)',
    ]);
    expect(errors(withTasks(2.5))[0]).toMatch(/tasks 2.5 is not a whole number/);
    expect(errors(withTasks('0 - 3'))[0]).toMatch(/tasks -3 is not a whole number/);
  });

  it('tasks above the split range', () => {
    expect(errors(withTasks(200), { A: 180 })).toEqual([
      'app.nodes[1].tasks: node "projbp": tasks 200 > angles 180: each share needs at least one of its angles (lower tasks to 180 or fewer, or raise angles)',
    ]);
  });

  it('tasks on a kernel without a split, on a composite node, beside its split params, with a rate above 1', () => {
    const doc = withTasks(undefined, 'gpu0@h0');
    doc.app.nodes.find((n) => n.id === 'update')!.tasks = 2;
    expect(errors(doc)).toEqual([
      'app.nodes[2].tasks: node "update": kernel mlem.update has no split param; remove tasks (only kernels that declare a split (e.g. mlem.projbp) run as tasks)',
    ]);
    const composite = withTasks(undefined, 'gpu0@h0');
    composite.app.nodes.push({ id: 'box', graph: { nodes: [], edges: [] }, tasks: 2 });
    expect(errors(composite).join('\n')).toMatch(/app.nodes\[4\].tasks: is for kernel nodes/);
    expect(errors(withTasks(2, 'gpu0@h0', { shares: 2 }))).toEqual([
      'app.nodes[1].params.shares: node "projbp" sets shares itself and has tasks: tasks sets shares on each share (remove params.shares, or remove tasks)',
    ]);
    const rated = withTasks(2, 'gpu0@h0');
    rated.app.nodes[1].rates = { sinogram: 2 };
    expect(errors(rated)[0]).toMatch(/app.nodes\[1\].rates: node "projbp" has tasks and rate 2 on port "sinogram"/);
  });

  it('a PE list on a node without tasks, and an unknown PE in a list', () => {
    expect(errors(withTasks(undefined))).toEqual([
      'mapping.projbp: node "projbp" is mapped to a list of PEs, but has no tasks: a list spreads a node\'s shares (map it to one PE ("gpu0@h0"), or give it "tasks" (its kernel must split))',
    ]);
    expect(errors(withTasks(2, ['gpu0@h0', 'gpu7@h0']))).toEqual(['mapping.projbp[1]: PE "gpu7@h0" does not exist (list PEs of arch: cpu@h0, gpu0@h0)']);
  });

  it('an empty PE list is a shape error', () => {
    expect(errors(withTasks(2, []))).toEqual([
      'mapping.projbp: is an empty list of PEs (list the PE ids the node\'s shares take in turn, e.g. ["gpu0@h0", "cpu@h0"])',
    ]);
    const doc = withTasks(2) as unknown as { mapping: Record<string, unknown> };
    doc.mapping.projbp = 3;
    expect(errors(doc)[0]).toMatch(/^mapping.projbp: must be a PE id, or a non-empty list of PE ids/);
  });

  it('a loop too short for its shares on two PEs is one message for the edge as written, with the delay it needs', () => {
    const r = compile(withTasks(6), { overlap: false, params: { D: 1 } });
    expect(r.ok).toBe(false);
    const loops = r.diagnostics.filter((d) => d.path.endsWith('.delay'));
    expect(loops.map((d) => d.path)).toEqual(['app.edges[1].delay', 'app.edges[4].delay'].filter((p) => loops.some((d) => d.path === p)));
    expect(new Set(loops.map((d) => d.path)).size).toBe(loops.length);
    expect(loops[0].message).toMatch(/takes 2 cycles to go round .* \(the longest of 6 loops through this edge\)$/);
    expect(loops[0].hint).toMatch(/^raise the delay to 2/);
  });
});
