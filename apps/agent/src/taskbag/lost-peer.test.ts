import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import type { BagTaskMessage, FromAgent } from '@pipeloom/core';
import { agentsForSuite } from '../testing/suite.js';
import { BagClient } from '../testing/bag-client.js';
import { HEARTBEAT } from '../peer/link.js';

// An agent holding a task's input goes away: the pulling task fails with `lost` naming that
// host (the coordinator recomputes its outputs), within the peer link's bounded wait, and the
// pulling agent keeps serving. SIGKILL closes the link at once; SIGSTOP leaves it silent, and
// the link's heartbeat ends it.

const agentsOf = agentsForSuite(['A', 'B', 'C']);

const N = 8;
const ANGLES = 6;
const VOLUME = N ** 3 * 4;
const SINOGRAM = ANGLES * N * N * 4;
const runId = `lost-${randomBytes(4).toString('hex')}`;
let clients: Record<string, BagClient> = {};

afterAll(() => {
  for (const c of Object.values(clients)) c.close();
});

const phantomTask = (pe: string, key: string): BagTaskMessage => ({
  type: 'task',
  runId,
  id: `phantom@0 ${pe}`,
  node: 0,
  iteration: 0,
  attempt: 1,
  pe,
  inputs: [],
  outputs: [
    { port: 'truth', key: `${key}:truth`, bytes: VOLUME },
    { port: 'sinogram', key: `${key}:sinogram`, bytes: SINOGRAM },
    { port: 'sensitivity', key: `${key}:sensitivity`, bytes: VOLUME },
  ],
});

const projbpTask = (id: string, from: string, key: string): BagTaskMessage => ({
  type: 'task',
  runId,
  id,
  node: 1,
  iteration: 0,
  attempt: 1,
  pe: 'cpu@B',
  inputs: [
    { port: 'estimate', bytes: VOLUME, element: 'f32', init: { value: 1 } },
    { port: 'sinogram', bytes: SINOGRAM, element: 'f32', parts: [{ key, host: from, size: SINOGRAM, offset: 0, bytes: SINOGRAM, at: 0 }] },
  ],
  outputs: [{ port: 'backprojection', key: `${id}:backprojection`, bytes: VOLUME }],
});

const secret = randomBytes(16).toString('hex');
const result = (m: FromAgent) => m as Extract<FromAgent, { type: 'task-done' | 'task-failed' }>;

it("a killed holder (SIGKILL) and a frozen one (SIGSTOP) each fail the pulling task with lost naming it, within the link's wait", async () => {
  const { agents, token } = agentsOf();
  const proc = Object.fromEntries(agents.map((a) => [a.host, a.process]));
  clients = Object.fromEntries(await Promise.all(agents.map(async (a) => [a.host, await BagClient.connect(a.url, token)] as const)));
  const hosts = agents.map((a) => ({ id: a.host, url: a.url }));
  const nodes = [
    { id: 'phantom', kernel: 'mlem.phantom', params: { size: N, angles: ANGLES } },
    { id: 'projbp', kernel: 'mlem.projbp', params: { size: N, angles: ANGLES } },
  ];
  for (const c of Object.values(clients)) c.send({ type: 'bag-deploy', runId, secret, hosts, nodes, traceInterval: 10_000 });
  for (const c of Object.values(clients)) expect((await c.next((m) => m.type === 'deployed' || m.type === 'error')).type).toBe('deployed');
  for (const c of Object.values(clients)) c.send({ type: 'start', runId });
  const { A, B, C } = clients;
  A.send(phantomTask('cpu@A', 'a'));
  C.send(phantomTask('cpu@C', 'c'));
  expect((await A.result('phantom@0 cpu@A')).type).toBe('task-done');
  expect((await C.result('phantom@0 cpu@C')).type).toBe('task-done');
  // B can pull from both while they live.
  B.send(projbpTask('ok@0', 'A', 'a:sinogram'));
  expect((await B.result('ok@0')).type).toBe('task-done');

  proc.A.kill('SIGKILL');
  let t0 = performance.now();
  B.send(projbpTask('from-killed@0', 'A', 'a:sinogram 2'));
  const killed = result(await B.result('from-killed@0'));
  expect(killed).toMatchObject({ type: 'task-failed', lost: 'A', pe: 'cpu@B' });
  expect(performance.now() - t0).toBeLessThan(HEARTBEAT.silentMs + 2000);

  proc.C.kill('SIGSTOP');
  try {
    t0 = performance.now();
    B.send(projbpTask('from-frozen@0', 'C', 'c:sinogram'));
    const frozen = result(await B.result('from-frozen@0'));
    expect(frozen).toMatchObject({ type: 'task-failed', lost: 'C' });
    expect((frozen as { message: string }).message).toMatch(/heartbeat/);
    // The link's heartbeat bounds the wait (its silence limit, a tick, and a loaded machine's slack).
    expect(performance.now() - t0).toBeLessThan(HEARTBEAT.silentMs + 3000);
  } finally {
    proc.C.kill('SIGKILL');
  }
  // B still serves.
  B.send({ type: 'ping', id: 1, t: 0 });
  expect((await B.next((m) => m.type === 'pong')).type).toBe('pong');
});
