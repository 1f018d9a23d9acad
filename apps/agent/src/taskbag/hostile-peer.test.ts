import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE, type BagTaskMessage, type FromAgent } from '@pipeloom/core';
import { agentsForSuite } from '../testing/suite.js';
import { BagClient } from '../testing/bag-client.js';
import { dialPeer } from '../peer/handshake.js';
import type { FrameSocket } from '../peer/frames.js';

// A peer that holds the run's keys but answers pulls with what was not asked: a reply far
// larger than the pull's output, a reply with another pull's id or another output's key, a
// pull-miss for no pull, binary messages nobody asked for. Each fails the link naming the peer
// before its bytes are read (nothing is cached, the agent's memory does not grow by them), the
// pulling task fails with the peer as lost, and the agent keeps answering /healthz.

const agentsOf = agentsForSuite(['B'], { cpuOnly: ['B'] });

const LENGTH = 256;
const BYTES = LENGTH * 4;
const KEY = 'E:out@0';
let client: BagClient;

beforeAll(async () => {
  const { agents, token } = agentsOf();
  client = await BagClient.connect(agents[0].url, token);
});
afterAll(() => client?.close());

/** The hostile peer's side of a fresh run: E (first in the run's hosts, so it dials B) with the pulls B asks of it. */
async function runWithPeer(): Promise<{
  runId: string;
  frames: FrameSocket;
  pulls: { id: number; key: string }[];
  closed: Promise<{ code: number; reason: string }>;
}> {
  const { agents, token } = agentsOf();
  const url = agents[0].url;
  const runId = `hostile-${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(16).toString('hex');
  client.send({
    type: 'bag-deploy',
    runId,
    secret,
    hosts: [
      { id: 'E', url: 'ws://127.0.0.1:9' },
      { id: 'B', url },
    ],
    nodes: [{ id: 'C', kernel: 'vector.check', params: { length: LENGTH } }],
  });
  const frames = await dialPeer(url, 'E', 'B', { token, secret, runId }, { maxFrame: 1 << 30, maxText: 1 << 20 });
  const deployed = await client.next((m) => m.type === 'deployed' || m.type === 'error');
  expect(deployed.type).toBe('deployed');
  client.send({ type: 'start', runId });
  const pulls: { id: number; key: string }[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    frames.handlers = {
      text: (s) => {
        const m = JSON.parse(s) as { type: string; id: number; key: string };
        if (m.type === 'pull') pulls.push({ id: m.id, key: m.key });
      },
      binaryStart: () => {},
      chunk: () => {},
      binaryEnd: () => {},
      close: (code, reason) => resolve({ code, reason }),
    };
  });
  return { runId, frames, pulls, closed };
}

/** A binary message as a pull's answer is framed: u32 id, u16 key length, the key, the bytes. */
function answer(frames: FrameSocket, id: number, key: string, bytes: number): void {
  const kb = Buffer.from(key, 'utf8');
  frames
    .sendBinary(new Uint8Array(bytes), 6 + kb.length, (head, at) => {
      head.writeUInt32LE(id, at);
      head.writeUInt16LE(kb.length, at + 4);
      kb.copy(head, at + 6);
    })
    // The agent stops reading once it has refused the message.
    .catch(() => {});
}

const checkTask = (runId: string, id: string): BagTaskMessage => ({
  type: 'task',
  runId,
  id,
  node: 0,
  iteration: 0,
  attempt: 1,
  pe: 'cpu@B',
  inputs: [{ port: 'in', bytes: BYTES, element: 'f32', parts: [{ key: KEY, host: 'E', size: BYTES, offset: 0, bytes: BYTES, at: 0 }] }],
  outputs: [],
});

async function pullOf(p: { pulls: { id: number; key: string }[] }): Promise<{ id: number; key: string }> {
  while (!p.pulls.length) await new Promise((r) => setTimeout(r, 10));
  return p.pulls.shift()!;
}

const rssBytes = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

async function healthz(): Promise<number> {
  return (await fetch(`${agentsOf().agents[0].url.replace(/^ws/, 'http')}/healthz`)).status;
}

type Result = Extract<FromAgent, { type: 'task-done' | 'task-failed' }>;

/** The link failed naming the peer: E saw it closed with the reason, B's pulling task failed with E lost, and nothing of E's is held (a second task pulls again, and fails). */
async function expectLinkFailed(p: Awaited<ReturnType<typeof runWithPeer>>, task: string, reason: RegExp): Promise<void> {
  const closed = await p.closed;
  expect(closed.code).toBe(CLOSE.protocol);
  expect(closed.reason).toMatch(reason);
  const r = (await client.result(task)) as Result;
  expect(r).toMatchObject({ type: 'task-failed', lost: 'E', pe: 'cpu@B' });
  expect((r as { message: string }).message).toContain('the link to E closed');
  client.send(checkTask(p.runId, `${task} again`));
  expect(await client.result(`${task} again`)).toMatchObject({ type: 'task-failed', lost: 'E' });
  expect(await healthz()).toBe(200);
}

describe("a peer with the run's keys answers what B never asked", () => {
  it('a well-formed answer is taken (the control)', async () => {
    const p = await runWithPeer();
    client.send(checkTask(p.runId, 'ok@0'));
    const pull = await pullOf(p);
    expect(pull.key).toBe(KEY);
    answer(p.frames, pull.id, pull.key, BYTES);
    expect(await client.result('ok@0')).toMatchObject({ type: 'task-done' });
  });

  it("a 64 MiB answer to a 1 KiB pull fails the link naming E before its bytes are read; nothing is cached and B's memory stays put", async () => {
    const p = await runWithPeer();
    const pid = agentsOf().agents[0].process.pid!;
    const before = rssBytes(pid);
    client.send(checkTask(p.runId, 'big@0'));
    const pull = await pullOf(p);
    answer(p.frames, pull.id, pull.key, 64 << 20);
    await expectLinkFailed(p, 'big@0', new RegExp(`^peer E answered pull ${pull.id} with ${64 << 20} bytes; the output asked for holds ${BYTES}$`));
    expect(rssBytes(pid) - before).toBeLessThan(32 << 20);
  });

  it("an answer with another pull's id fails the link naming E", async () => {
    const p = await runWithPeer();
    client.send(checkTask(p.runId, 'id@0'));
    const pull = await pullOf(p);
    answer(p.frames, pull.id + 1, pull.key, BYTES);
    await expectLinkFailed(p, 'id@0', /^peer E sent 1024 bytes that answer no pull of this agent$/);
  });

  it("an answer with the pull's id but another output's key fails the link naming E", async () => {
    const p = await runWithPeer();
    client.send(checkTask(p.runId, 'key@0'));
    const pull = await pullOf(p);
    answer(p.frames, pull.id, 'E:other@0', BYTES);
    await expectLinkFailed(p, 'key@0', new RegExp(`^peer E answered pull ${pull.id} with another output than the one asked for$`));
  });

  it('a pull-miss for no pull fails the link naming E', async () => {
    const p = await runWithPeer();
    client.send(checkTask(p.runId, 'miss@0'));
    const pull = await pullOf(p);
    p.frames.sendText(JSON.stringify({ type: 'pull-miss', id: pull.id + 7, key: pull.key }));
    await expectLinkFailed(p, 'miss@0', /^peer E sent a pull-miss that answers no pull of this agent$/);
  });

  it('binary messages nobody asked for fail the link naming E at the first one', async () => {
    const p = await runWithPeer();
    for (let i = 1; i <= 4; i++) answer(p.frames, i, `E:unasked@${i}`, 1 << 20);
    const closed = await p.closed;
    expect(closed).toEqual({ code: CLOSE.protocol, reason: `peer E sent ${1 << 20} bytes that answer no pull of this agent` });
    // Nothing of them is held: a task reading from E finds the link gone.
    client.send(checkTask(p.runId, 'after@0'));
    expect(await client.result('after@0')).toMatchObject({ type: 'task-failed', lost: 'E' });
    expect(await healthz()).toBe(200);
  });
});
