import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile, predict, toChromeTrace, type ChromeTrace, type TraceEvent, type ChromeEvent } from '@pipeloom/core';
import { documentHash } from '@pipeloom/core/internal';
import { agentsForSuite } from './testing/suite.js';
import { eventKey, finishedBefore, missing, traceKey } from './testing/finished.js';
import { compileOrThrow, connect, example, piic, root } from './testing/fixtures.js';

// Real agent processes on loopback, real WebGPU (llvmpipe) for the GPU PEs.

// h0 serves two GPUs for the granulometry example; the others map onto gpu0 of each host.
const agentsOf = agentsForSuite(['h0', 'h1'], { gpus: { h0: 2 } });
const urls = () => agentsOf().agents.map((a) => a.url);

const fired = (events: TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** A Chrome trace's numbering: each process's and thread's name -> its pid (and tid). */
const numbering = (t: ChromeTrace) =>
  new Map(t.traceEvents.filter((e) => e.ph === 'M' && e.name !== 'thread_sort_index').map((e) => [`${e.name} ${String(e.args?.name)}`, `${e.pid}/${e.tid}`]));

describe('link emulation', () => {
  it("makes every transfer last at least its link's latency + bytes / bandwidth, values still exact", async () => {
    // 64x64 f32 = 16 KiB; PCIe at 1.6 MB/s and InfiniBand at 0.8 MB/s: 10 ms and 20 ms a copy.
    const doc = piic({ iterations: 4 });
    for (const h of doc.arch.hosts) (h as { pcie?: unknown }).pcie = { bandwidth: 1.6384e6, latency: 0 };
    (doc.arch as { network?: unknown }).network = { kind: 'infiniband', bandwidth: 0.8192e6, latency: 0 };
    const c = await connect(urls(), agentsOf().token);
    try {
      const ig = compileOrThrow(doc, true);
      const r = await c.run(ig, { iterations: 4, emulateLinks: true }).done;
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
      const transfers = r.events.filter((e) => e.kind === 'transfer');
      // Every copy: host<->GPU on the GPU's lanes, host-to-host on both ends.
      expect(transfers.length).toBe(4 * (4 + 2));
      for (const e of transfers) {
        // A lane is named after the PE at its other end (send:cpu@h1 on cpu@h0).
        const hostToHost = e.thread.split('@')[1] !== e.pe.split('@')[1];
        expect(e.end - e.start, `${e.pe} ${e.thread} ${e.name}`).toBeGreaterThanOrEqual(hostToHost ? 20_000 : 10_000);
      }
    } finally {
      c.close();
    }
  });
});

describe('P-I-I-C on two agents (paper Fig 12: P cpu@h0, I gpu0@h0, I gpu0@h1, C cpu@h1)', () => {
  for (const overlap of [false, true])
    for (const sync of ['self-timed', 'barrier'] as const) {
      it(`checks exact values every iteration ${overlap ? 'with' : 'without'} overlap, ${sync}`, async () => {
        const c = await connect(urls(), agentsOf().token);
        try {
          const ig = compileOrThrow(piic({ iterations: 20 }), overlap);
          expect(c.check(ig)).toEqual([]);
          const r = await c.run(ig, { iterations: 20, sync }).done;
          expect(r.failure).toBeUndefined();
          expect(r.ok).toBe(true);
          // The consumer checked all 20 iterations, in order, on host 1's CPU.
          expect(fired(r.events, 'C')).toEqual(range(20));
          expect(r.events.find((e) => e.node === 'C')?.pe).toBe('cpu@h1');
          for (const n of ['P', 'I1', 'I2']) expect(fired(r.events, n)).toEqual(range(20));
          // Host-to-host data went over the agents' own link, traced on both sides.
          expect(r.events.some((e) => e.kind === 'transfer' && e.pe === 'cpu@h0' && e.thread === 'send:cpu@h1')).toBe(true);
          expect(r.events.some((e) => e.kind === 'transfer' && e.pe === 'cpu@h1' && e.thread === 'recv:cpu@h0')).toBe(true);
          // Measured lanes are the predicted lanes, so the timeline draws the plan under each one.
          const lanes = (es: readonly TraceEvent[]) => new Set(es.filter((e) => e.kind !== 'barrier').map((e) => `${e.pe} ${e.thread}`));
          const predicted = predict(piic({ iterations: 20 }));
          if (!predicted.ok) throw new Error('P-I-I-C must predict');
          const plan = predicted.prediction[overlap ? 'overlap' : 'noOverlap']!;
          expect(lanes(r.events)).toEqual(lanes(plan.timeline));
          // ... and their Chrome traces number each host and lane alike.
          const [measuredTrace, predictedTrace] = [toChromeTrace(r.events, ig), toChromeTrace(plan.timeline, plan.ig)];
          expect(numbering(measuredTrace).size).toBe(2 + lanes(plan.timeline).size);
          expect(numbering(measuredTrace)).toEqual(numbering(predictedTrace));
          expect(r.events.some((e) => e.kind === 'barrier')).toBe(sync === 'barrier');
          expect(r.dropped).toBe(0);
          // One time axis: every event lies within the run.
          for (const e of r.events) {
            expect(e.end).toBeGreaterThanOrEqual(e.start);
            expect(e.start).toBeGreaterThan(-50_000);
            expect(e.end).toBeLessThan(r.seconds * 1e6 + 50_000);
          }
        } finally {
          c.close();
        }
      });
    }

  it('a transient value fails the run (consumer fires one cycle too early)', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const ig = compileOrThrow(piic({ iterations: 10 }), true);
      // Deliberately wrong latency: C starts a cycle before its input has arrived.
      ig.programs.fire.startCycle[ig.order.indexOf('C' as never)] -= 1;
      // Barrier mode: the trace's completeness below counts on barriers closing the cycles.
      const r = await c.run(ig, { iterations: 10, sync: 'barrier' }).done;
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({ host: 'h1', pe: 'cpu@h1', node: 'C', iteration: 0 });
      expect(r.failure?.message).toMatch(/element 0 is .*expected 2/);
      // The trace up to the failure is kept: every event of both hosts in the cycles before
      // C's first firing (a barrier closed each), and that firing.
      const first = ig.programs.fire.startCycle[ig.order.indexOf('C' as never)];
      const expected = [...finishedBefore(ig, 'h0', first, 10), ...finishedBefore(ig, 'h1', first, 10), eventKey('h1', 'fire', 'C', first)];
      expect(missing(expected, r.events.map(traceKey))).toEqual([]);
      // The agents are free again: the next run succeeds.
      const ok = await c.run(compileOrThrow(piic({ iterations: 3 }), true), { iterations: 3 }).done;
      expect(ok.ok).toBe(true);
    } finally {
      c.close();
    }
  });
});

