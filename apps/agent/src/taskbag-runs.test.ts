import { describe, expect, it } from 'vitest';
import { getKernel, runCpu } from '@pipeloom/kernels';
import { compile, Coordinator, type BagRunOptions, type ProjectDocument, type RunResult } from '@pipeloom/core';
import { spawnLocalAgents, type LocalAgents } from './local/spawn.js';
import { agentsForSuite } from './testing/suite.js';
import { bagGraphOrThrow, connect, wsConnect } from './testing/fixtures.js';
import { nodeClock } from './cli/agents.js';

// Task-bag runs end to end: real agents on loopback, GPU PEs on llvmpipe. MLEM split
// into K shares of its angles; every task id committed and fired once; the estimate as the
// CPU twins compute it on one PE; agents killed, frozen and thawed mid-run.

const N = 16;
const A = 36;

function mlem(k: number, opts: { iterations?: number; requires?: string[] } = {}): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: `MLEM ${N}^3 K=${k}`,
    app: {
      nodes: [
        { id: 'phantom', kernel: 'mlem.phantom', params: { size: N, angles: A, spheres: 6, seed: 1 } },
        { id: 'projbp', kernel: 'mlem.projbp', params: { size: N, angles: A }, tasks: k, ...(opts.requires ? { requires: opts.requires } : {}) },
        { id: 'update', kernel: 'mlem.update', params: { size: N } },
        { id: 'error', kernel: 'mlem.error', params: { size: N } },
      ],
      edges: [
        { from: { node: 'phantom', port: 'sinogram' }, to: { node: 'projbp', port: 'sinogram' } },
        { from: { node: 'update', port: 'estimate' }, to: { node: 'projbp', port: 'estimate' }, delay: 1, init: 1 },
        { from: { node: 'projbp', port: 'backprojection' }, to: { node: 'update', port: 'backprojection' } },
        { from: { node: 'phantom', port: 'sensitivity' }, to: { node: 'update', port: 'sensitivity' } },
        { from: { node: 'update', port: 'estimate' }, to: { node: 'update', port: 'previous' }, delay: 1, init: 1 },
        { from: { node: 'update', port: 'estimate' }, to: { node: 'error', port: 'estimate' } },
        { from: { node: 'phantom', port: 'truth' }, to: { node: 'error', port: 'truth' } },
      ],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }] },
    mapping: { phantom: 'cpu@h0', projbp: 'cpu@h0', update: 'cpu@h0', error: 'cpu@h0' },
    options: { overlap: false, iterations: opts.iterations ?? 10, mode: 'taskbag' },
  } as unknown as ProjectDocument;
}

const graphOf = bagGraphOrThrow;

/** The relative error to the phantom after each iteration, as the CPU twins compute it on one PE (shares summed in share order, in f32). */
function reference(k: number, iterations: number): number[] {
  const ph = runCpu(getKernel('mlem.phantom'), { size: N, angles: A, spheres: 6, seed: 1 }, {}).outputs;
  let est: Float32Array = new Float32Array(N ** 3).fill(1);
  const out: number[] = [];
  for (let it = 0; it < iterations; it++) {
    let sum: Float32Array | undefined;
    for (let j = 0; j < k; j++) {
      const bp = runCpu(getKernel('mlem.projbp'), { size: N, angles: A, shares: k, share: j }, { estimate: est, sinogram: ph.sinogram }).outputs
        .backprojection as Float32Array;
      if (!sum) sum = Float32Array.from(bp);
      else for (let i = 0; i < sum.length; i++) sum[i] = Math.fround(sum[i] + bp[i]);
    }
    est = runCpu(getKernel('mlem.update'), { size: N }, { previous: est, backprojection: sum!, sensitivity: ph.sensitivity }).outputs.estimate as Float32Array;
    const truth = ph.truth as Float32Array;
    let num = 0;
    let den = 0;
    for (let i = 0; i < est.length; i++) {
      num += (est[i] - truth[i]) ** 2;
      den += truth[i] ** 2;
    }
    out.push(Math.sqrt(num / den));
  }
  return out;
}

/** The error the run's checker reported per iteration. */
function errors(r: RunResult): number[] {
  return r.reports
    .filter((x) => x.node === 'error')
    .sort((a, b) => a.iteration - b.iteration)
    .map((x) => Number(x.values.error));
}

/** Fire events per task id (task-bag fires carry their task). */
function firesPerTask(r: RunResult): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of r.events) if (e.kind === 'fire' && e.task) out.set(e.task.id, (out.get(e.task.id) ?? 0) + 1);
  return out;
}

const K = 36;
const ITERATIONS = 10;
const TOLERANCE = 1e-4;

