import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getKernel, runCpu, type TypedArray } from '@pipeloom/kernels';
import type { BagDeploy, BagInput, BagTaskMessage, FromAgent, TraceEvent } from '@pipeloom/core';
import { agentsForSuite } from '../testing/suite.js';
import { BagClient, BagProbe } from '../testing/bag-client.js';

// The agent's task-bag executor on real agent processes on loopback (B's GPU PE is llvmpipe
// through Dawn's OpenGL backend), driven by a raw coordinator: an MLEM chain at size 8 with
// examples/mlem.json's kernels. A probe (a peer of the run, first in its hosts) pulls the
// agents' outputs to compare them with the CPU twins run here.

const agentsOf = agentsForSuite(['A', 'B'], { gpus: { B: 1 } });

const N = 8;
const ANGLES = 12;
const K = 2;
const VOLUME = N ** 3 * 4;
const SINOGRAM = ANGLES * N * N * 4;
const phantomParams = { size: N, angles: ANGLES, spheres: 3, seed: 1 };
const projbpParams = { size: N, angles: ANGLES };

const runId = `bag-${randomBytes(4).toString('hex')}`;
const secret = randomBytes(16).toString('hex');
let clients: Record<string, BagClient>;
let probe: BagProbe;
const deployed: Record<string, FromAgent> = {};

const deploy = (hosts: { id: string; url: string }[]): BagDeploy => ({
  type: 'bag-deploy',
  runId,
  secret,
  hosts,
  // The lowered form of projbp with tasks: 2 (core document/tasks.ts): two shares and their sum; a
  // share outside its split last, for the failing kernel's test.
  nodes: [
    { id: 'phantom', kernel: 'mlem.phantom', params: phantomParams },
    { id: 'projbp[0]', kernel: 'mlem.projbp', params: { ...projbpParams, shares: K, share: 0 } },
    { id: 'projbp[1]', kernel: 'mlem.projbp', params: { ...projbpParams, shares: K, share: 1 } },
    { id: 'projbp', kernel: 'generic.sum', params: { count: K, kind: 'volume', shape: `${N},${N},${N}` } },
    { id: 'update', kernel: 'mlem.update', params: { size: N } },
    { id: 'projbp[5]', kernel: 'mlem.projbp', params: { ...projbpParams, shares: K, share: 5 } },
  ],
  kernels: { 'mlem.phantom': '1.0.0', 'mlem.projbp': '1.0.0', 'mlem.update': '1.0.0', 'generic.sum': '1.0.0' },
  traceInterval: 10_000,
});

const part = (key: string, host: string, bytes: number) => ({ key, host, size: bytes, offset: 0, bytes, at: 0 });
const ones: BagInput = { port: 'estimate', bytes: VOLUME, element: 'f32', init: { value: 1 } };

function projbpTask(share: number, opts: { pe: string; key: string; attempt?: number; sinogramFrom?: string }): BagTaskMessage {
  return {
    type: 'task',
    runId,
    id: `projbp[${share}]@0`,
    node: 1 + share,
    iteration: 0,
    attempt: opts.attempt ?? 1,
    pe: opts.pe,
    inputs: [ones, { port: 'sinogram', bytes: SINOGRAM, element: 'f32', parts: [part('phantom:sinogram@0', opts.sinogramFrom ?? 'A', SINOGRAM)] }],
    outputs: [{ port: 'backprojection', key: opts.key, bytes: VOLUME }],
  };
}

// What the agents must give: the same kernels' CPU twins, run here.
const phantom = runCpu(getKernel('mlem.phantom'), phantomParams, {}).outputs;
const flat = new Float32Array(N ** 3).fill(1);
const shares = [0, 1].map(
  (j) =>
    runCpu(getKernel('mlem.projbp'), { ...projbpParams, shares: K, share: j }, { estimate: flat, sinogram: phantom.sinogram }).outputs
      .backprojection as Float32Array,
);
const combined = new Float32Array(N ** 3);
for (const s of shares) for (let i = 0; i < combined.length; i++) combined[i] += s[i];
const updated = runCpu(getKernel('mlem.update'), { size: N }, { previous: flat, backprojection: combined, sensitivity: phantom.sensitivity }).outputs.estimate;

const done = (m: FromAgent) => {
  if (m.type !== 'task-done') throw new Error(`task failed: ${JSON.stringify(m)}`);
  return m;
};
const pulls = (events: TraceEvent[], key: string) => events.filter((e) => e.kind === 'transfer' && e.buffer === key);

