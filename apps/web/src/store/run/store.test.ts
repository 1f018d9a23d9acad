import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BagGraph, type ProjectDocument, type WrittenDocument, type TraceEvent, toChromeTrace } from '@pipeloom/core';
import { spawnLocalAgents, type LocalAgents } from '@pipeloom/agent/local/spawn';
import { readFileSync } from 'node:fs';
import { compileOrThrow, example, piic, root, wsConnect } from '@pipeloom/agent/testing/fixtures';
import { loadKernelPackages } from '@pipeloom/agent/kernels/load';
import { readDocument } from '../../document/documents.js';
import { compileBoth } from '../../worker/compile.js';
import { createRunStore } from './store.js';
import { CALIBRATE_ITERATIONS, freshness, type BagNumbers } from './state.js';

// The Run view's store against real agent processes on loopback (the same coordinator the
// browser uses, over `ws` instead of the browser's WebSocket).

/** examples/mlem.json in task-bag mode at 8^3 and 12 angles: a task takes milliseconds on llvmpipe or a CPU. */
function smallMlem(iterations: number, edit: (doc: WrittenDocument) => void = () => {}): WrittenDocument {
  const doc = readDocument(readFileSync(new URL('../../../../../examples/mlem.json', import.meta.url), 'utf8')).doc!;
  const params = doc.params as Record<string, { value: number }>;
  params.N.value = 8;
  params.A.value = 12;
  doc.options = { ...doc.options, mode: 'taskbag', iterations, window: 2, prefetch: 2 };
  edit(doc);
  return doc;
}

/** The task graph the compile worker hands the Run view. */
async function bagOf(doc: WrittenDocument): Promise<BagGraph> {
  const out = await compileBoth(doc);
  expect(out.bag?.diagnostics).toEqual([]);
  return out.bag!.graph!;
}

const ev = (start: number, end: number, over: Partial<TraceEvent> = {}): TraceEvent => ({
  host: 'h0',
  pe: 'gpu0@h0',
  thread: 'main',
  kind: 'fire',
  name: 'I1',
  iteration: 0,
  cycle: 0,
  start,
  end,
  ...over,
});

