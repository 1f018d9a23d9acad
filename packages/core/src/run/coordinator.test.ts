import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { programHosts } from '../compile/decode.js';
import { layeredDocument } from '../testing/generate.js';
import { type ProjectDocument, SYNC_MODES } from '../document/types.js';
import { Coordinator, deployMessages, deployTexts, type DeploySettings } from './coordinator.js';
import type { DeployProgress } from './deploy-watch.js';
import type { DeployStepReport, FromAgent } from './protocol.js';
import type { ImplementationGraph } from '../compile/types.js';
import { analyze } from '../document/validate.js';
import { bagGraph } from './taskbag/graph.js';
import { fakeAgents } from '../testing/fake-agent.js';

// The deploys themselves, as agents receive them (deploy-check.test.ts runs them through a real
// Coordinator and the agents' check).

const dir = new URL('../../../../examples/', import.meta.url);
const examples = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f, doc: JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as unknown }));
const readExample = (name: string) => JSON.parse(readFileSync(new URL(`${name}.json`, dir), 'utf8')) as ProjectDocument;

describe('deploy messages', () => {
  it("each host's text is JSON.stringify of its message, byte for byte, with the shared parts serialised once", () => {
    const docs = [...examples, { name: 'layered 300 on 6 hosts', doc: layeredDocument(3, { nodes: 300, hosts: 6, gpus: 2 }) }];
    let checked = 0;
    for (const { doc } of docs) {
      for (const overlap of [true, false]) {
        // Examples needing kernels from a package (--kernels) do not compile here.
        const r = compile(doc, { overlap });
        if (!r.ok) continue;
        const hosts = programHosts(r.ig).map((id) => ({ id, url: `ws://${id}` }));
        for (const sync of SYNC_MODES) {
          for (const extra of [{}, { linkRate: 1e9, emulateLinks: true, emulateDevices: { x: 1e-3 } }]) {
            const settings: DeploySettings = { runId: 'r', secret: 's', hosts, iterations: 7, cycles: 12, sync, ...extra };
            const messages = deployMessages(r.ig, settings);
            const texts = deployTexts(messages);
            expect([...texts.keys()]).toEqual(hosts.map((h) => h.id));
            for (const [host, m] of messages) expect(texts.get(host)).toBe(JSON.stringify(m));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("a host gets its own PEs' programs and, self-timed, their plan entries and every counter", () => {
    const r = compile(layeredDocument(5, { nodes: 200, hosts: 4, gpus: 1 }), { overlap: true });
    if (!r.ok) throw new Error('does not compile');
    const hosts = programHosts(r.ig).map((id) => ({ id, url: `ws://${id}` }));
    const messages = deployMessages(r.ig, { runId: 'r', secret: 's', hosts, iterations: 3, cycles: 9, sync: 'self-timed' });
    const counters = messages.get(hosts[0].id)!.plan!.counters;
    for (const { id } of hosts) {
      const m = messages.get(id)!;
      const pes = r.ig.programs.pes.filter((p) => p.host === id).map((p) => p.pe);
      expect(m.programs.map((p) => p.pe)).toEqual(pes);
      expect(Object.keys(m.plan!.actions)).toEqual(pes);
      expect(m.plan!.counters).toBe(counters);
    }
    expect(deployMessages(r.ig, { runId: 'r', secret: 's', hosts, iterations: 3, cycles: 9, sync: 'barrier' }).get(hosts[0].id)!.plan).toBeUndefined();
  });
});

// A deploy on a fake clock: in-memory agents answer as a real one would, on a timetable the
// test sets, and the test moves time on. Nothing waits for real time.

class FakeClock {
  t = 1_700_000_000_000;
  private timers: { at: number; id: number; fn: () => void }[] = [];
  private ids = 0;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.ids;
    this.timers.push({ at: this.t + ms, id, fn });
    return id;
  };
  clearTimeout = (id: never) => {
    this.timers = this.timers.filter((x) => x.id !== (id as unknown as number));
  };
  /** Runs every timer due within `ms`, in order, letting messages in flight land after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const next = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next) break;
      this.timers = this.timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
    await settle();
  }
}
const settle = () => new Promise<void>((r) => setImmediate(r));

/** What a fake agent does once it gets its deploy: `send` a message now, or `at` ms (fake) after the deploy. */
type Script = (io: { send: (m: FromAgent) => void; at: (ms: number, m: FromAgent) => void; runId: string }) => void;

async function fakeCluster(ig: ImplementationGraph, clock: FakeClock, scripts: Record<string, Script>) {
  const connect = fakeAgents(ig, clock, (m, { host, send }) => {
    if (m.type === 'deploy' || m.type === 'bag-deploy') {
      expect(m.progressMs).toBe(1000);
      scripts[host]({ send, at: (ms, a) => clock.setTimeout(() => send(a), ms), runId: m.runId });
    } else if (m.type === 'start') {
      send({ type: 'started', runId: m.runId });
      if (ig.programs.pes.length) send({ type: 'done', runId: m.runId, cycles: 1, barrierPerCycle: 0, reports: [] });
    }
  });
  return Coordinator.connect(['mem://h0', 'mem://h1'], { token: 't', connect, clock });
}

/** An agent that reports `steps` at once and repeats them every second until `deployedAt` ms (never, if undefined). */
const reporting =
  (steps: DeployStepReport[], deployedAt?: number): Script =>
  ({ send, at, runId }) => {
    send({ type: 'deploy-progress', runId, steps });
    const end = deployedAt ?? 10 * 60_000;
    for (let t = 1000; t < end; t += 1000) at(t, { type: 'deploy-progress', runId, steps });
    if (deployedAt !== undefined) at(deployedAt, { type: 'deployed', runId, adapters: {}, allocated: {} });
  };

/** An agent that reports `steps` once, then says nothing more. */
const silentAfter =
  (steps: DeployStepReport[]): Script =>
  ({ send, runId }) =>
    send({ type: 'deploy-progress', runId, steps });

describe('a deploy waits on progress, not on a fixed time', () => {
  const ig = () => {
    const r = compile(readExample('piic'), { overlap: true });
    if (!r.ok) throw new Error('piic does not compile');
    return r.ig;
  };

  it('a slow deploy that keeps reporting succeeds after 60 s, past the old 10 and 20 s limits, and its steps are shown', async () => {
    const clock = new FakeClock();
    const c = await fakeCluster(ig(), clock, { h0: reporting([{ step: 'kernels', pe: 'gpu0@h0' }], 60_000), h1: reporting([{ step: 'links' }], 45_000) });
    const shown: DeployProgress[] = [];
    const run = c.run(ig(), { iterations: 1, onDeploy: (p) => shown.push(p) });
    await clock.advance(61_000);
    const r = await run.done;
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(shown[0].hosts).toEqual([
      { host: 'h0', steps: [{ step: 'kernels', pe: 'gpu0@h0' }], deployed: false },
      { host: 'h1', steps: [], deployed: false },
    ]);
    expect(shown.at(-1)).toMatchObject({
      elapsed: 60,
      hosts: [
        { host: 'h0', deployed: true },
        { host: 'h1', deployed: true },
      ],
    });
  });

  it('a host silent for the silence bound fails the deploy naming the host and its step', async () => {
    const clock = new FakeClock();
    const c = await fakeCluster(ig(), clock, { h0: reporting([{ step: 'links' }]), h1: silentAfter([{ step: 'device', pe: 'gpu0@h1' }]) });
    let failed = false;
    const run = c.run(ig(), { iterations: 1 });
    void run.done.then(() => (failed = true));
    await clock.advance(29_000);
    expect(failed).toBe(false);
    await clock.advance(3000);
    const r = await run.done;
    expect(r.ok).toBe(false);
    expect(r.failure).toEqual({ host: 'h1', pe: 'gpu0@h1', message: 'deploy: h1 silent for 30 s during device set-up of gpu0@h1' });
  });

  it('an agent that never reports (an older agent) fails on silence too, saying so', async () => {
    const clock = new FakeClock();
    const c = await fakeCluster(ig(), clock, { h0: reporting([{ step: 'links' }]), h1: () => {} });
    const run = c.run(ig(), { iterations: 1, deploySilence: 5000 });
    await clock.advance(6000);
    expect((await run.done).failure?.message).toMatch(/^deploy: h1 silent for 5 s since the deploy was sent \(no progress reported/);
  });

  it("the hard cap, when set, fails a deploy still reporting, naming each host's step and the option", async () => {
    const clock = new FakeClock();
    const c = await fakeCluster(ig(), clock, { h0: reporting([{ step: 'kernels', pe: 'gpu0@h0' }]), h1: reporting([{ step: 'links' }], 10_000) });
    const run = c.run(ig(), { iterations: 1, deployTimeout: 60_000, deployTimeoutName: '--deploy-timeout' });
    await clock.advance(59_000);
    await clock.advance(2000);
    const r = await run.done;
    expect(r.failure).toEqual({ host: 'h0', message: 'deploy: h0 still in kernel preparation of gpu0@h0 after the 60 s --deploy-timeout' });
  });

  it("a failure reported while a host deploys (a peer lost its link to it) names that host's step", async () => {
    const clock = new FakeClock();
    const lost = { type: 'failed', runId: '', failure: { host: 'h1', message: 'lost the link from h0 to host h1 (no heartbeat for 1.5 s)' } } as const;
    const c = await fakeCluster(ig(), clock, {
      h0: ({ send, at, runId }) => {
        send({ type: 'deployed', runId, adapters: {}, allocated: {} });
        at(2000, { ...lost, runId });
      },
      h1: silentAfter([{ step: 'device', pe: 'gpu0@h1' }]),
    });
    const run = c.run(ig(), { iterations: 1 });
    await clock.advance(3000);
    expect((await run.done).failure).toEqual({
      host: 'h1',
      message: 'lost the link from h0 to host h1 (no heartbeat for 1.5 s) (deploy: h1 during device set-up of gpu0@h1)',
    });
  });

  it('a task-bag deploy waits on progress and fails on silence the same way', async () => {
    const model = analyze(readExample('piic')).model!;
    const graph = bagGraph(model).graph!;
    const clock = new FakeClock();
    const c = await fakeCluster(ig(), clock, { h0: reporting([{ step: 'links' }], 40_000), h1: silentAfter([{ step: 'freeing' }]) });
    const run = c.runBag(graph, { iterations: 1 });
    await clock.advance(31_000);
    expect((await run.done).failure).toEqual({ host: 'h1', message: 'deploy: h1 silent for 30 s during freeing the previous run' });
  });
});
