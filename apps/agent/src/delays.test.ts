import { describe, expect, it } from 'vitest';
import { compile, SYNC_MODES, type ImplementationGraph, type ProjectDocument, type TraceEvent } from '@pipeloom/core';
import { hostPrograms, MAX_DELAY } from '@pipeloom/core/internal';
import { agentsForSuite } from './testing/suite.js';
import { bagGraphOrThrow, compileOrThrow, connect, example } from './testing/fixtures.js';

// Delays (feedback edges) on real agent processes on loopback, real WebGPU (llvmpipe) for the
// GPU PEs: the compiler lists the slots that hold a delayed edge's initial tokens, the agents
// fill them before the run (runtime/initial.ts), and the consumer's iteration k reads the
// producer's k - delay (initial token k for k < delay). Every value is checked exactly by
// matrix.consume, whose running_sum d expects an accumulator fed back with delay d.

const agentsOf = agentsForSuite(['h0', 'h1']);

const ITERATIONS = 100;
const size = { width: 8, height: 4 };
const fired = (events: TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const port = (s: string) => {
  const [node, p] = s.split('.');
  return { node, port: p };
};
type Edge = [string, string, { delay?: number; init?: number | { node: string } }?];

function document(
  nodes: { id: string; kernel: string; params?: Record<string, number | string> }[],
  edges: Edge[],
  mapping: Record<string, string>,
): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'delays',
    app: {
      nodes: nodes.map((n) => ({ ...n, params: { ...size, ...n.params } })),
      edges: edges.map(([from, to, extra]) => ({ from: port(from), to: port(to), ...extra })),
    },
    arch: example('piic').arch,
    mapping,
    options: { overlap: true, iterations: ITERATIONS },
  } as unknown as ProjectDocument;
}

/** Runs `ig` in both sync modes and expects every node to fire every iteration, every check passing. */
async function runsExactly(ig: ImplementationGraph): Promise<void> {
  const c = await connect(
    agentsOf().agents.map((a) => a.url),
    agentsOf().token,
  );
  try {
    expect(c.check(ig)).toEqual([]);
    for (const sync of SYNC_MODES) {
      const r = await c.run(ig, { iterations: ITERATIONS, sync }).done;
      expect(r.failure, sync).toBeUndefined();
      expect(r.ok, sync).toBe(true);
      for (const node of ig.order) expect(fired(r.events, node), `${sync}: ${node}`).toEqual(range(ITERATIONS));
    }
  } finally {
    c.close();
  }
}

/** The smallest delay from 1 up that `make(d)` compiles with; each refusal below it must name a minimum. */
function smallestDelay(make: (d: number) => ProjectDocument, overlap: boolean): { d: number; refusals: string[] } {
  const refusals: string[] = [];
  for (let d = 1; d <= 16; d++) {
    const r = compile(make(d), { overlap });
    if (r.ok) return { d, refusals };
    refusals.push(r.diagnostics.map((x) => `${x.path}: ${x.message}`).join('\n'));
  }
  throw new Error(`no delay up to 16 compiles:\n${refusals.join('\n')}`);
}

describe('an accumulator acc_k = acc_{k-1} + x_k (A.out -> A.b, delay 1, init 0), P on h0, A on h1', () => {
  const doc = () =>
    document(
      [
        { id: 'P', kernel: 'matrix.produce' },
        { id: 'A', kernel: 'matrix.add' },
        { id: 'C', kernel: 'matrix.consume', params: { running_sum: 1 } },
      ],
      [
        ['P.out', 'A.a'],
        ['A.out', 'A.b', { delay: 1, init: 0 }],
        ['A.out', 'C.in'],
      ],
      { P: 'cpu@h0', A: 'cpu@h1', C: 'cpu@h0' },
    );
  for (const overlap of [false, true]) {
    it(`${overlap ? 'with' : 'without'} overlap: C sees 0 + 1 + ... + k at every iteration, in both sync modes`, async () => {
      const ig = compileOrThrow(doc(), overlap);
      expect(ig.programs.pes.length).toBeGreaterThan(0);
      await runsExactly(ig);
    });
  }

  it('a wrong init is caught: init 5 adds 5 to every sum', async () => {
    const d = doc();
    d.app.edges[1].init = 5;
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.run(compileOrThrow(d, false), { iterations: 3, sync: 'barrier' }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.node).toBe('C');
      expect(r.failure?.message).toMatch(/iteration 0: element 0 is 5, expected 0/);
    } finally {
      c.close();
    }
  });
});

describe('a loop across hosts: A = x + B on h0, B = A + 0 on h1, B.out -> A.b delayed', () => {
  const doc = (d: number) =>
    document(
      [
        { id: 'P', kernel: 'matrix.produce' },
        { id: 'A', kernel: 'matrix.add' },
        { id: 'B', kernel: 'matrix.increment', params: { nb_loop: 0 } },
        { id: 'C', kernel: 'matrix.consume', params: { running_sum: d } },
      ],
      [
        ['P.out', 'A.a'],
        ['A.out', 'B.in'],
        ['B.out', 'A.b', { delay: d, init: 0 }],
        ['A.out', 'C.in'],
      ],
      { P: 'cpu@h0', A: 'cpu@h0', B: 'cpu@h1', C: 'cpu@h1' },
    );
  for (const overlap of [false, true]) {
    it(`${overlap ? 'with' : 'without'} overlap: with the smallest delay the compiler takes, C sees the sum over k, k-d, ... in both sync modes`, async () => {
      const { d, refusals } = smallestDelay(doc, overlap);
      // Each delay too small is refused naming the minimum.
      for (const why of refusals) expect(why).toContain(String(d));
      await runsExactly(compileOrThrow(doc(d), overlap));
      // A larger delay than the minimum runs as exactly.
      await runsExactly(compileOrThrow(doc(d + 1), overlap));
    });
  }
});

