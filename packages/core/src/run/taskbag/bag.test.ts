import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failingClause, parseRequires, type PeCapabilities } from '../../document/requires.js';
import { taskBagPolicy } from '../policy.js';
import { TaskBag, type BagCommand, type BagPe } from './bag.js';
import type { BagGraph, BagGraphNode } from './graph.js';

// The bag's bookkeeping driven by a little in-memory cluster: each agent runs the tasks given to
// it in order, one per step; what the tests check is what the coordinator would see.

const node = (id: string, order: number, over: Partial<BagGraphNode> = {}): BagGraphNode => ({
  id,
  order,
  kernel: 'k',
  params: {},
  stateful: false,
  gpu: true,
  inputs: [],
  outputs: [{ port: 'out', bytes: 64 }],
  consumers: [],
  ...over,
});

/** source -> work[0..K-1] -> sum -> update, update feeding work and itself back with delay 1 (MLEM's shape). */
function mlemLike(k: number): BagGraph {
  const nodes: BagGraphNode[] = [node('source', 0)];
  const update = k + 2;
  for (let j = 0; j < k; j++) {
    nodes.push(
      node(`work[${j}]`, 1 + j, {
        share: j,
        inputs: [
          { port: 'n', bytes: 64, element: 'f32', parts: [{ from: 0, port: 'out', delay: 0, offset: 0, bytes: 64, at: 0 }] },
          { port: 'est', bytes: 64, element: 'f32', parts: [{ from: update, port: 'out', delay: 1, init: { value: 1 }, offset: 0, bytes: 64, at: 0 }] },
        ],
      }),
    );
  }
  nodes.push(
    node('work', k + 1, {
      inputs: Array.from({ length: k }, (_, j) => ({
        port: `in${j}`,
        bytes: 64,
        element: 'f32' as const,
        parts: [{ from: 1 + j, port: 'out', delay: 0, offset: 0, bytes: 64, at: 0 }],
      })),
    }),
  );
  nodes.push(
    node('update', k + 2, {
      inputs: [
        { port: 'prev', bytes: 64, element: 'f32', parts: [{ from: update, port: 'out', delay: 1, init: { value: 1 }, offset: 0, bytes: 64, at: 0 }] },
        { port: 'bp', bytes: 64, element: 'f32', parts: [{ from: k + 1, port: 'out', delay: 0, offset: 0, bytes: 64, at: 0 }] },
      ],
    }),
  );
  for (const [i, n] of nodes.entries())
    for (const input of n.inputs)
      for (const p of input.parts)
        if (!nodes[p.from].consumers.some((c) => c.node === i && c.delay === p.delay)) nodes[p.from].consumers.push({ node: i, delay: p.delay });
  return { nodes };
}

const pes = (hosts: string[]): BagPe[] => hosts.map((h) => ({ id: `cpu@${h}`, host: h, capabilities: { kind: 'cpu', memory: 1 << 30 } }));

interface Given {
  host: string;
  task: Extract<BagCommand, { type: 'task' }>['task'];
}

/** Runs the bag to its end; `onGive` may interfere (kill an agent, stall one). Returns every command seen. */
function drive(bag: TaskBag, opts: { onGive?: (g: Given, queues: Map<string, Given[]>) => BagCommand[] | void; dead?: Set<string> } = {}) {
  const queues = new Map<string, Given[]>();
  const held = new Map<string, Set<string>>();
  const log: BagCommand[] = [];
  const runs: Given[] = [];
  let end: BagCommand | undefined;
  const take = (cmds: BagCommand[]) => {
    for (const c of cmds) {
      log.push(c);
      if (c.type === 'task') {
        // Every input part must be held where the bag says.
        for (const input of c.task.inputs)
          for (const p of input.parts ?? []) expect(held.get(p.host)?.has(p.key), `${c.task.id} reads ${p.key} on ${p.host}`).toBe(true);
        const g = { host: c.host, task: c.task };
        (queues.get(c.host) ?? queues.set(c.host, []).get(c.host)!).push(g);
        const more = opts.onGive?.(g, queues);
        if (more) take(more);
      } else if (c.type === 'free') for (const k of c.keys) held.get(c.host)?.delete(k);
      else end = c;
    }
  };
  take(bag.start());
  for (let guard = 0; !end && guard < 100_000; guard++) {
    const host = [...queues.keys()].find((h) => queues.get(h)!.length && !opts.dead?.has(h));
    if (!host) break;
    const g = queues.get(host)!.shift()!;
    // An input on a dead agent cannot be pulled: the task fails naming it.
    const lost = g.task.inputs.flatMap((i) => i.parts ?? []).find((p) => opts.dead?.has(p.host));
    if (lost) {
      take(bag.failed(host, { id: g.task.id, attempt: g.task.attempt, pe: g.task.pe, message: `cannot pull ${lost.key}`, lost: lost.host }));
      continue;
    }
    runs.push(g);
    for (const o of g.task.outputs) (held.get(host) ?? held.set(host, new Set()).get(host)!).add(o.key);
    take(bag.done(host, { id: g.task.id, attempt: g.task.attempt, pe: g.task.pe }));
  }
  return { log, runs, end, held };
}