describe('refusals', () => {
  it('an agent lacking a PE the document needs is refused with a message naming host and PE', async () => {
    const doc = piic();
    doc.arch.hosts[1].gpus = 2;
    doc.mapping.I2 = 'gpu1@h1';
    const ig = compileOrThrow(doc, true);
    const c = await connect(urls(), agentsOf().token);
    try {
      const problems = c.check(ig);
      expect(problems.map((d) => d.message)).toEqual([
        // The agent's cores first (cpu0@h1 ...), then its GPUs.
        expect.stringMatching(/^agent h1 \(ws:\/\/127\.0\.0\.1:\d+\) has no PE gpu1@h1; it serves cpu0@h1(, cpu\d+@h1)*, gpu0@h1/),
      ]);
      const r = await c.run(ig, { iterations: 2 }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toContain('has no PE gpu1@h1');
    } finally {
      c.close();
    }
  });

  it('a host without an agent is refused naming the host', async () => {
    const c = await connect([agentsOf().agents[0].url], agentsOf().token);
    try {
      expect(c.check(compileOrThrow(piic(), true)).map((d) => d.message)).toContain('no agent serves host h1 (connected agents serve: h0)');
    } finally {
      c.close();
    }
  });

  it('a wrong token is refused with a clear reason', async () => {
    await expect(connect(urls(), 'not-the-token')).rejects.toThrow(/agent at ws:\/\/127\.0\.0\.1:\d+ refused the connection: invalid token/);
  });
});

describe('granulometry example end to end', () => {
  it('finds the predominant size of the seeded volume', async () => {
    const doc = example('granulometry');
    // Small volume for CI: balls of radius 5, openings 1-8 on gpu0 and 9-12 on gpu1.
    for (const n of doc.app.nodes) {
      const p = (n.params ??= {});
      p.depth = p.height = p.width = 40;
      if ('radius' in p) Object.assign(p, { radius: 5, spheres: 6 });
      if ('levels' in p) p.levels = 13;
      if (n.id === 'open1') Object.assign(p, { first: 1, last: 8 });
      if (n.id === 'open2') Object.assign(p, { first: 9, last: 12 });
    }
    // h0's agent alone: the document has one host.
    const c = await connect([agentsOf().agents[0].url], agentsOf().token);
    try {
      const r = await c.run(compileOrThrow(doc, true), { iterations: 2 }).done;
      expect(r.failure).toBeUndefined();
      const curve = r.reports.filter((x) => x.node === 'curve');
      expect(curve.at(-1)?.values.predominant_size).toBe(5);
    } finally {
      c.close();
    }
  });
});

describe('pipeloom run (the CLI, local agents)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-run-'));
  const cliWith = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    spawnSync(process.execPath, [join(root, 'apps/agent/bin/pipeloom.js'), 'run', ...args], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, ...env },
    });
  const cli = (...args: string[]) => cliWith({}, ...args);

  it('runs P-I-I-C, prints throughput, cycle time, utilisation and predicted vs measured, writes the trace', () => {
    const file = join(tmp, 'piic.json');
    writeFileSync(file, JSON.stringify(piic({ iterations: 8 })));
    const r = cli(file, '--no-overlap', '--trace', join(tmp, 'trace.json'));
    expect(r.stderr).toContain('started 2 local agent(s)');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/run complete, without overlap, 8 iterations/);
    expect(r.stdout).toMatch(/throughput +\d/);
    expect(r.stdout).toMatch(/cycle time .* measured, .* predicted/);
    expect(r.stdout).toMatch(/cpu@h1 main +\d/);
    expect(r.stdout).toMatch(/barrier .*% of lane time in barriers, .*% waiting/);
    const written = JSON.parse(readFileSync(join(tmp, 'trace.json'), 'utf8')) as ChromeTrace;
    expect(written.traceEvents.length).toBeGreaterThan(0);
    // The file says what it is: document and hash, strategy, sync mode, calibration, agents.
    const agentVersion = (JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')) as { version: string }).version;
    expect(written.metadata).toEqual({
      source: 'measured',
      document: { name: piic().name, hash: documentHash(piic({ iterations: 8 })) },
      strategy: 'no-overlap',
      sync: 'self-timed',
      calibration: 'none',
      agents: { h0: agentVersion, h1: agentVersion },
    });
  });

  it('a failed check exits 1 naming host, node and iteration, and still writes the trace', () => {
    const doc = piic({ iterations: 5 });
    // One more than the two incrementers' increments (the example's "increments": "100,100"): a wrong expectation.
    doc.app.nodes.find((n) => n.id === 'C')!.params!.expected_offset = 1;
    const file = join(tmp, 'wrong.json');
    writeFileSync(file, JSON.stringify(doc));
    const trace = join(tmp, 'wrong-trace.json');
    const r = cli(file, '--sync', 'barrier', '--trace', trace);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/failed on host h1, node C, iteration 0: .*expected 3/);
    // Kept: every event of both hosts in the cycles before C's first firing, and that firing.
    const compiled = compile(doc, {});
    if (!compiled.ok) throw new Error('P-I-I-C must compile');
    const ig = compiled.ig;
    const first = ig.programs.fire.startCycle[ig.order.indexOf('C' as never)];
    const expected = [...finishedBefore(ig, 'h0', first, 5), ...finishedBefore(ig, 'h1', first, 5), eventKey('h1', 'fire', 'C', first)];
    expect(missing(expected, writtenKeys(trace))).toEqual([]);
  });

  /** Keys (testing/finished.ts) of the events in a written Chrome trace. */
  const writtenKeys = (file: string): string[] => {
    const events = (JSON.parse(readFileSync(file, 'utf8')) as { traceEvents: ChromeEvent[] }).traceEvents;
    const hosts = new Map<number, string>();
    const lanes = new Map<string, string>();
    for (const e of events) {
      if (e.name === 'process_name') hosts.set(e.pid, String(e.args?.name).replace(/^host /, ''));
      if (e.name === 'thread_name') lanes.set(`${e.pid} ${e.tid}`, String(e.args?.name));
    }
    return events
      .filter((e) => e.ph === 'X')
      .map((e) => {
        const what =
          e.cat === 'barrier' ? `${lanes.get(`${e.pid} ${e.tid}`)} ${e.name}` : e.cat === 'fire' ? String(e.args?.node) : String(e.args?.buffer ?? e.name);
        return eventKey(hosts.get(e.pid)!, e.cat!, what, Number(e.args?.cycle));
      });
  };

  it('a local agent that dies mid-run: exits 1 naming the host and how its process ended, and still writes the trace', () => {
    const doc = piic({ iterations: 1000 });
    const file = join(tmp, 'long.json');
    writeFileSync(file, JSON.stringify(doc));
    const trace = join(tmp, 'killed-trace.json');
    // Fault injection (pe-worker.ts): h1's agent kills its own process once cycles 0-4 are done.
    const r = cliWith({ PIPELOOM_FAULT: 'kill:gpu0@h1:5' }, file, '--sync', 'barrier', '--trace', trace);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/failed on host h1: /);
    expect(r.stderr).toContain('pipeloom run: local agent h1 exited (signal SIGKILL)');
    // Cycles 0-4 closed with a cluster barrier, so every event of h0 (the agent still up) in
    // them had finished: all of them are in the trace, its PE threads' last batches included.
    // h1 keeps only what it had streamed before it died, which may be nothing this early
    // (faults.test.ts checks those against what the coordinator had received).
    const compiled = compile(doc, {});
    if (!compiled.ok) throw new Error('P-I-I-C must compile');
    const written = writtenKeys(trace);
    expect(missing(finishedBefore(compiled.ig, 'h0', 5, 1000), written)).toEqual([]);
    expect(written.filter((k) => k.startsWith('h1 ') && Number(k.split('@')[1]) > 5)).toEqual([]);
  });

  it('an invalid document exits 2 with diagnostics', () => {
    const doc = piic();
    doc.mapping.P = 'cpu@nowhere';
    const file = join(tmp, 'invalid.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = cli(file);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/mapping/);
  });
});