describe('run store without agents', () => {
  it('live batches land in the column store; cycle time and per-lane utilisation follow them', () => {
    const run = createRunStore({ connect: wsConnect });
    // Cycle 0 ends at 100 µs, cycle 1 at 300; cycle 2's events are still arriving.
    run.ingest([ev(0, 50), ev(50, 100, { kind: 'wait', name: 'wait bn_1' })]);
    run.ingest([ev(0, 25, { thread: 'send:cpu@h1', kind: 'transfer', name: 'bn_2', bytes: 4096 })]);
    run.ingest([ev(100, 150, { cycle: 1 }), ev(150, 300, { cycle: 1, kind: 'wait', name: 'wait bn_1' }), ev(300, 400, { cycle: 2 })]);
    run.progress({ cycle: 1, cycles: 10, elapsed: 0.5, iterationsPerSecond: 4 });
    run.progress({ cycle: 2, cycles: 10, elapsed: 1.0, iterationsPerSecond: 6 });
    run.publish();
    const s = run.store.getState();
    expect(run.measured().length).toBe(6);
    expect(s.traceVersion).toBe(run.measured().version);
    expect(s.live.events).toBe(6);
    expect(s.live.cycle).toBe(2);
    expect(s.live.iterationsPerSecond).toBe(6);
    // Cycle 1, the one complete after the first: 300 - 100 µs.
    expect(s.live.cycleTime).toBeCloseTo(200e-6, 12);
    // Of the 400 µs span: 200 firing on the main lane, 25 sending.
    expect(s.live.utilisation).toEqual([
      { key: 'h0/gpu0@h0/main', value: 0.5 },
      { key: 'h0/gpu0@h0/send:cpu@h1', value: 0.0625 },
    ]);
  });

  it('connecting with no URL says what to enter', async () => {
    const run = createRunStore({ connect: wsConnect });
    await run.connect();
    expect(run.store.getState()).toMatchObject({ connection: 'failed', connectError: expect.stringContaining('agent URL') });
  });

  it("the strategy is not the run store's: seeding takes iterations and sync from the document, never overlap", () => {
    const run = createRunStore({ connect: wsConnect });
    expect(run.seed({ iterations: 7, sync: 'barrier' })).toBe(true);
    expect(run.store.getState()).toMatchObject({ iterations: 7, sync: 'barrier' });
    expect('overlap' in run.store.getState()).toBe(false);
  });

  it('an edit marks results of an earlier revision; a load clears the check, the results and the trace', () => {
    const run = createRunStore({ connect: wsConnect });
    run.observe({ revision: 4, loads: 1 });
    expect(freshness(run.store.getState())).toBe('none');
    // What a finished run leaves (start() sets `ran` through deploy).
    run.ingest([ev(0, 50)]);
    run.store.setState({ ran: { revision: 4, loads: 1 }, status: 'done', result: { ok: true, seconds: 1, cycles: 3, reports: [], dropped: 0 } });
    expect(freshness(run.store.getState())).toBe('current');
    run.observe({ revision: 5, loads: 1 });
    expect(freshness(run.store.getState())).toBe('modified');
    expect(run.store.getState().result?.ok).toBe(true);
    expect(run.measured().length).toBe(1);
    // Undoing is an edit too: the revision moves on, the results stay of revision 4.
    run.observe({ revision: 6, loads: 1 });
    expect(freshness(run.store.getState())).toBe('modified');
    run.observe({ revision: 7, loads: 2 });
    const s = run.store.getState();
    expect(freshness(s)).toBe('none');
    expect(s).toMatchObject({ status: 'idle', result: undefined, failure: undefined, problems: [] });
    expect(run.measured().length).toBe(0);
  });

  it("opens a saved task-bag trace in place of the last run's; a file that is not a trace leaves it and says why", () => {
    const run = createRunStore({ connect: wsConnect });
    run.ingest([ev(0, 50)]);
    const saved = [
      ev(0, 40, { name: 'projbp[1]@0 (2)', node: 'projbp', cycle: -1, task: { id: 'projbp[1]@0', share: 1, attempt: 2 } }),
      {
        host: 'coordinator',
        pe: 'bag',
        thread: 'bag',
        kind: 'counter',
        name: 'bag depth',
        value: 3,
        start: 0,
        end: 0,
        iteration: -1,
        cycle: -1,
      } satisfies TraceEvent,
    ];
    expect(run.openTrace(JSON.stringify(toChromeTrace(saved)), 'bag.json')).toBe(true);
    expect(run.measured().toEvents()).toEqual(saved);
    expect(run.store.getState()).toMatchObject({ opened: { file: 'bag.json', events: 2 }, traceProblems: [], live: { events: 2 } });
    // Busy time is the fire's alone: the bag's lane is no lane of the run.
    expect(run.store.getState().live.utilisation.map((u) => u.key)).toEqual(['h0/gpu0@h0/main']);
    expect(run.openTrace('{"format":"pipeloom/v1"}', 'project.json')).toBe(false);
    expect(run.store.getState().traceProblems[0]).toMatchObject({ path: 'project.json: traceEvents', message: 'is missing: this is not a Chrome trace' });
    expect(run.measured().length).toBe(2);
    expect(run.openTrace(null, 'huge.json', 2 ** 40)).toBe(false);
    expect(run.store.getState().traceProblems[0].message).toMatch(/^is 1048576 MiB, more than the 512 MiB/);
  });

  it('deploy before connecting is a problem naming the fix, not an exception', () => {
    const run = createRunStore({ connect: wsConnect });
    expect(run.deploy(compileOrThrow(piic(), true))).toBe(false);
    expect(run.store.getState().problems[0]).toMatchObject({ message: 'not connected to any agent', hint: expect.stringContaining('Connect') });
  });

  it('a task-bag deploy or start before connecting is the same problem, and starts nothing', async () => {
    const run = createRunStore({ connect: wsConnect });
    const graph = (await compileBoth(smallMlem(2))).bag!.graph!;
    expect(run.deployBag(graph)).toBe(false);
    expect(await run.startBag(graph)).toBeNull();
    expect(run.store.getState()).toMatchObject({ status: 'idle', problems: [expect.objectContaining({ message: 'not connected to any agent' })] });
  });
});