describe('a delay far longer than the run: every iteration reads an initial token', () => {
  // The loop across hosts of above with d initial tokens of `init`, run for 6 iterations: A adds
  // x_k to an initial token at every one, so C sees x_k + init. running_sum at its most (10^6)
  // expects the same as any d above the run: the sum over k alone.
  const RUN = 6;
  const doc = (d: number, init: number, mapping: Record<string, string>) =>
    document(
      [
        { id: 'P', kernel: 'matrix.produce' },
        { id: 'A', kernel: 'matrix.add' },
        { id: 'B', kernel: 'matrix.increment', params: { nb_loop: 0 } },
        { id: 'C', kernel: 'matrix.consume', params: { running_sum: 1_000_000 } },
      ],
      [
        ['P.out', 'A.a'],
        ['A.out', 'B.in'],
        ['B.out', 'A.b', { delay: d, init }],
        ['A.out', 'C.in'],
      ],
      mapping,
    );
  const spread = { P: 'cpu@h0', A: 'gpu0@h0', B: 'gpu0@h1', C: 'cpu@h1' };

  it(`task-bag mode, ${MAX_DELAY} initial tokens (the most a delay may carry): every check passes; init 5 fails the iteration that reads it`, async () => {
    const graphOf = (init: number) => bagGraphOrThrow(doc(MAX_DELAY, init, spread));
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.runBag(graphOf(0), { iterations: RUN }).done;
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
      for (const node of ['P', 'A', 'B', 'C'])
        expect(
          fired(r.events, node).sort((a, b) => a! - b!),
          node,
        ).toEqual(range(RUN));
      const wrong = await c.runBag(graphOf(5), { iterations: RUN }).done;
      expect(wrong.ok).toBe(false);
      // Every iteration reads an initial token, off by 5: whichever task fails first names its own.
      const m = /iteration (\d+): element 0 is (\d+), expected (\d+)/.exec(wrong.failure?.message ?? '');
      expect(m, wrong.failure?.message).not.toBeNull();
      expect([Number(m![2]) - Number(m![1]), Number(m![3])]).toEqual([5, Number(m![1])]);
    } finally {
      c.close();
    }
  });

  it('static mode, 200 initial tokens in host and GPU slots (range fills) for a 6-iteration run: every check passes, in both sync modes', async () => {
    const ig = compileOrThrow(doc(200, 0, spread), false);
    const fills = hostPrograms(ig, ['h0', 'h1']).flatMap((p) => p.initial ?? []);
    expect(fills.length).toBeLessThanOrEqual(2);
    expect(fills.reduce((n, f) => n + (f.count ?? 1), 0)).toBe(200);
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      expect(c.check(ig)).toEqual([]);
      for (const sync of SYNC_MODES) {
        const r = await c.run(ig, { iterations: RUN, sync }).done;
        expect(r.failure, sync).toBeUndefined();
        expect(r.ok, sync).toBe(true);
        for (const node of ig.order) expect(fired(r.events, node), `${sync}: ${node}`).toEqual(range(RUN));
      }
    } finally {
      c.close();
    }
  });
});

describe('initial tokens from a source node, written into a GPU PE slot', () => {
  // X_k = P_k + 1 + 1 = k + 2 on gpu0@h1; X -> C delayed by 2, the initial tokens from seed
  // (matrix.produce: token t is t everywhere): C reads 0, 1 (the seed's), then X_{k-2} = k.
  // A constant init would give 0, 0: only the seed's token 1 makes iteration 1 pass.
  const doc = (init: number | { node: string }) =>
    document(
      [
        { id: 'seed', kernel: 'matrix.produce' },
        { id: 'P', kernel: 'matrix.produce' },
        { id: 'I1', kernel: 'matrix.increment', params: { nb_loop: 5 } },
        { id: 'I2', kernel: 'matrix.increment', params: { nb_loop: 5 } },
        { id: 'C', kernel: 'matrix.consume', params: { scale: 1, expected_offset: 0 } },
      ],
      [
        ['P.out', 'I1.in'],
        ['I1.out', 'I2.in'],
        ['I2.out', 'C.in', { delay: 2, init }],
      ],
      { seed: 'cpu@h0', P: 'cpu@h0', I1: 'gpu0@h0', I2: 'gpu0@h1', C: 'gpu0@h1' },
    );
  for (const overlap of [false, true]) {
    it(`${overlap ? 'with' : 'without'} overlap: C reads the seed's tokens 0 and 1, then the stream, in both sync modes`, async () => {
      const ig = compileOrThrow(doc({ node: 'seed' }), overlap);
      expect(gpuFills(ig).some((f) => f.kernel === 'matrix.produce')).toBe(true);
      await runsExactly(ig);
    });
  }

  it('a constant init in its place is caught at iteration 1', async () => {
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.run(compileOrThrow(doc(0), false), { iterations: 3, sync: 'barrier' }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toMatch(/iteration 1: element 0 is 0, expected 1/);
    } finally {
      c.close();
    }
  });
});

/** The initial fills of the GPU programs, as their agents get them. */
function gpuFills(ig: ImplementationGraph) {
  const hosts = [...new Set(ig.programs.pes.map((p) => p.host))];
  return hostPrograms(ig, hosts).flatMap((p) => (p.kind === 'gpu' ? (p.initial ?? []) : []));
}