describe('task-bag runs on three agents (one CPU-only, two with llvmpipe)', () => {
  const agents = agentsForSuite(['h0', 'h1', 'h2'], { cpuOnly: ['h0'] });
  const urls = () => agents().agents.map((a) => a.url);

  it(`MLEM K = ${K}, ${ITERATIONS} iterations: one commit and one fire per task id; the estimate equals the single-PE CPU twins' within ${TOLERANCE}`, async () => {
    const c = await connect(urls(), agents().token);
    try {
      const graph = graphOf(mlem(K, { iterations: ITERATIONS }));
      const r = await c.runBag(graph, { iterations: ITERATIONS }).done;
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
      const tasks = graph.nodes.length * ITERATIONS;
      expect(r.bag).toMatchObject({ tasks, committed: tasks, discarded: 0, requeued: 0, recomputed: 0 });
      const fires = firesPerTask(r);
      expect(fires.size).toBe(tasks);
      expect([...fires.values()].every((n) => n === 1)).toBe(true);
      // Every PE took part; GPU PEs ran shares.
      expect(Object.keys(r.bag!.perPe).length).toBeGreaterThanOrEqual(3);
      const ref = reference(K, ITERATIONS);
      const got = errors(r);
      expect(got).toHaveLength(ITERATIONS);
      for (let i = 0; i < ITERATIONS; i++) expect(Math.abs(got[i] - ref[i])).toBeLessThan(TOLERANCE);
      // The counters the timeline draws, and no data through the coordinator (only tasks and receipts).
      expect(r.events.some((e) => e.kind === 'counter' && e.name === 'bag depth')).toBe(true);
    } finally {
      c.close();
    }
  });

  it('K = 1 and K = 36 agree, and so do static and task bag', async () => {
    const c = await connect(urls(), agents().token);
    try {
      const one = await c.runBag(graphOf(mlem(1, { iterations: 4 })), { iterations: 4 }).done;
      const many = await c.runBag(graphOf(mlem(K, { iterations: 4 })), { iterations: 4 }).done;
      expect(one.ok && many.ok).toBe(true);
      const a = errors(one);
      const b = errors(many);
      for (let i = 0; i < 4; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(TOLERANCE);
      // The same document in static mode, its shares on h0's CPU (a static run reports a checker's last iteration).
      const doc = mlem(K, { iterations: 4 });
      doc.options.mode = 'static';
      const compiled = compile(doc);
      if (!compiled.ok) throw new Error(JSON.stringify(compiled.diagnostics));
      const st = await c.run(compiled.ig, { iterations: 4 }).done;
      expect(st.failure).toBeUndefined();
      const last = st.reports.find((x) => x.node === 'error')!;
      expect(last.iteration).toBe(3);
      expect(Math.abs(Number(last.values.error) - b[3])).toBeLessThan(TOLERANCE);
    } finally {
      c.close();
    }
  });

  it('kind=gpu fires only on GPU PEs; software=false is refused before the run, each PE named with its failing clause', async () => {
    const c = await connect(urls(), agents().token);
    try {
      const r = await c.runBag(graphOf(mlem(6, { iterations: 2, requires: ['kind=gpu'] })), { iterations: 2 }).done;
      expect(r.ok).toBe(true);
      const shares = r.events.filter((e) => e.kind === 'fire' && e.node?.startsWith('projbp['));
      expect(shares.length).toBe(12);
      expect(shares.every((e) => e.pe.startsWith('gpu'))).toBe(true);
      const refused = c.checkBag(graphOf(mlem(6, { iterations: 2, requires: ['software=false'] })));
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0].message).toMatch(/node "projbp\[0\]" has no PE to run on/);
      expect(refused[0].message).toMatch(/gpu0@h1 on h1: fails software=false/);
      expect(refused[0].message).toMatch(/cpu0@h0 on h0: fails/);
      const run = await c.runBag(graphOf(mlem(6, { iterations: 2, requires: ['software=false'] })), { iterations: 2 }).done;
      expect(run.ok).toBe(false);
      expect(run.events).toHaveLength(0);
    } finally {
      c.close();
    }
  });
});

/** Agents of their own (a test kills or freezes one), stopped at the end whatever happens. */
async function withAgents<T>(cpuOnly: string[], fn: (a: LocalAgents) => Promise<T>): Promise<T> {
  const a = await spawnLocalAgents(['h0', 'h1', 'h2'], { cpuOnly });
  try {
    return await fn(a);
  } finally {
    a.kill();
    await a.stop();
  }
}

/** Resolves once `pred` holds of the bag's counts (waits for events, not for time). */
function bagWatch() {
  let waiters: { pred: (c: Parameters<NonNullable<BagRunOptions['onBag']>>[0]) => boolean; resolve: () => void }[] = [];
  const onBag: BagRunOptions['onBag'] = (counts) => {
    waiters = waiters.filter((w) => (w.pred(counts) ? (w.resolve(), false) : true));
  };
  const until = (pred: (c: Parameters<NonNullable<BagRunOptions['onBag']>>[0]) => boolean) => new Promise<void>((resolve) => waiters.push({ pred, resolve }));
  return { onBag, until };
}