describe('run store with real agents h0 and h1', () => {
  let agents: LocalAgents;
  // The agents' own log, shown by an assertion about the connection when it fails.
  const agentLog: string[] = [];
  const lastLog = () => `agents' last lines:\n${agentLog.slice(-20).join('\n')}`;
  beforeAll(async () => {
    agents = await spawnLocalAgents(['h0', 'h1'], { log: (host, line) => agentLog.push(`[${host}] ${line}`) });
  });
  afterAll(async () => {
    await agents?.stop();
  });
  const connected = async () => {
    const run = createRunStore({ connect: wsConnect, publishMs: 50 });
    run.setFields({ urls: agents.agents.map((a) => a.url).join(', '), token: agents.token });
    await run.connect();
    expect(run.store.getState(), lastLog()).toMatchObject({ connection: 'connected', connectError: undefined });
    return run;
  };

  it('a wrong token is refused with the agent named', async () => {
    const run = createRunStore({ connect: wsConnect });
    run.setFields({ urls: agents.agents[0].url, token: 'wrong' });
    await run.connect();
    const s = run.store.getState();
    expect(s.connection).toBe('failed');
    expect(s.connectError).toContain(agents.agents[0].url);
    run.dispose();
  });

  it('connects, lists each agent with its PEs, runs P-I-I-C and fills a lane per thread', async () => {
    const run = await connected();
    try {
      const s0 = run.store.getState();
      expect(s0.connection).toBe('connected');
      expect(s0.agents.map((a) => a.host).sort()).toEqual(['h0', 'h1']);
      // An agent's CPU PEs are its cores, cpu0@h0 first (the document's cpu@h0).
      expect(s0.agents.find((a) => a.host === 'h0')!.pes.map((p) => p.id)).toEqual(expect.arrayContaining(['cpu0@h0', 'gpu0@h0']));
      const ig = compileOrThrow(piic({ iterations: 12 }), true);
      expect(run.deploy(ig)).toBe(true);
      expect(run.store.getState().status).toBe('checked');
      run.setFields({ iterations: 12 });
      const seen: string[] = [];
      const unsub = run.store.subscribe((s) => seen.push(s.status));
      const result = await run.start(ig);
      unsub();
      expect(result?.ok).toBe(true);
      expect(seen).toContain('running');
      const s = run.store.getState();
      expect(s.status).toBe('done');
      expect(s.streaming).toBe(false);
      expect(s.result).toMatchObject({ ok: true });
      const m = run.measured();
      expect(m.length).toBe(result!.eventCount);
      const lanes = m.lanes().map((l) => `${l.host}/${l.pe}/${l.thread}`);
      expect(lanes).toEqual(
        expect.arrayContaining(['h0/cpu@h0/main', 'h0/gpu0@h0/main', 'h1/gpu0@h1/main', 'h1/cpu@h1/main', 'h0/cpu@h0/send:cpu@h1', 'h1/cpu@h1/recv:cpu@h0']),
      );
      for (let l = 0; l < m.laneCount; l++) expect(m.laneLength(l)).toBeGreaterThan(0);
      // The consumer fired every iteration.
      const consumer = m.toEvents().filter((e) => e.kind === 'fire' && e.name === 'C');
      expect(consumer.map((e) => e.iteration)).toEqual(Array.from({ length: 12 }, (_, i) => i));
      expect(s.live.events).toBe(m.length);
      expect(s.live.cycle).toBeGreaterThanOrEqual(12);
      expect(s.live.iterationsPerSecond).toBeGreaterThan(0);
      expect(s.live.utilisation.length).toBe(m.laneCount);
      // The export: one complete event per measured event, hosts as processes, with flows from the run's graph.
      expect(run.runGraph()).toBe(ig);
      const chrome = toChromeTrace(m.toEvents(), run.runGraph()!);
      expect(chrome.traceEvents.filter((e) => e.ph === 'X')).toHaveLength(m.length);
      expect(chrome.traceEvents.some((e) => e.ph === 's')).toBe(true);
      expect(chrome.traceEvents.filter((e) => e.name === 'process_name').map((e) => e.args?.name)).toEqual(expect.arrayContaining(['host h0', 'host h1']));
    } finally {
      run.dispose();
    }
  });

  it('stop ends the run as stopped and keeps the trace so far', async () => {
    const run = await connected();
    try {
      const ig = compileOrThrow(piic({ iterations: 100_000 }), true);
      run.setFields({ iterations: 100_000 });
      const done = run.start(ig);
      // Wait for some events (however long a loaded machine takes to deploy), then stop.
      while (run.measured().length < 20 && run.store.getState().status !== 'failed') await new Promise((r) => setTimeout(r, 25));
      expect(run.store.getState().failure).toBeUndefined();
      run.stop();
      const result = await done;
      expect(result?.ok).toBe(false);
      const s = run.store.getState();
      expect(s.status).toBe('stopped');
      expect(s.failure?.message).toContain('stopped by the user');
      expect(run.measured().length).toBeGreaterThan(0);
    } finally {
      run.dispose();
    }
  }, 300_000);

  it('a generic.work prototype run from the designer lasts its cost hints: each firing at least its stand-in time', async () => {
    // As the designer opens it (normalised), run 6 iterations.
    const doc = readDocument(readFileSync(new URL('../../../../../examples/generic-work.json', import.meta.url), 'utf8')).doc!;
    // The GPU stages cost tens of ms (their kernels write zeros in well under one): only padding makes them last that long.
    for (const n of doc.app.nodes) if (n.id === 'left' || n.id === 'right') n.params = { ...n.params, flops: n.id === 'left' ? 3e10 : 1.5e10 };
    // What the Run view starts with: the compile worker's IG and stand-in times (core standInTimes).
    const out = await compileBoth(doc);
    expect(out.standIns && Object.keys(out.standIns).sort()).toEqual(['left', 'read', 'right', 'write']);
    const run = await connected();
    try {
      run.setFields({ iterations: 6 });
      const result = await run.start(out.overlap!.ig, { emulateDevices: out.standIns });
      expect(result?.ok, JSON.stringify(result?.failure)).toBe(true);
      const fires = run
        .measured()
        .toEvents()
        .filter((e) => e.kind === 'fire');
      expect(fires.length).toBe(4 * 6);
      for (const f of fires) expect(f.end - f.start, f.name).toBeGreaterThanOrEqual(out.standIns![f.node!] * 1e6 - 1);
      expect(out.standIns!.left).toBeGreaterThan(0.02);
    } finally {
      run.dispose();
    }
  });

  it('Deploy after an edit checks the document as it is and drops the run of the earlier revision', async () => {
    const run = await connected();
    try {
      run.observe({ revision: 1, loads: 1 });
      run.setFields({ iterations: 4 });
      expect((await run.start(compileOrThrow(piic(), true)))?.ok).toBe(true);
      expect(freshness(run.store.getState())).toBe('current');
      run.observe({ revision: 2, loads: 1 });
      expect(freshness(run.store.getState())).toBe('modified');
      expect(run.deploy(compileOrThrow(piic(), false))).toBe(true);
      const s = run.store.getState();
      expect(freshness(s)).toBe('current');
      expect(s).toMatchObject({ status: 'checked', result: undefined });
      expect(run.measured().length).toBe(0);
    } finally {
      run.dispose();
    }
  });

  it("Calibrate runs each strategy's fill plus the steady cycles in barrier mode and measures every firing and transfer", async () => {
    const run = await connected();
    try {
      const doc = piic();
      const compiled = { overlap: compileOrThrow(doc, true), noOverlap: compileOrThrow(doc, false) };
      const seen: string[] = [];
      const unsub = run.store.subscribe((st) => {
        const k = `${st.status} ${st.calibration?.strategy ?? ''}`;
        if (seen[seen.length - 1] !== k) seen.push(k);
      });
      const cal = await run.calibrate(doc, compiled, () => new Date('2026-11-27T10:00:00Z'));
      unsub();
      expect(cal, JSON.stringify(run.store.getState().calibration)).not.toBeNull();
      expect(seen).toEqual(expect.arrayContaining(['calibrating no overlap', 'calibrating overlap']));
      expect(run.store.getState().status).toBe('idle');
      expect(cal!.iterations).toBe(CALIBRATE_ITERATIONS);
      expect(cal!.date).toBe('2026-11-27T10:00:00.000Z');
      expect(cal!.machine.hostname).toBe('h0, h1');
      // Every node on its PE, under each strategy; every transfer of the plan.
      expect(new Set(cal!.firings.map((f) => `${f.kernel}@${f.pe}`))).toEqual(
        new Set(['matrix.produce@cpu@h0', 'matrix.increment@gpu0@h0', 'matrix.increment@gpu0@h1', 'matrix.consume@cpu@h1']),
      );
      for (const f of cal!.firings) expect(f.seconds).toBeGreaterThan(0);
      expect(cal!.transfers.length).toBeGreaterThanOrEqual(3);
    } finally {
      run.dispose();
    }
  });

  it('a task-bag run of MLEM: live bag numbers while it runs; at the end every task committed once, tasks per PE, the bag counter tracks and one task slice per task', async () => {
    const doc = smallMlem(4);
    const graph = await bagOf(doc);
    const run = await connected();
    try {
      run.setFields({ iterations: 4 });
      const live: BagNumbers[] = [];
      const unsub = run.store.subscribe((s) => s.status === 'running' && s.bag && live[live.length - 1] !== s.bag && live.push(s.bag));
      const result = await run.startBag(graph, { window: doc.options.window, prefetch: doc.options.prefetch });
      unsub();
      expect(result?.ok, JSON.stringify(result?.failure)).toBe(true);
      const s = run.store.getState();
      const tasks = 4 * graph.nodes.length;
      expect(s).toMatchObject({ status: 'done', mode: 'taskbag', streaming: false, failure: undefined, problems: [] });
      // Published while running: it starts from none committed of all the run's tasks, and only grows.
      expect(live[0]).toMatchObject({ tasks, committed: 0 });
      for (let i = 1; i < live.length; i++) expect(live[i].committed).toBeGreaterThanOrEqual(live[i - 1].committed);
      expect(s.bag).toEqual({ tasks, committed: tasks, requeued: 0, discarded: 0, recomputed: 0, depth: 0, inFlight: 0 });
      expect(s.result?.bag).toMatchObject({ tasks, committed: tasks, discarded: 0 });
      const perPe = s.result!.bag!.perPe;
      expect(Object.values(perPe).reduce((a, b) => a + b, 0)).toBe(tasks);
      // The agents' PEs: their cores (cpu0@h0 ...) and GPUs.
      for (const pe of Object.keys(perPe)) expect(pe).toMatch(/^(cpu\d+|gpu0)@h[01]$/);
      expect(s.live.cycle).toBe(4);
      // Per iteration: the run's time over its iterations (no cycles to analyse).
      expect(s.live.cycleTime).toBeCloseTo(result!.seconds / 4, 9);
      // The trace streamed into the column store: one slice per task id, named node@iteration, and the coordinator's counters.
      const events = run.measured().toEvents();
      const fires = events
        .filter((e) => e.kind === 'fire')
        .map((e) => e.name)
        .sort();
      expect(fires).toEqual(graph.nodes.flatMap((n) => [0, 1, 2, 3].map((i) => `${n.id}@${i}`)).sort());
      const counters = new Set(events.filter((e) => e.kind === 'counter').map((e) => `${e.host}/${e.pe} ${e.name}`));
      expect(counters).toEqual(new Set(['coordinator/bag bag depth', 'coordinator/bag in flight']));
      expect(run.runGraph()).toBeNull();
    } finally {
      run.dispose();
    }
  });

  it('Deploy in task-bag mode checks the pool: a node no connected PE can run lists each PE with why and the fix, and Start refuses it', async () => {
    // software=false: every GPU here is llvmpipe, and a CPU PE is no hardware adapter either.
    const graph = await bagOf(smallMlem(2, (doc) => (doc.app.nodes.find((n) => n.id === 'update')!.requires = ['software=false'])));
    const run = await connected();
    try {
      expect(run.deployBag(graph)).toBe(false);
      const [p, ...more] = run.store.getState().problems;
      expect(more).toEqual([]);
      expect(p.message).toMatch(/^node "update" has no PE to run on among the connected agents: /);
      for (const pe of ['cpu0@h0', 'gpu0@h0', 'cpu0@h1', 'gpu0@h1']) expect(p.message).toContain(`${pe} on ${pe.split('@')[1]}: fails software=false`);
      expect(p.hint).toContain('relax the requirement');
      expect(run.store.getState()).toMatchObject({ status: 'idle', mode: 'taskbag' });
      expect(await run.startBag(graph)).toBeNull();
      expect(run.measured().length).toBe(0);
      // Without the requirement it passes.
      expect(run.deployBag(await bagOf(smallMlem(2)))).toBe(true);
      expect(run.store.getState()).toMatchObject({ status: 'checked', problems: [] });
    } finally {
      run.dispose();
    }
  });

  it('a task that fails on every try fails the task-bag run naming host, node and iteration; the trace so far is kept', async () => {
    // P-I-I-C whose consumer expects 5 more than the incrementers add: C@0 fails its check each time.
    const doc = piic({ iterations: 3 });
    doc.options = { ...doc.options, mode: 'taskbag' };
    doc.app.nodes = doc.app.nodes.map((n) => (n.id === 'C' ? { ...n, params: { ...n.params, expected_offset: 5 } } : n));
    // As the designer holds it (normalised: every PE explicit).
    const graph = await bagOf(readDocument(JSON.stringify(doc)).doc!);
    const run = await connected();
    try {
      run.setFields({ iterations: 3 });
      // Window 1: iteration 1's tasks wait for iteration 0, so C@0 is the one that fails.
      const result = await run.startBag(graph, { window: 1 });
      expect(result?.ok).toBe(false);
      const s = run.store.getState();
      expect(s.status).toBe('failed');
      expect(s.failure).toMatchObject({
        node: 'C',
        iteration: 0,
        message: expect.stringMatching(/^task C@0 of node "C" .* failed 3 times, last on agent h[01]: .*expected/),
      });
      expect(['h0', 'h1']).toContain(s.failure!.host);
      expect(s.result).toMatchObject({ ok: false, bag: { committed: expect.any(Number) } });
      expect(s.bag!.committed).toBeLessThan(s.bag!.tasks);
      // The committed tasks' slices stay for the timeline and the export.
      expect(
        run
          .measured()
          .toEvents()
          .filter((e) => e.kind === 'fire')
          .map((e) => e.name),
      ).toEqual(expect.arrayContaining(['P@0', 'I1@0', 'I2@0']));
    } finally {
      run.dispose();
    }
  });

  it('Stop ends a task-bag run as stopped and keeps the trace so far', async () => {
    const graph = await bagOf(smallMlem(10_000));
    const run = await connected();
    try {
      run.setFields({ iterations: 10_000 });
      const done = run.startBag(graph);
      // Wait for some tasks to commit (the live numbers are published every 50 ms), then stop.
      await new Promise<void>((resolve) => {
        const unsub = run.store.subscribe((s) => {
          if ((s.bag?.committed ?? 0) >= 6) {
            unsub();
            resolve();
          }
        });
      });
      run.stop();
      const result = await done;
      expect(result?.ok).toBe(false);
      const s = run.store.getState();
      expect(s.status).toBe('stopped');
      expect(s.failure?.message).toContain('stopped by the user');
      expect(s.bag!.committed).toBeGreaterThanOrEqual(6);
      expect(run.measured().length).toBeGreaterThan(0);
    } finally {
      run.dispose();
    }
  });

  it('a plan naming a host no agent serves is refused at deploy with the host named', async () => {
    const run = createRunStore({ connect: wsConnect });
    run.setFields({ urls: agents.agents[0].url, token: agents.token });
    await run.connect();
    try {
      expect(run.store.getState(), lastLog()).toMatchObject({ connection: 'connected', connectError: undefined });
      expect(run.deploy(compileOrThrow(piic(), true))).toBe(false);
      expect(
        run.store
          .getState()
          .problems.map((p) => p.message)
          .join('\n'),
      ).toContain('no agent serves host h1');
      expect(await run.start(compileOrThrow(piic(), true))).toBeNull();
    } finally {
      run.dispose();
    }
  });
});

