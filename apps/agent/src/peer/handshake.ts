import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { CLOSE, parseMessage, PROTOCOL_VERSION, type PeerMessage } from '@pipeloom/core';
import { dialUpgrade, FrameSocket, PEER_PATH } from './frames.js';

// How two agents of a run open their link: a challenge-response in which neither side ever
// sends the token, and each proves it holds both the shared token and the run's secret (which
// the coordinator sent only to the run's agents).
//
//   dialler -> dialled   peer-hello      {host, runId, nonce: nA}
//   dialled -> dialler   peer-challenge  {host, nonce: nB, proof: P('dialled')}
//   dialler -> dialled   peer-auth       {proof: P('dialler')}
//   dialled -> dialler   peer-ready      {host}
//
// P(role) = HMAC-SHA256(token, role, secret, runId, both names, both nonces). The dialled side
// proves itself first, on the dialler's fresh nonce: an impostor at a URL the coordinator named
// learns nothing it could replay, and the dialler checks that the name proved is the host it
// dialled for. The roles in the MAC keep one side's proof from being reflected as the other's.

/** Limits on what a peer sends before it is authenticated. */
export const HANDSHAKE = {
  /** Milliseconds for the whole exchange, from the TCP connect to peer-ready. */
  timeoutMs: 10_000,
  /** Longest host id or run id accepted in a hello. */
  maxId: 128,
  /** Largest message either side takes before the other has proved itself. */
  maxMessage: 64 << 10,
} as const;

export interface RunKeys {
  token: string;
  secret: string;
  runId: string;
}

interface Transcript {
  dialler: string;
  dialled: string;
  dialNonce: string;
  answerNonce: string;
}

export const newNonce = (): string => randomBytes(16).toString('hex');

export function peerProof(keys: RunKeys, role: 'dialler' | 'dialled', t: Transcript): string {
  const mac = createHmac('sha256', keys.token);
  // Length-prefixed fields: no two transcripts serialise alike.
  for (const f of ['pipeloom-peer', String(PROTOCOL_VERSION), role, keys.secret, keys.runId, t.dialler, t.dialled, t.dialNonce, t.answerNonce])
    mac.update(`${f.length}:${f};`);
  return mac.digest('hex');
}

/** Constant-time comparison of a proof with the one expected. */
export function proofMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= HANDSHAKE.maxId;
const isNonce = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{32}$/.test(v);

/** A checked peer-hello, or the fixed reason it was refused (never the sender's bytes). */
export function readHello(text: string): { ok: true; hello: Extract<PeerMessage, { type: 'peer-hello' }> } | { ok: false; reason: string } {
  const parsed = parseMessage<PeerMessage>(text, ['peer-hello']);
  if (!parsed.ok)
    return { ok: false, reason: parsed.reason.startsWith('unexpected') ? 'not authenticated: the first message must be "peer-hello"' : 'malformed peer-hello' };
  const m = parsed.message as Extract<PeerMessage, { type: 'peer-hello' }>;
  if (!isId(m.host) || !isId(m.runId) || !isNonce(m.nonce)) return { ok: false, reason: 'malformed peer-hello' };
  return { ok: true, hello: m };
}

/**
 * One side's part of the exchange: sends `first`, then hands each text message to `step` until
 * it calls `done` or `fail`. The deadline, a binary message or the link closing end it too;
 * every failure closes the socket with a fixed reason.
 */
function exchange(
  frames: FrameSocket,
  deadline: number,
  first: PeerMessage,
  timedOut: string,
  closed: (code: number, reason: string) => string,
  step: (text: string, end: { fail(reason: string): void; done(): void }) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(timedOut), Math.max(0, deadline - Date.now()));
    const fail = (reason: string) => {
      clearTimeout(timer);
      frames.close(CLOSE.auth, reason);
      reject(new Error(reason));
    };
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    frames.handlers = {
      ...frames.handlers,
      binaryStart: () => fail('unexpected binary message during the handshake'),
      close: (code, reason) => {
        clearTimeout(timer);
        reject(new Error(closed(code, reason)));
      },
      text: (text) => step(text, { fail, done }),
    };
    frames.sendText(JSON.stringify(first));
  });
}

