import { request } from 'node:http';
import fc from 'fast-check';
import { CLOSE, compile, type FromAgent, type ImplementationGraph, type ProjectDocument } from '@pipeloom/core';
import { deployMessages, lastStartCycle } from '@pipeloom/core/internal';
import { dialPeer } from '../peer/handshake.js';
import type { FrameSocket } from '../peer/frames.js';
import { BagClient } from './bag-client.js';
import { login } from './front-door-fuzz.js';

// The agent after login, fuzzed while it works: each case logs in, deploys a small real run
// (a static P -> I -> C pipeline on the agent's CPU, or a task-bag MLEM run whose tasks really
// run), starts it, then sends mutations of the run's own messages (fields dropped, types
// swapped, huge numbers, long strings, any order, replays, duplicate starts, other run ids,
// binary frames) from the coordinator, or from a peer agent of the run over its link. After
// each case the agent must answer a fresh login and GET /healthz (timed: the bench reports
// the slowest). Shared by front-door.test.ts, taskbag/bag-fuzz.test.ts and bench/fuzz.bench.ts.

/** The agent a case runs against: an in-process agent on loopback, CPU only (cpuDevices). */
export interface FuzzedAgent {
  url: string;
  port: number;
  token: string;
  host: string;
}

/** Where a case's garbage comes from: the coordinator of a static run or of a task-bag run, or a peer agent of the run. */
export type RunSurface = 'run' | 'bag' | 'peer';

export const FUZZ_SECRET = '0123456789abcdef0123';
/** The peer that dials the agent in 'peer' cases: first in the run's hosts. */
const PEER = 'pz';
/** A sender's string no answer may carry back whole: a run of more than 64 of its characters would be an echo. */
export const ECHO = 'Q'.repeat(65);

// --- the runs' messages ---

/** P -> I -> C on the host's CPU at 8 x 8, long enough to be firing while the case's garbage comes. */
function pipeline(host: string): ProjectDocument {
  const wh = { width: 8, height: 8 };
  return {
    format: 'pipeloom/v2',
    name: 'fuzz pipeline',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: wh },
        { id: 'I', kernel: 'matrix.increment', params: { ...wh, nb_loop: 5 } },
        { id: 'C', kernel: 'matrix.consume', params: wh },
      ],
      edges: [
        { from: { node: 'P', port: 'out' }, to: { node: 'I', port: 'in' } },
        { from: { node: 'I', port: 'out' }, to: { node: 'C', port: 'in' } },
      ],
    },
    arch: { hosts: [{ id: host, cpus: 1, gpus: 0 }], network: { kind: 'ethernet', bandwidth: 1e9, latency: 1e-5 } },
    mapping: { P: `cpu@${host}`, I: `cpu@${host}`, C: `cpu@${host}` },
    options: { overlap: true, iterations: 100_000 },
  } as unknown as ProjectDocument;
}

const compiled = new Map<string, ImplementationGraph>();

/** The static run's deploy for `host` (self-timed: a peer first in `hosts` need not take part in barriers). */
export function staticDeploy(host: string, runId: string, hosts: { id: string; url: string }[]): Record<string, unknown> {
  let ig = compiled.get(host);
  if (!ig) {
    const r = compile(pipeline(host), { overlap: true });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
    compiled.set(host, (ig = r.ig));
  }
  const iterations = 100_000;
  return deployMessages(ig, { runId, secret: FUZZ_SECRET, hosts, iterations, cycles: lastStartCycle(ig) + iterations, sync: 'self-timed' }).get(
    host,
  )! as unknown as Record<string, unknown>;
}

export const bagNodes = [
  { id: 'phantom', kernel: 'mlem.phantom', params: { size: 8, angles: 4 } },
  { id: 'projbp', kernel: 'mlem.projbp', params: { size: 8, angles: 4 } },
];

export function bagDeploy(runId: string, hosts: { id: string; url: string }[]): Record<string, unknown> {
  return { type: 'bag-deploy', runId, secret: FUZZ_SECRET, hosts, nodes: bagNodes };
}