describe("a run's deploy in the store, on real agents", () => {
  it("each host's step shows as the agents report it, and the deploy time limit fails a deploy still under way, naming it", async () => {
    // I2 (on gpu0@h1) prepares its kernel for ten minutes: the deploy is still under way at the limit.
    const slow = `${root}apps/agent/src/testing/slow-prepare`;
    await loadKernelPackages([slow]);
    const doc = piic({ iterations: 2, size: 16 });
    const i2 = doc.app.nodes.find((n) => n.id === 'I2')!;
    i2.kernel = 'test.slowprep';
    i2.params = { ...i2.params, prepare_ms: 600_000 };
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 }, args: ['--kernels', slow] });
    const run = createRunStore({ connect: wsConnect, publishMs: 50 });
    try {
      expect(run.store.getState().deployTimeout).toBe(0);
      run.setFields({ urls: local.agents.map((a) => a.url).join(','), token: local.token, deployTimeout: 20 });
      await run.connect();
      const seen = new Set<string>();
      run.store.subscribe((s) => s.deploy?.hosts.forEach((h) => h.steps.forEach((x) => seen.add(`${h.host}: ${x.step}${x.pe ? ` of ${x.pe}` : ''}`))));
      const r = await run.start(compileOrThrow(doc, false));
      expect(r?.ok).toBe(false);
      expect(run.store.getState().status).toBe('failed');
      expect(run.store.getState().failure?.message).toMatch(/^deploy: .*h1 still in .* after the 20 s deploy time limit \(Run settings\)$/);
      expect(seen).toContain('h1: device of gpu0@h1');
      expect(seen).toContain('h0: device of gpu0@h0');
    } finally {
      run.dispose();
      await local.stop();
    }
  }, 120_000);
});