/**
 * The dialled side, from a checked hello to an authenticated link. `keys` is the run's (the
 * caller found the run the hello names and checked the dialler belongs to it). Resolves once
 * the dialler has proved itself; rejects, closing the socket with a fixed reason, otherwise.
 */
export function answerPeer(frames: FrameSocket, me: string, hello: { host: string; nonce: string }, keys: RunKeys, deadline: number): Promise<void> {
  const t: Transcript = { dialler: hello.host, dialled: me, dialNonce: hello.nonce, answerNonce: newNonce() };
  const challenge: PeerMessage = { type: 'peer-challenge', host: me, nonce: t.answerNonce, proof: peerProof(keys, 'dialled', t) };
  return exchange(
    frames,
    deadline,
    challenge,
    'peer handshake timed out',
    () => 'the peer closed the link during the handshake',
    (text, { fail, done }) => {
      const parsed = parseMessage<PeerMessage>(text, ['peer-auth']);
      if (!parsed.ok) return fail('not authenticated: the next message must be "peer-auth"');
      const m = parsed.message as Extract<PeerMessage, { type: 'peer-auth' }>;
      if (!proofMatches(peerProof(keys, 'dialler', t), m.proof)) return fail("invalid proof: the peer does not hold this run's token and secret");
      frames.handlers = { ...frames.handlers, text: () => {}, close: () => {} };
      done();
    },
  );
}

/**
 * The dialling side: opens `url`'s peer path and runs the exchange. Resolves with the socket
 * once the dialled agent proved it holds the run's keys under the name `peer` and accepted our
 * proof. Never sends the token or the secret.
 */
export async function dialPeer(
  url: string,
  me: string,
  peer: string,
  keys: RunKeys,
  limits: { maxFrame: number; maxText: number },
  timeoutMs: number = HANDSHAKE.timeoutMs,
): Promise<FrameSocket> {
  const deadline = Date.now() + timeoutMs;
  const up = await dialUpgrade(new URL(PEER_PATH, url).toString(), timeoutMs);
  // Until the dialled agent has proved itself it is a stranger: small messages only.
  const frames = new FrameSocket(up.socket, up.head, 'client', { maxFrame: HANDSHAKE.maxMessage, maxText: HANDSHAKE.maxMessage });
  const t: Transcript = { dialler: me, dialled: peer, dialNonce: newNonce(), answerNonce: '' };
  const hello: PeerMessage = { type: 'peer-hello', version: PROTOCOL_VERSION, host: me, runId: keys.runId, nonce: t.dialNonce };
  let proved = false;
  try {
    await exchange(
      frames,
      deadline,
      hello,
      'no answer to the peer handshake',
      (code, reason) => (reason ? `closed: ${reason.slice(0, 123)}` : `closed (${code})`),
      (text, { fail, done }) => {
        if (!proved) {
          const parsed = parseMessage<PeerMessage>(text, ['peer-challenge']);
          if (!parsed.ok) return fail('expected "peer-challenge"');
          const m = parsed.message as Extract<PeerMessage, { type: 'peer-challenge' }>;
          if (m.host !== peer) return fail(`the agent at this address is not host ${peer}`);
          if (!isNonce(m.nonce)) return fail('malformed peer-challenge');
          t.answerNonce = m.nonce;
          if (!proofMatches(peerProof(keys, 'dialled', t), m.proof))
            return fail("invalid proof: the agent at this address does not hold this run's token and secret");
          proved = true;
          frames.sendText(JSON.stringify({ type: 'peer-auth', proof: peerProof(keys, 'dialler', t) } satisfies PeerMessage));
          return;
        }
        if (!parseMessage<PeerMessage>(text, ['peer-ready']).ok) return fail('expected "peer-ready"');
        frames.limits = limits;
        done();
      },
    );
  } catch (e) {
    up.socket.destroy();
    throw e;
  }
  return frames;
}