describe('the task bag (pure)', () => {
  it("an input part names its output's whole size (a pull's answer must be exactly that long)", () => {
    const graph: BagGraph = {
      nodes: [
        node('source', 0, { outputs: [{ port: 'out', bytes: 256 }], consumers: [{ node: 1, delay: 0 }] }),
        node('reader', 1, { inputs: [{ port: 'in', bytes: 64, element: 'f32', parts: [{ from: 0, port: 'out', delay: 0, offset: 64, bytes: 64, at: 0 }] }] }),
      ],
    };
    const bag = new TaskBag(graph, pes(['a']), { iterations: 1, policy: taskBagPolicy() });
    const first = bag.start().find((c) => c.type === 'task')!;
    if (first.type !== 'task') throw new Error('no task');
    const next = bag.done('a', first.task).find((c) => c.type === 'task');
    expect(next?.type === 'task' && next.task.inputs[0].parts).toEqual([{ key: 'source:out@0', host: 'a', size: 256, offset: 64, bytes: 64, at: 0 }]);
  });

  it('commits every task of every iteration once, in at most `window` iterations at a time, and frees every output', () => {
    const graph = mlemLike(6);
    const bag = new TaskBag(graph, pes(['a', 'b', 'c']), { iterations: 5, window: 2, policy: taskBagPolicy() });
    let maxSpread = 0;
    const { runs, end, held } = drive(bag, {
      onGive: (_g, queues) => {
        const its = [...queues.values()].flat().map((x) => x.task.iteration);
        if (its.length) maxSpread = Math.max(maxSpread, Math.max(...its) - Math.min(...its) + 1);
      },
    });
    expect(end).toEqual({ type: 'finished' });
    const ids = runs.map((r) => r.task.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(graph.nodes.length * 5);
    expect(bag.counts).toMatchObject({ committed: graph.nodes.length * 5, discarded: 0, requeued: 0, recomputed: 0 });
    expect(maxSpread).toBeLessThanOrEqual(2);
    // Iteration 0 reads the initial tokens; later ones read the update of the iteration before.
    const first = runs.find((r) => r.task.id === 'work[0]@0')!.task;
    expect(first.inputs[1]).toMatchObject({ port: 'est', init: { value: 1 } });
    const later = runs.find((r) => r.task.id === 'work[0]@3')!.task;
    expect(later.inputs[1].parts![0].key).toBe('update:out@2');
    expect([...held.values()].every((s) => s.size === 0)).toBe(true);
  });

  it('identical runs make identical assignments', () => {
    const a = drive(new TaskBag(mlemLike(5), pes(['a', 'b']), { iterations: 4, policy: taskBagPolicy() })).log;
    const b = drive(new TaskBag(mlemLike(5), pes(['a', 'b']), { iterations: 4, policy: taskBagPolicy() })).log;
    expect(a).toEqual(b);
  });

  it('an agent leaving: its given tasks go back to the bag (attempt 2), its outputs are recomputed, the run still commits everything', () => {
    const graph = mlemLike(4);
    const bag = new TaskBag(graph, pes(['a', 'b', 'c']), { iterations: 4, policy: taskBagPolicy() });
    const dead = new Set<string>();
    const { runs, end } = drive(bag, {
      dead,
      onGive: (g) => {
        // b dies once it holds an update someone is about to read.
        if (!dead.size && g.task.iteration >= 1 && g.task.inputs.some((i) => i.parts?.some((p) => p.host === 'b' && p.key.startsWith('update')))) {
          dead.add('b');
          return bag.leave('b', 'socket closed');
        }
      },
    });
    expect(end).toEqual({ type: 'finished' });
    expect(bag.counts.requeued).toBeGreaterThan(0);
    expect(bag.counts.recomputed).toBeGreaterThan(0);
    expect(runs.some((r) => r.task.attempt === 2)).toBe(true);
    // Every task id ends committed (recomputed ones twice), and b ran nothing after it left.
    expect(bag.counts.committed).toBe(graph.nodes.length * 4);
    const diedAt = runs.findIndex((r) => r.host !== 'b' && r.task.attempt === 2);
    expect(runs.slice(diedAt).some((r) => r.host === 'b')).toBe(false);
  });

  it('a late result of a superseded attempt is discarded and counted', () => {
    const graph = mlemLike(2);
    const bag = new TaskBag(graph, pes(['a', 'b']), { iterations: 2, policy: taskBagPolicy() });
    const first = bag.start().filter((c): c is Extract<BagCommand, { type: 'task' }> => c.type === 'task');
    const onB = first.find((c) => c.host === 'b')!;
    bag.leave('b', 'silent for 2 s');
    const late = bag.done('b', { id: onB.task.id, attempt: onB.task.attempt, pe: onB.task.pe });
    expect(bag.counts.discarded).toBe(1);
    expect(late).toEqual([{ type: 'free', host: 'b', keys: onB.task.outputs.map((o) => o.key) }]);
  });

  it('fails after 3 attempts, naming the task, its node, share and iteration, the requirement and the host', () => {
    const graph = mlemLike(2);
    const bag = new TaskBag(graph, pes(['a']), { iterations: 1, policy: taskBagPolicy() });
    let cmds = bag.start();
    let failure: BagCommand | undefined;
    for (let i = 0; i < 10 && !failure; i++) {
      const t = cmds.find((c): c is Extract<BagCommand, { type: 'task' }> => c.type === 'task')!;
      cmds = bag.failed('a', { id: t.task.id, attempt: t.task.attempt, pe: t.task.pe, message: 'kernel threw: out of range' });
      failure = cmds.find((c) => c.type === 'fail');
    }
    expect(failure).toMatchObject({ type: 'fail', failure: { host: 'a', node: 'source', iteration: 0 } });
    expect((failure as { failure: { message: string } }).failure.message).toMatch(
      /task source@0 of node "source" \(no requirement.*\) failed 3 times, last on agent a: kernel threw/,
    );
  });

  it('fails as soon as the last capable PE leaves, naming node, share, iteration, requirement and host', () => {
    const graph = mlemLike(2);
    graph.nodes[1].requires = parseRequires(['kind=gpu'], 'x').clauses;
    const pool: BagPe[] = [
      ...pes(['a']),
      { id: 'gpu0@g', host: 'g', capabilities: { kind: 'gpu', software: true, limits: { maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 } } },
    ];
    const bag = new TaskBag(graph, pool, { iterations: 2, policy: taskBagPolicy() });
    bag.start();
    const out = bag.leave('g', 'socket closed');
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ type: 'fail', failure: { host: 'g', node: 'work[0]', iteration: 0 } });
    expect((out[0] as { failure: { message: string } }).failure.message).toMatch(
      /no capable PE left for task work\[0\]@0, share 0 of node "work\[0\]" \(requires kind=gpu\); the last capable one was on agent g: agent g left: socket closed/,
    );
  });

  it('never places a task on a PE failing its requires, nor one whose buffers do not fit', () => {
    const graph = mlemLike(3);
    graph.nodes[2].requires = parseRequires(['kind=gpu'], 'x').clauses;
    graph.nodes[3].outputs[0].bytes = 1 << 28;
    const pool: BagPe[] = [
      ...pes(['a', 'b']),
      { id: 'gpu0@g', host: 'g', capabilities: { kind: 'gpu', limits: { maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 } } },
    ];
    const bag = new TaskBag(graph, pool, { iterations: 3, policy: taskBagPolicy() });
    const { runs, end } = drive(bag);
    expect(end).toEqual({ type: 'finished' });
    for (const r of runs) {
      if (r.task.id.startsWith('work[1]')) expect(r.task.pe).toBe('gpu0@g');
      if (r.task.id.startsWith('work[2]')) expect(r.task.pe).not.toBe('gpu0@g');
    }
  });

  it('unplaceable: a node no PE can run is named before the run starts', () => {
    const graph = mlemLike(1);
    graph.nodes[1].requires = parseRequires(['kind=gpu'], 'x').clauses;
    expect(new TaskBag(graph, pes(['a']), { iterations: 1, policy: taskBagPolicy() }).unplaceable().map((u) => u.node.id)).toEqual(['work[0]']);
  });

  it("random PE pools and requirements: a task never goes to a PE failing its node's requires; a node no PE meets is refused before the start", () => {
    const caps = fc
      .record({
        kind: fc.constantFrom('cpu' as const, 'gpu' as const),
        cores: fc.integer({ min: 1, max: 16 }),
        software: fc.boolean(),
        backend: fc.constantFrom('opengl', 'vulkan'),
      })
      .map((c): PeCapabilities => (c.kind === 'cpu' ? { kind: 'cpu', cores: c.cores } : { kind: 'gpu', software: c.software, backend: c.backend }));
    const clause = fc.constantFrom('kind=gpu', 'kind=cpu', 'software=false', 'backend=vulkan', 'cores>=8', 'cores<4');
    fc.assert(
      fc.property(
        fc.array(caps, { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(clause, { maxLength: 2 }), { minLength: 6, maxLength: 6 }),
        fc.integer({ min: 1, max: 3 }),
        (pool, requires, iterations) => {
          const graph = mlemLike(3);
          graph.nodes.forEach((n, i) => {
            const parsed = parseRequires(requires[i], 'x');
            // Contradictory lists are the parser's to refuse; here each list is one a user could write.
            if (!parsed.diagnostics.length) n.requires = parsed.clauses;
          });
          const pes: BagPe[] = pool.map((capabilities, i) => ({ id: `pe${i}`, host: `h${i % 3}`, capabilities }));
          const bag = new TaskBag(graph, pes, { iterations, policy: taskBagPolicy() });
          const unmet = graph.nodes.filter((n) => !pes.some((pe) => !n.requires?.length || !failingClause(pe.capabilities!, n.requires)));
          expect(bag.unplaceable().map((u) => u.node.id)).toEqual(unmet.map((n) => n.id));
          if (unmet.length) return;
          const { runs, end } = drive(bag);
          expect(end).toEqual({ type: 'finished' });
          for (const r of runs) {
            const node = graph.nodes.find((n) => r.task.id.startsWith(`${n.id}@`))!;
            const pe = pes.find((p) => p.id === r.task.pe)!;
            expect(node.requires?.length ? failingClause(pe.capabilities!, node.requires) : undefined).toBeUndefined();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("a PE whose device is lost leaves the pool: its task goes elsewhere, it gets no other, the agent's outputs stay", () => {
    const graph = mlemLike(4);
    const pool: BagPe[] = [
      ...pes(['a', 'b']),
      { id: 'gpu0@b', host: 'b', capabilities: { kind: 'gpu', limits: { maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 } } },
    ];
    const bag = new TaskBag(graph, pool, { iterations: 3, policy: taskBagPolicy() });
    let failedOnce = false;
    const queues = new Map<string, Given[]>();
    const runs: Given[] = [];
    let end: BagCommand | undefined;
    const take = (cmds: BagCommand[]) => {
      for (const c of cmds) {
        if (c.type === 'task') (queues.get(c.task.pe) ?? queues.set(c.task.pe, []).get(c.task.pe)!).push({ host: c.host, task: c.task });
        else if (c.type !== 'free') end = c;
      }
    };
    take(bag.start());
    for (let guard = 0; !end && guard < 10_000; guard++) {
      const pe = [...queues.keys()].find((p) => queues.get(p)!.length);
      if (!pe) break;
      const g = queues.get(pe)!.shift()!;
      if (pe === 'gpu0@b' && !failedOnce) {
        failedOnce = true;
        take(bag.failed(g.host, { id: g.task.id, attempt: g.task.attempt, pe, message: 'device lost', peLost: true }));
        continue;
      }
      runs.push(g);
      take(bag.done(g.host, { id: g.task.id, attempt: g.task.attempt, pe: g.task.pe }));
    }
    expect(failedOnce).toBe(true);
    expect(end).toEqual({ type: 'finished' });
    // Whatever gpu0@b still held when it failed was requeued; it ran nothing after.
    expect(runs.filter((r) => r.task.pe === 'gpu0@b')).toEqual([]);
    expect(bag.counts).toMatchObject({ committed: graph.nodes.length * 3, recomputed: 0 });
  });
});