beforeAll(async () => {
  const { agents, token } = agentsOf();
  clients = Object.fromEntries(await Promise.all(agents.map(async (a) => [a.host, await BagClient.connect(a.url, token)] as const)));
  const hosts = [{ id: 'probe', url: 'ws://127.0.0.1:1' }, ...agents.map((a) => ({ id: a.host, url: a.url }))];
  for (const c of Object.values(clients)) c.send(deploy(hosts));
  // The probe is the run's first host: the agents wait for it to dial them before `deployed`.
  probe = await BagProbe.dial('probe', agents, { token, secret, runId });
  for (const [host, c] of Object.entries(clients)) deployed[host] = await c.next((m) => m.type === 'deployed' || m.type === 'error');
  for (const c of Object.values(clients)) c.send({ type: 'start', runId });
  for (const c of Object.values(clients)) await c.next((m) => m.type === 'started');
});

afterAll(() => {
  probe?.close();
  for (const c of Object.values(clients ?? {})) c.close();
});

describe('task-bag executor: MLEM at size 8 on two agents', () => {
  it('deployed names the adapter each GPU PE opens, and allocates nothing', () => {
    expect(deployed.A).toMatchObject({ type: 'deployed', allocated: {}, adapters: {} });
    expect(deployed.B).toMatchObject({ type: 'deployed', allocated: {} });
    expect((deployed.B as { adapters: Record<string, string> }).adapters['gpu0@B']).toMatch(/\(opengl\)$/);
  });

  it('a phantom task on A, two projbp shares on B pulling the sinogram once, their sum and an update on A: each equal to the CPU twins', async () => {
    const { A, B } = clients;
    A.send({
      type: 'task',
      runId,
      id: 'phantom@0',
      node: 0,
      iteration: 0,
      attempt: 1,
      pe: 'cpu@A',
      inputs: [],
      outputs: [
        { port: 'truth', key: 'phantom:truth@0', bytes: VOLUME },
        { port: 'sinogram', key: 'phantom:sinogram@0', bytes: SINOGRAM },
        { port: 'sensitivity', key: 'phantom:sensitivity@0', bytes: VOLUME },
      ],
    } satisfies BagTaskMessage);
    const ph = done(await A.result('phantom@0'));
    expect(ph.pe).toBe('cpu@A');
    // Both shares arrive together: their inputs are gathered at once, and one pull serves both.
    B.send(projbpTask(0, { pe: 'cpu@B', key: 'projbp[0]:backprojection@0' }));
    B.send(projbpTask(1, { pe: 'cpu@B', key: 'projbp[1]:backprojection@0' }));
    done(await B.result('projbp[0]@0'));
    done(await B.result('projbp[1]@0'));
    A.send({
      type: 'task',
      runId,
      id: 'projbp@0',
      node: 3,
      iteration: 0,
      attempt: 1,
      pe: 'cpu@A',
      inputs: [0, 1].map((j) => ({ port: `in${j}`, bytes: VOLUME, element: 'f32' as const, parts: [part(`projbp[${j}]:backprojection@0`, 'B', VOLUME)] })),
      outputs: [{ port: 'sum', key: 'projbp:sum@0', bytes: VOLUME }],
    } satisfies BagTaskMessage);
    done(await A.result('projbp@0'));
    A.send({
      type: 'task',
      runId,
      id: 'update@0',
      node: 4,
      iteration: 0,
      attempt: 1,
      pe: 'cpu@A',
      inputs: [
        { ...ones, port: 'previous' },
        { port: 'backprojection', bytes: VOLUME, element: 'f32', parts: [part('projbp:sum@0', 'A', VOLUME)] },
        { port: 'sensitivity', bytes: VOLUME, element: 'f32', parts: [part('phantom:sensitivity@0', 'A', VOLUME)] },
      ],
      outputs: [{ port: 'estimate', key: 'update:estimate@0', bytes: VOLUME }],
    } satisfies BagTaskMessage);
    done(await A.result('update@0'));

    expect(await probe.f32('A', 'phantom:sinogram@0', SINOGRAM)).toEqual(phantom.sinogram);
    expect(await probe.f32('B', 'projbp[0]:backprojection@0', VOLUME)).toEqual(shares[0]);
    expect(await probe.f32('B', 'projbp[1]:backprojection@0', VOLUME)).toEqual(shares[1]);
    expect(await probe.f32('A', 'update:estimate@0', VOLUME)).toEqual(updated);

    // The trace: one pull of the sinogram on B (from A), fire slices named by task with their share.
    await B.next((m) => m.type === 'trace' && m.events.some((e) => e.kind === 'fire' && e.name === 'projbp[1]@0'));
    const sinogramPulls = pulls(B.events, 'phantom:sinogram@0');
    expect(sinogramPulls).toHaveLength(1);
    expect(sinogramPulls[0]).toMatchObject({ host: 'B', thread: 'recv:A', bytes: SINOGRAM });
    const fire = B.events.find((e) => e.kind === 'fire' && e.name === 'projbp[1]@0');
    expect(fire).toMatchObject({ pe: 'cpu@B', thread: 'main', node: 'projbp[1]', iteration: 0, cycle: 0, task: { id: 'projbp[1]@0', share: 1, attempt: 1 } });
  });

  it("a GPU PE (llvmpipe) gives the CPU twin's back-projection within float tolerance, labelled as a second attempt", async () => {
    const { B } = clients;
    B.send(projbpTask(0, { pe: 'gpu0@B', key: 'projbp[0]:backprojection@0 gpu', attempt: 2 }));
    const r = done(await B.result('projbp[0]@0', 2));
    expect(r.pe).toBe('gpu0@B');
    const gpu = await probe.f32('B', 'projbp[0]:backprojection@0 gpu', VOLUME);
    const scale = Math.max(...shares[0].map(Math.abs));
    for (let i = 0; i < gpu.length; i++) expect(Math.abs(gpu[i] - shares[0][i])).toBeLessThanOrEqual(1e-4 * scale);
    await B.next((m) => m.type === 'trace' && m.events.some((e) => e.name === 'projbp[0]@0 (2)'));
    expect(B.events.find((e) => e.name === 'projbp[0]@0 (2)')).toMatchObject({ pe: 'gpu0@B', task: { id: 'projbp[0]@0', share: 0, attempt: 2 } });
  });

  it('free drops the keys: a later pull gets pull-miss, and the task fails naming the host as lost', async () => {
    const { A, B } = clients;
    A.send({ type: 'free', runId, keys: ['phantom:sinogram@0'] });
    B.send({ type: 'free', runId, keys: ['phantom:sinogram@0'] });
    // Messages on one connection are handled in order: the free is done before this ping's pong.
    A.send({ type: 'ping', id: 1, t: 0 });
    await A.next((m) => m.type === 'pong');
    B.send(projbpTask(0, { pe: 'cpu@B', key: 'projbp[0]:backprojection@0 again', attempt: 3 }));
    const r = await B.result('projbp[0]@0', 3);
    expect(r).toMatchObject({ type: 'task-failed', lost: 'A', pe: 'cpu@B' });
    expect((r as { message: string }).message).toContain('pull-miss');
    await expect(probe.store.get('A', 'phantom:sinogram@0', 'probe', SINOGRAM)).rejects.toThrow(/pull-miss/);
  });

  it('a kernel that cannot run fails its task with a short message and leaves the agent serving', async () => {
    const { B } = clients;
    // A share outside its split: the kernel's own guard throws.
    const bad = { ...projbpTask(0, { pe: 'cpu@B', key: 'bad', attempt: 4, sinogramFrom: 'B' }), node: 5 };
    bad.inputs[1] = { port: 'sinogram', bytes: SINOGRAM, element: 'f32', init: { value: 1 } };
    B.send(bad);
    const r = await B.result('projbp[0]@0', 4);
    expect(r.type).toBe('task-failed');
    const message = (r as { message: string }).message;
    expect(message).not.toMatch(/\n|at .*\.ts:\d+/);
    expect(message.length).toBeLessThanOrEqual(300);
    expect(r).not.toHaveProperty('lost');
    B.send({ type: 'ping', id: 2, t: 0 });
    await B.next((m) => m.type === 'pong');
  });

  it('a malformed task closes the coordinator connection with a reason naming the element', async () => {
    const { agents, token } = agentsOf();
    const c = await BagClient.connect(agents[0].url, token);
    // Another connection's task for this run is not its own: refused without touching the run.
    c.send({ ...projbpTask(0, { pe: 'cpu@A', key: 'x' }) });
    const e = await c.next((m) => m.type === 'error');
    expect((e as { message: string }).message).toMatch(/no task-bag run of this coordinator/);
    const { A } = clients;
    const t = projbpTask(0, { pe: 'cpu@A', key: 'x' });
    (t.inputs[1] as { bytes: number }).bytes = 5;
    // On the run's own connection the run ends with it: checked last in this file.
    A.send(t);
    const closed = await A.whenClosed();
    expect(closed.code).toBe(4002);
    expect(closed.reason).toMatch(/^malformed task: inputs\[1\]\.bytes must be 3,072/);
    expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);
    c.close();
  });

  it('stop frees the run, the trace flushed before stopped', async () => {
    const { B } = clients;
    const before = B.events.length;
    B.send({ type: 'stop', runId, reason: 'test over' });
    const s = await B.next((m) => m.type === 'stopped');
    expect(s).toMatchObject({ freed: true });
    expect(B.events.length).toBeGreaterThanOrEqual(before);
    // The failed attempt is drawn too, named so.
    expect(
      B.events
        .filter((e) => e.kind === 'fire')
        .map((e) => e.name)
        .sort(),
    ).toEqual(['projbp[0]@0', 'projbp[0]@0 (2)', 'projbp[0]@0 (4) failed', 'projbp[1]@0']);
  });
});