/** The MLEM run's two tasks at size 8: a phantom (three outputs) and a projbp share that reads the phantom's sinogram. */
export function bagTasks(host: string, runId: string): Record<string, unknown>[] {
  const pe = `cpu@${host}`;
  return [
    {
      type: 'task',
      runId,
      id: 'phantom@0',
      node: 0,
      iteration: 0,
      attempt: 1,
      pe,
      inputs: [],
      outputs: [
        { port: 'truth', key: 't', bytes: 2048 },
        { port: 'sinogram', key: 's', bytes: 1024 },
        { port: 'sensitivity', key: 'n', bytes: 2048 },
      ],
    },
    {
      type: 'task',
      runId,
      id: 'projbp[1]@0',
      node: 1,
      iteration: 0,
      attempt: 1,
      pe,
      params: { shares: 2, share: 1 },
      inputs: [
        { port: 'estimate', bytes: 2048, element: 'f32', init: { value: 1 } },
        { port: 'sinogram', bytes: 1024, element: 'f32', parts: [{ key: 's', host, size: 1024, offset: 0, bytes: 1024, at: 0 }] },
      ],
      outputs: [{ port: 'backprojection', key: 'b', bytes: 2048 }],
    },
  ];
}

// --- the mutations ---

/** One thing the case sends after its run started: a mutation of one of the run's messages (picked by index), or raw garbage. */
export type Mutation =
  | { kind: 'replay'; base: number }
  | { kind: 'drop'; base: number; field: number }
  | { kind: 'swap'; base: number; field: number; value: unknown }
  | { kind: 'huge'; base: number; field: number; value: number }
  | { kind: 'long'; base: number; field: number; length: number }
  | { kind: 'other-run'; base: number; runId: string }
  | { kind: 'json'; value: unknown }
  | { kind: 'binary'; bytes: Uint8Array };

export interface RunCase {
  surface: RunSurface;
  /** 'peer' cases: the run the link belongs to is a static run (else a task-bag run). */
  staticRun: boolean;
  mutations: Mutation[];
}

const wrongType = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.string({ maxLength: 30 }),
  fc.constant({ toString: 1, valueOf: 'x' }),
);

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('replay' as const), base: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), base: fc.nat(), field: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('swap' as const), base: fc.nat(), field: fc.nat(), value: wrongType }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('huge' as const),
      base: fc.nat(),
      field: fc.nat(),
      value: fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, 2 ** 32, 2 ** 31, -1, -0, 1e-300, 65_536),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('long' as const), base: fc.nat(), field: fc.nat(), length: fc.oneof(fc.nat(300), fc.nat(200_000)) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('other-run' as const),
      base: fc.nat(),
      runId: fc.oneof(fc.constantFrom('other-run', '', 'fz-run\n2026-01-01T00:00:00.000Z info forged\u0000'), fc.string({ maxLength: 30 })),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('binary' as const), bytes: fc.uint8Array({ maxLength: 300 }) }) },
);

export function runFuzzCase(surface: RunSurface): fc.Arbitrary<RunCase> {
  return fc.record({ surface: fc.constant(surface), staticRun: fc.boolean(), mutations: fc.array(mutation, { minLength: 1, maxLength: 6 }) });
}

/** The text or bytes a mutation sends, made from the run's messages `pool`. */
export function mutated(m: Mutation, pool: readonly Record<string, unknown>[]): string | Uint8Array {
  if (m.kind === 'binary') return m.bytes;
  if (m.kind === 'json') return JSON.stringify(m.value) ?? 'null';
  const base = pool[m.base % pool.length];
  const keys = Object.keys(base).filter((k) => k !== 'type');
  const key = 'field' in m && keys.length ? keys[m.field % keys.length] : undefined;
  const out: Record<string, unknown> = { ...base };
  switch (m.kind) {
    case 'drop':
      if (key) delete out[key];
      break;
    case 'swap':
    case 'huge':
      if (key) out[key] = m.value;
      break;
    case 'long':
      if (key) out[key] = 'Q'.repeat(m.length);
      break;
    case 'other-run':
      out.runId = m.runId;
      break;
    default:
      break;
  }
  return JSON.stringify(out);
}