describe('task-bag faults', () => {
  it('SIGKILL of an agent after its third task starts: its tasks rerun elsewhere (attempt 2), the estimate equals the fault-free run', async () => {
    await withAgents(['h0', 'h1', 'h2'], async (a) => {
      const c = await connect(
        a.agents.map((x) => x.url),
        a.token,
      );
      try {
        const graph = graphOf(mlem(12, { iterations: 6 }));
        // CPU-only agents: the CPU twins give the same bits wherever a share runs (llvmpipe's f32 may differ in the last bit).
        const clean = await c.runBag(graph, { iterations: 6 }).done;
        expect(clean.ok).toBe(true);
        const victim = a.agents.find((x) => x.host === 'h2')!;
        let started = 0;
        const handle = c.runBag(graph, {
          iterations: 6,
          onEvents: (events) => {
            for (const e of events) if (e.kind === 'fire' && e.host === 'h2' && ++started === 3) victim.process.kill('SIGKILL');
          },
        });
        const r = await handle.done;
        expect(r.failure).toBeUndefined();
        expect(r.ok).toBe(true);
        expect(r.bag!.requeued + r.bag!.recomputed).toBeGreaterThan(0);
        expect(r.events.some((e) => e.kind === 'fire' && (e.task?.attempt ?? 1) >= 2)).toBe(true);
        expect(errors(r)).toEqual(errors(clean));
      } finally {
        c.close();
      }
    });
  });

  it('SIGSTOP past the heartbeat, SIGCONT after the requeue: the late result is discarded and counted', async () => {
    await withAgents(['h0', 'h1', 'h2'], async (a) => {
      const victim = a.agents.find((x) => x.host === 'h1')!;
      const watch = bagWatch();
      let frozen = false;
      // h1 is frozen the moment a task is sent to it: it holds that task unread until SIGCONT,
      // which comes once the bag has requeued it (h1 silent for 2 s); its result is then late.
      const c = await Coordinator.connect(
        a.agents.map((x) => x.url),
        {
          token: a.token,
          clock: nodeClock,
          connect: (url) => {
            const ws = wsConnect(url);
            if (url !== victim.url) return ws;
            const send = ws.send.bind(ws);
            ws.send = (data: string) => {
              send(data);
              if (frozen || !data.startsWith('{"type":"task"')) return;
              frozen = true;
              victim.process.kill('SIGSTOP');
              void watch.until((x) => x.requeued > 0).then(() => victim.process.kill('SIGCONT'));
            };
            return ws;
          },
        },
      );
      try {
        // Enough iterations that the run is still going when h1, thawed, reports (its task held the window back while it was frozen).
        const graph = graphOf(mlem(12, { iterations: 40 }));
        const r = await c.runBag(graph, { iterations: 40, onBag: watch.onBag }).done;
        expect(frozen).toBe(true);
        expect(r.ok).toBe(true);
        expect(r.bag!.requeued).toBeGreaterThan(0);
        expect(r.bag!.discarded).toBeGreaterThan(0);
        expect(r.bag!.committed).toBe(graph.nodes.length * 40);
      } finally {
        thaw(a);
        c.close();
      }
    });
  }, 120_000);

  it('the last capable agent killed: the run fails naming node, share, iteration, requirement and host; the trace so far is kept', async () => {
    await withAgents(['h0', 'h2'], async (a) => {
      const c = await connect(
        a.agents.map((x) => x.url),
        a.token,
      );
      try {
        const graph = graphOf(mlem(6, { iterations: 6, requires: ['kind=gpu'] }));
        const victim = a.agents.find((x) => x.host === 'h1')!;
        let killed = false;
        const r = await c.runBag(graph, {
          iterations: 6,
          onEvents: (events) => {
            if (!killed && events.some((e) => e.kind === 'fire' && e.host === 'h1')) {
              killed = true;
              victim.process.kill('SIGKILL');
            }
          },
        }).done;
        expect(r.ok).toBe(false);
        expect(r.failure!.host).toBe('h1');
        expect(r.failure!.message).toMatch(
          /no capable PE left for task projbp\[\d+\]@\d+, share \d+ of node "projbp\[\d+\]" \(requires kind=gpu\); the last capable one was on agent h1/,
        );
        expect(r.failure!.iteration).toBeGreaterThanOrEqual(0);
        expect(r.events.some((e) => e.kind === 'fire')).toBe(true);
      } finally {
        c.close();
      }
    });
  });
});

/** A frozen agent left frozen would outlive the test: thaw it before it is stopped. */
function thaw(a: LocalAgents): void {
  for (const x of a.agents) {
    try {
      x.process.kill('SIGCONT');
    } catch {
      // Already gone.
    }
  }
}
