import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FromAgent } from '@pipeloom/core';
import { startAgent, type AgentServer } from '../server/server.js';
import { cpuDevices } from '../testing/front-door-fuzz.js';
import { BagClient } from '../testing/bag-client.js';
import {
  bagDeploy as goodBagDeploy,
  bagNodes,
  bagTasks,
  runFuzzCase,
  runRunCase,
  stillServing,
  type FuzzedAgent,
  type RunSurface,
} from '../testing/run-fuzz.js';

// The task-bag messages from a logged-in coordinator, fuzzed (fast-check): malformed
// bag-deploy, task and free messages after a good bag-deploy; then the run's own messages
// mutated while its tasks run, from the coordinator and from a peer agent of the run over its
// link (testing/run-fuzz.ts). Whatever comes, the agent does not crash, answers with an error,
// a task result or a close whose reason fits a close frame, never sends back more of the
// sender's bytes than a short quote, and answers a fresh login and /healthz after each case.

const TOKEN = 'bag-fuzz-token-0123456789abcdef';
const HOST = 'fz';
const RUN = 'fuzz-run';
/** A sender's string no answer may carry back whole: a run of more than 64 of its characters would be an echo. */
const MARKER = 'Q'.repeat(300);
const ECHO = 'Q'.repeat(65);
let agent: AgentServer;

beforeAll(async () => {
  agent = await startAgent({
    devices: cpuDevices(HOST),
    token: TOKEN,
    port: 0,
    limits: { loginFailuresFree: Number.MAX_SAFE_INTEGER, messagesPerSecond: 100_000 },
  });
});

afterAll(async () => {
  await agent?.close();
});

const fuzzed = (): FuzzedAgent => ({ url: agent.url, port: agent.port, token: TOKEN, host: HOST });

const wrong = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.constant({}),
  fc.string({ maxLength: 20 }),
  fc.constant(MARKER),
  fc.constant(-1),
  fc.constant(2 ** 53),
);
const maybe = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: wrong });
const id = fc.oneof(
  fc.constantFrom('a', 'phantom:sinogram@0', 'x[1]@0'),
  fc.constant(MARKER),
  fc.nat(700).map((n) => 'k'.repeat(n)),
);
const small = fc.constantFrom(8, 0, -1, 2.5, 1e9, 256 + 1);