describe('run store with a supervised agent (as npm start serves them)', () => {
  it('an agent killed mid-run: that run fails naming it, the store shows reconnecting to it, logs in again once it is restarted, and the next run works', async () => {
    const local = await spawnLocalAgents(['h0'], { restart: true, cpuOnly: ['h0'] });
    const run = createRunStore({ connect: wsConnect, publishMs: 50 });
    try {
      run.setFields({ urls: local.agents[0].url, token: local.token });
      await run.connect();
      expect(run.store.getState().connection).toBe('connected');
      const seen: { connection: string; lost?: string[] }[] = [];
      run.store.subscribe((s) => seen.push({ connection: s.connection, lost: s.lost }));
      const reconnected = new Promise<void>((resolve) =>
        run.store.subscribe((s, prev) => s.connection === 'connected' && prev.connection === 'reconnecting' && resolve()),
      );
      const ig = compileOrThrow(example('split-join'), false);
      const first = local.agents[0].process;
      run.setFields({ iterations: 1_000_000 });
      const killed = run.store.subscribe((s) => {
        if (s.live.cycle > 3) {
          killed();
          first.kill('SIGKILL');
        }
      });
      const r = await run.start(ig);
      expect(r?.ok).toBe(false);
      expect(run.store.getState()).toMatchObject({ status: 'failed', failure: { host: 'h0' } });
      await reconnected;
      expect(seen).toContainEqual({ connection: 'reconnecting', lost: ['h0'] });
      expect(run.store.getState()).toMatchObject({ connection: 'connected', lost: undefined, connectError: undefined });
      expect(local.agents[0].process).not.toBe(first);
      run.setFields({ iterations: 3 });
      const again = await run.start(ig);
      expect(again?.failure).toBeUndefined();
      expect(again?.ok).toBe(true);
    } finally {
      run.dispose();
      await local.stop();
    }
  });

  it('Disconnect while reconnecting stops trying', async () => {
    const local = await spawnLocalAgents(['h0'], { cpuOnly: ['h0'] });
    const run = createRunStore({ connect: wsConnect });
    try {
      run.setFields({ urls: local.agents[0].url, token: local.token });
      await run.connect();
      const reconnecting = new Promise<void>((resolve) => run.store.subscribe((s) => s.connection === 'reconnecting' && resolve()));
      // Not supervised: it stays down, and the store keeps trying until told to stop.
      await local.stop();
      await reconnecting;
      // Nothing starts on the connection that went.
      expect(run.deploy(compileOrThrow(example('split-join'), false))).toBe(false);
      expect(run.store.getState().problems[0]).toMatchObject({ message: 'reconnecting to h0', hint: expect.stringContaining('Connect') });
      const tried = new Promise<void>((resolve) => run.store.subscribe((s) => s.connectError !== undefined && resolve()));
      await tried;
      expect(run.store.getState().connectError).toMatch(/refused the connection.*\(trying again in \d+ s\)$/);
      run.disconnect();
      expect(run.store.getState()).toMatchObject({ connection: 'disconnected', lost: undefined });
    } finally {
      run.dispose();
    }
  });
});