// --- running a case ---

/** GET /healthz; resolves with the milliseconds to the answer, rejects on anything but 200 or after `ms`. */
export function healthz(port: number, ms = 60_000): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`/healthz answered ${res.statusCode}`))));
    });
    req.setTimeout(ms, () => req.destroy(new Error(`/healthz unanswered after ${ms} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** A fresh login and /healthz, side by side: the milliseconds each took. */
export async function stillServing(agent: FuzzedAgent): Promise<{ loginMs: number; healthzMs: number }> {
  const t0 = performance.now();
  const [loginMs, healthzMs] = await Promise.all([
    login(agent.url, agent.token).then((w) => {
      if (w.type !== 'welcome') throw new Error(`answered a correct login with ${w.type}`);
      return performance.now() - t0;
    }),
    healthz(agent.port),
  ]);
  return { loginMs, healthzMs };
}

/** Logs in and deploys; retried while the agent still ends the last case's run (its connection closing). */
async function deployed(agent: FuzzedAgent, deploy: Record<string, unknown>, peer?: () => Promise<FrameSocket>): Promise<{ c: BagClient; link?: FrameSocket }> {
  for (let attempt = 0; ; attempt++) {
    const c = await BagClient.connect(agent.url, agent.token);
    c.send(deploy);
    const dialled = peer?.();
    dialled?.catch(() => {});
    const m = await c.next((x) => x.type === 'deployed' || x.type === 'error', 60_000);
    if (m.type === 'deployed') return { c, link: await dialled };
    void dialled?.then(
      (l) => l.close(),
      () => {},
    );
    c.close();
    await c.whenClosed();
    const why = (m as { message: string }).message;
    if (attempt > 100 || !/busy|stopped while deploying|replaced while deploying/.test(why)) throw new Error(`good deploy refused: ${why}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** What an answer carries of the sender's text: everything but its trace and the ids it names (a run id is at most 128 characters). */
function carried(m: FromAgent): string {
  if (m.type === 'trace') return '';
  const { id: _id, runId: _runId, ...rest } = m as Record<string, unknown>;
  return JSON.stringify(rest);
}

export interface RunCaseResult {
  /** How the case's coordinator connection ended: the agent answered its last ping, or closed it. */
  end: 'answered' | 'closed';
  loginMs: number;
  healthzMs: number;
  /** The agent's answers on the case's connection, by type (task-done and trace show the run worked under the garbage). */
  answers: Record<string, number>;
}

let caseCounter = 0;

/**
 * Runs one case: login, a good deploy (and a peer's link for 'peer' cases), start (and the
 * bag's tasks), the mutations, then a fresh login and /healthz while the run still goes, and
 * a ping on the case's connection. Throws naming what went wrong: a close code other than the
 * protocol's, a close reason over 123 bytes, an answer carrying more than 64 characters of a
 * sender's string, no pong and no close, or no fresh login or /healthz.
 */
export async function runRunCase(agent: FuzzedAgent, rc: RunCase): Promise<RunCaseResult> {
  const runId = `${agent.host}-run-${++caseCounter}`;
  const self = { id: agent.host, url: agent.url };
  const isStatic = rc.surface === 'run' || (rc.surface === 'peer' && rc.staticRun);
  const hosts = rc.surface === 'peer' ? [{ id: PEER, url: 'ws://127.0.0.1:1' }, self] : [self];
  const deploy = isStatic ? staticDeploy(agent.host, runId, hosts) : bagDeploy(runId, hosts);
  const keys = { token: agent.token, secret: FUZZ_SECRET, runId };
  const dial = rc.surface === 'peer' ? () => dialPeer(agent.url, PEER, agent.host, keys, { maxFrame: 1 << 20, maxText: 1 << 20 }) : undefined;
  const { c, link } = await deployed(agent, deploy, dial);
  try {
    const start = { type: 'start', runId };
    const tasks = isStatic ? [] : bagTasks(agent.host, runId);
    c.send(start);
    await c.next((m) => m.type === 'started', 60_000);
    // The run is working when the garbage comes: the static run has fired (a trace batch came),
    // the bag's phantom is done and its projbp, which reads the phantom's sinogram, is sent with the garbage.
    if (isStatic) await c.next((m) => m.type === 'trace' || m.type === 'done' || m.type === 'failed', 60_000);
    else {
      c.send(tasks[0]);
      await c.next((m) => m.type === 'task-done' || m.type === 'task-failed', 60_000);
      for (const t of tasks.slice(1)) c.send(t);
    }

    if (rc.surface === 'peer') {
      const pool: Record<string, unknown>[] = [
        { type: 'pull', id: 1, key: 's' },
        { type: 'pull', id: 2, key: 'b' },
        { type: 'pull-miss', id: 1, key: 's' },
        { type: 'barrier', seq: 0, round: 0 },
        { type: 'credit', counter: 0, value: 1 },
        { type: 'abort', message: 'peer gave up' },
        { type: 'peer-hello', version: 1, host: PEER, runId, nonce: 'ab'.repeat(16) },
        { type: 'peer-ready', host: PEER },
      ];
      for (const m of rc.mutations) {
        const out = mutated(m, pool);
        if (!link!.open) break;
        if (typeof out === 'string') link!.sendText(out);
        // Half of the binary garbage as the link's own framing, half as raw bytes on its socket (broken framing).
        else if (out.length % 2) void link!.sendBinary(out).catch(() => {});
        else link!.socket.write(out);
      }
    } else {
      const pool = [
        deploy,
        start,
        ...tasks,
        ...(isStatic ? [] : [{ type: 'free', runId, keys: ['t', 'n'] }]),
        { type: 'stop', runId, reason: 'fuzz' },
        { type: 'ping', id: 1, t: 0 },
      ];
      for (const m of rc.mutations) {
        if (c.closed) break;
        const out = mutated(m, pool);
        c.ws.send(out, { binary: typeof out !== 'string' });
      }
    }

    // While the run goes (or after the garbage stopped it): a stranger logs in and a supervisor probes.
    const serving = await stillServing(agent);
    if (!c.closed) c.send({ type: 'ping', id: 7, t: 0 });
    const end = await Promise.race([c.next((m) => m.type === 'pong' && (m as { id: number }).id === 7, 60_000).then(() => null), c.whenClosed(60_000)]);
    if (end) {
      if (end.code !== CLOSE.protocol) throw new Error(`the case's connection closed with ${end.code} ${end.reason}`);
      if (Buffer.byteLength(end.reason) > 123) throw new Error(`close reason of ${Buffer.byteLength(end.reason)} bytes`);
      if (end.reason.includes(ECHO)) throw new Error('the close reason echoes the sender');
    }
    if (rc.surface !== 'peer') {
      // A peer's own abort message may come back in the run's failure: it proved the run's secret. A coordinator's bytes never do.
      for (const m of c.all) if (carried(m).includes(ECHO)) throw new Error(`answer "${m.type}" echoes the sender`);
    }
    const answers: Record<string, number> = {};
    for (const m of c.all) answers[m.type] = (answers[m.type] ?? 0) + 1;
    return { end: end ? 'closed' : 'answered', ...serving, answers };
  } finally {
    link?.close();
    if (!c.closed) {
      c.send({ type: 'stop', runId, reason: 'case over' });
      await c.next((m) => m.type === 'stopped' && (m as { runId: string }).runId === runId, 60_000).catch(() => {});
    }
    c.close();
    await c.whenClosed(60_000).catch(() => {});
  }
}