const nodes = fc.oneof(
  fc.constant(bagNodes),
  fc.array(
    fc.record(
      {
        id: maybe(id),
        kernel: maybe(fc.constantFrom('mlem.phantom', 'mlem.projbp', 'custom.wgsl', 'nope.kernel', MARKER)),
        params: maybe(fc.dictionary(fc.oneof(fc.constantFrom('size', 'angles', 'share', 'shares'), fc.constant(MARKER)), maybe(small), { maxKeys: 4 })),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  ),
  wrong,
);

const bagDeploy = fc.record(
  {
    type: fc.constant('bag-deploy'),
    runId: maybe(fc.constant(RUN)),
    secret: maybe(fc.constantFrom('0123456789abcdef0123', 'short', MARKER)),
    hosts: maybe(
      fc.oneof(
        fc.constant([{ id: HOST, url: 'ws://127.0.0.1:1' }]),
        fc.array(fc.record({ id: maybe(id), url: maybe(fc.constantFrom('ws://127.0.0.1:1', MARKER)) }, { requiredKeys: [] }), { maxLength: 3 }),
      ),
    ),
    nodes,
    kernels: fc.option(maybe(fc.dictionary(fc.constantFrom('mlem.phantom', MARKER), maybe(fc.constantFrom('1.0.0', '2.0.0', MARKER)), { maxKeys: 2 })), {
      nil: undefined,
    }),
    emulateDevices: fc.option(maybe(fc.dictionary(fc.constantFrom('phantom', MARKER), maybe(fc.double()), { maxKeys: 2 })), { nil: undefined }),
    slow: fc.option(maybe(fc.dictionary(fc.constantFrom(`cpu@${HOST}`, MARKER), maybe(fc.constantFrom(1, 2, 0, 1e6, Number.NaN)), { maxKeys: 2 })), {
      nil: undefined,
    }),
    traceInterval: fc.option(maybe(fc.constantFrom(10_000, 0, 1e12)), { nil: undefined }),
  },
  { requiredKeys: ['type'] },
);

const part = fc.record(
  {
    key: maybe(id),
    host: maybe(fc.constantFrom(HOST, 'elsewhere', MARKER)),
    size: maybe(fc.constantFrom(1024, 0, 1 << 40)),
    offset: maybe(fc.constantFrom(0, 4, 1 << 30)),
    bytes: maybe(fc.constantFrom(0, 2048, 1024, 3)),
    at: maybe(fc.constantFrom(0, 1024, 4096)),
  },
  { requiredKeys: [] },
);
const input = fc.record(
  {
    port: maybe(fc.constantFrom('estimate', 'sinogram', 'nope', MARKER)),
    bytes: maybe(fc.constantFrom(2048, 1024, 5, 1 << 40)),
    element: maybe(fc.constantFrom('f32', 'u8', MARKER)),
    parts: fc.option(maybe(fc.array(part, { maxLength: 3 })), { nil: undefined }),
    init: fc.option(
      maybe(
        fc.oneof(
          fc.record({ value: maybe(fc.double()) }),
          fc.record(
            {
              node: maybe(id),
              kernel: maybe(fc.constantFrom('mlem.phantom', MARKER)),
              params: maybe(fc.dictionary(fc.constantFrom('size', MARKER), maybe(small), { maxKeys: 2 })),
            },
            { requiredKeys: [] },
          ),
        ),
      ),
      { nil: undefined },
    ),
  },
  { requiredKeys: [] },
);
const output = fc.record(
  {
    port: maybe(fc.constantFrom('backprojection', 'truth', 'sinogram', 'sensitivity', MARKER)),
    key: maybe(id),
    bytes: maybe(fc.constantFrom(2048, 1024, 1 << 40)),
  },
  { requiredKeys: [] },
);

const task = fc.record(
  {
    type: fc.constant('task'),
    runId: maybe(fc.constant(RUN)),
    id: maybe(id),
    node: maybe(fc.constantFrom(0, 1, 2, -1, 65_536)),
    iteration: maybe(fc.constantFrom(0, 1, -1, 2 ** 31)),
    attempt: maybe(fc.constantFrom(1, 2, 0)),
    pe: maybe(fc.constantFrom(`cpu@${HOST}`, `gpu0@${HOST}`, MARKER)),
    params: fc.option(maybe(fc.dictionary(fc.constantFrom('shares', 'share', 'size', MARKER), maybe(small), { maxKeys: 3 })), { nil: undefined }),
    inputs: maybe(fc.array(input, { maxLength: 3 })),
    outputs: maybe(fc.array(output, { maxLength: 4 })),
  },
  { requiredKeys: ['type'] },
);

/** Good tasks with at most one field changed: they pass the check or fail it on that field; those that run end in task-done or task-failed. */
const [goodPhantom, goodProjbp] = bagTasks(HOST, RUN);
const nearTask = fc
  .tuple(
    fc.constantFrom(goodPhantom, goodProjbp),
    fc.option(fc.constantFrom('id', 'node', 'iteration', 'attempt', 'pe', 'params', 'inputs', 'outputs'), { nil: undefined }),
    wrong,
  )
  .map(([good, field, value]) => (field ? { ...good, [field]: value } : good));

const free = fc.record(
  {
    type: fc.constant('free'),
    runId: maybe(fc.constant(RUN)),
    keys: maybe(
      fc.oneof(
        fc.array(maybe(id), { maxLength: 5 }),
        fc.nat(70_000).map((n) => Array.from({ length: n }, () => 'k')),
      ),
    ),
  },
  { requiredKeys: ['type'] },
);

/** Opens a connection and deploys the good run; retried while the agent still ends the last case's run (its connection closing). */
async function deployed(): Promise<BagClient> {
  for (let attempt = 0; ; attempt++) {
    const c = await BagClient.connect(agent.url, TOKEN);
    c.send(goodBagDeploy(RUN, [{ id: HOST, url: agent.url }]));
    const m = await c.next((x) => x.type === 'deployed' || x.type === 'error');
    if (m.type === 'deployed') return c;
    c.close();
    await c.whenClosed();
    if (attempt > 50 || !/busy/.test((m as { message: string }).message)) throw new Error(`good bag-deploy refused: ${(m as { message: string }).message}`);
  }
}

/** What an answer carries of the sender's text: everything but its trace and the task id it names. */
function carried(m: FromAgent): string {
  if (m.type === 'trace') return '';
  const { id: _id, ...rest } = m as Record<string, unknown>;
  return JSON.stringify(rest);
}

it("malformed bag-deploy, task and free messages never crash the agent, never echo the sender's bytes, and close with bounded reasons", async () => {
  const runs = Number(process.env.FUZZ_RUNS ?? 60);
  const seen: Record<string, number> = {};
  const count = (k: string) => (seen[k] = (seen[k] ?? 0) + 1);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.oneof(bagDeploy, task, nearTask, nearTask, free), { minLength: 1, maxLength: 4 }), async (messages) => {
      const c = await deployed();
      c.send({ type: 'start', runId: RUN });
      for (const m of messages) c.send(m);
      // A pong after the case's messages: each was handled (or the connection closed on one).
      c.send({ type: 'ping', id: 7, t: 0 });
      const end = await Promise.race([c.next((m) => m.type === 'pong', 30_000).then(() => null), c.whenClosed(30_000)]);
      count(end ? 'closed' : 'answered');
      for (const m of c.all) count(m.type);
      if (end) {
        expect(end.code).toBe(4002);
        expect(Buffer.byteLength(end.reason)).toBeLessThanOrEqual(123);
        expect(end.reason).not.toContain(ECHO);
      } else {
        c.send({ type: 'stop', runId: RUN, reason: 'case over' });
        await c.next((m) => m.type === 'stopped');
      }
      for (const m of c.all) expect(carried(m)).not.toContain(ECHO);
      c.close();
      await c.whenClosed();
      await stillServing(fuzzed());
    }),
    { numRuns: runs, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined, endOnFailure: true },
  );
  console.log(`bag fuzz: ${runs} cases; ${JSON.stringify(seen)}`);
  // Still serving: a fresh login and a good deploy.
  const c = await deployed();
  c.close();
}, 300_000);

it.each<[RunSurface, number]>([
  ['bag', Number(process.env.FUZZ_RUN_CASES ?? 8)],
  ['peer', Number(process.env.FUZZ_RUN_CASES ?? 4)],
])(
  "%s: the run's messages mutated while its tasks run never crash or hang the agent, nor come back echoed",
  async (surface, runs) => {
    const answers: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(runFuzzCase(surface), async (rc) => {
        const r = await runRunCase(fuzzed(), rc);
        for (const [k, n] of Object.entries({ ...r.answers, [r.end]: 1 })) answers[k] = (answers[k] ?? 0) + n;
      }),
      { numRuns: runs, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 7, endOnFailure: true },
    );
    console.log(`${surface} fuzz after start: ${runs} cases; ${JSON.stringify(answers)}`);
    // The runs were live under the garbage: tasks answered with a result, or (a peer's garbage
    // fails its link at once, and with it the run) firings were traced first.
    const live = (answers['task-done'] ?? 0) + (answers['task-failed'] ?? 0) + (surface === 'peer' ? (answers.trace ?? 0) : 0);
    expect(live).toBeGreaterThan(0);
  },
  300_000,
);
