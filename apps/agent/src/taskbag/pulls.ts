import { CLOSE, quote, type PeerMessage } from '@pipeloom/core';
import type { PeerLink } from '../peer/link.js';

// Where a task-bag run's data lives on this agent, and how it moves between agents: the
// outputs its tasks made (kept under their keys until `free`), the outputs it pulled from
// other agents (cached by key until `free`, so K shares of a node here fetch the estimate
// once), and the pulls themselves over the run's authenticated peer links: a `pull` text
// message answered by the bytes as one binary frame (peer/link.ts; the pull's id in the
// header's iteration field) or by `pull-miss`. Concurrent pulls of one key share one fetch.
// The links read only answers to this agent's pulls, each of exactly the size asked
// (PeerLink.onlyAsked); a pull-miss for a pull never made fails the link too.

/** An input could not be pulled: the host holding it is gone or no longer has it. */
export class LostError extends Error {
  constructor(
    readonly host: string,
    why: string,
  ) {
    super(why);
  }
}

/** A pull waits at most this long for its answer: a live peer answers at once, and the link's heartbeat closes a silent one sooner. */
export const PULL_TIMEOUT_MS = 60_000;
const MAX_PULL_ID = 2 ** 32 - 1;

/** Bytes in shared memory: PE threads read and write them where they lie. */
export const sharedBytes = (n: number) => new Uint8Array(new SharedArrayBuffer(n));

interface Pending {
  host: string;
  key: string;
  reject: (e: Error) => void;
}

export interface PullDone {
  from: string;
  /** The PE whose task asked first. */
  pe: string;
  key: string;
  bytes: number;
  /** µs, this machine's clock: the pull was asked, its last byte came. */
  start: number;
  end: number;
}

export class DataStore {
  private readonly outputs = new Map<string, Uint8Array>();
  private readonly pulled = new Map<string, Uint8Array>();
  private readonly fetching = new Map<string, Promise<Uint8Array>>();
  private readonly pending = new Map<number, Pending>();
  private readonly lost = new Map<string, string>();
  private nextId = 1;
  /** Bytes held in outputs and the pulled cache. */
  held = 0;
  /** A pull this agent made, for the trace. */
  onPulled: (p: PullDone) => void = () => {};

  constructor(
    readonly me: string,
    readonly links: ReadonlyMap<string, PeerLink>,
    /** Bytes of outputs and pulled inputs this agent keeps at most (the deploy's maxHostBytes). */
    readonly maxBytes: number,
  ) {
    for (const [host, link] of links) {
      link.onlyAsked();
      link.onMessage = (m) => this.message(host, link, m);
      link.onClose = (reason) => this.linkLost(host, `the link to ${host} closed (${reason.slice(0, 120)})`);
    }
  }

  /** Keeps a task's output under its key (a later task's output under the same key replaces it). */
  keep(key: string, bytes: Uint8Array): void {
    const old = this.outputs.get(key);
    if (old) this.held -= old.byteLength;
    this.outputs.set(key, bytes);
    this.held += bytes.byteLength;
  }

  /** Whether `more` bytes may be held besides what is. */
  room(more: number): boolean {
    return this.held + more <= this.maxBytes;
  }

  /** Drops `keys` from the outputs and the pulled cache, and what the links keep for them. */
  free(keys: readonly string[]): void {
    for (const key of keys) {
      for (const m of [this.outputs, this.pulled]) {
        const b = m.get(key);
        if (b) this.held -= b.byteLength;
        m.delete(key);
      }
      for (const link of this.links.values()) link.forget(key);
    }
  }

  /** The run ended: nothing is kept, and pulls still waiting fail. */
  clear(): void {
    for (const p of this.pending.values()) p.reject(new Error('run stopped'));
    this.pending.clear();
    this.outputs.clear();
    this.pulled.clear();
    this.held = 0;
  }

  /** The bytes of `key` (`size` bytes, as its producer made it) from `host`: held here, being fetched, or pulled now. Rejects with LostError. */
  get(host: string, key: string, pe: string, size: number): Promise<Uint8Array> {
    const here = this.outputs.get(key) ?? this.pulled.get(key);
    if (here) return Promise.resolve(here);
    if (host === this.me) return Promise.reject(new LostError(host, `output ${quote(key)} is not held on ${host}`));
    let p = this.fetching.get(key);
    if (!p) {
      p = this.pull(host, key, pe, size).finally(() => this.fetching.delete(key));
      this.fetching.set(key, p);
    }
    return p;
  }

  private async pull(host: string, key: string, pe: string, size: number): Promise<Uint8Array> {
    const link = this.links.get(host);
    const gone = this.lost.get(host);
    if (gone) throw new LostError(host, gone);
    if (!link) throw new LostError(host, `no link from ${this.me} to ${host}`);
    const id = this.nextId;
    this.nextId = this.nextId >= MAX_PULL_ID ? 1 : this.nextId + 1;
    const start = (performance.timeOrigin + performance.now()) * 1000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const got = await new Promise<Uint8Array>((resolve, reject) => {
        this.pending.set(id, { host, key, reject });
        timer = setTimeout(() => reject(new LostError(host, `no answer from ${host} to a pull within ${PULL_TIMEOUT_MS / 1000} s`)), PULL_TIMEOUT_MS);
        link.pull(id, key, size, sharedBytes).then(({ bytes }) => resolve(bytes), reject);
        link.send({ type: 'pull', id, key });
      });
      const end = (performance.timeOrigin + performance.now()) * 1000;
      // Freed while it came: nothing keeps it.
      this.pulled.set(key, got);
      this.held += got.byteLength;
      this.onPulled({ from: host, pe, key, bytes: got.byteLength, start, end });
      return got;
    } catch (e) {
      // The answer may still come: the link reads it and keeps nothing.
      link.abandon(id);
      throw e;
    } finally {
      clearTimeout(timer);
      this.pending.delete(id);
    }
  }

  private message(host: string, link: PeerLink, m: PeerMessage): void {
    if (m.type === 'pull') {
      if (!Number.isInteger(m.id) || m.id < 1 || m.id > MAX_PULL_ID || typeof m.key !== 'string' || !m.key.length || m.key.length > 512) {
        link.frames.close(CLOSE.protocol, 'malformed pull');
        return;
      }
      const bytes = this.outputs.get(m.key) ?? this.pulled.get(m.key);
      if (!bytes) link.send({ type: 'pull-miss', id: m.id, key: m.key });
      else void link.sendFrame(m.key, m.id, bytes).catch(() => {});
    } else if (m.type === 'pull-miss') {
      if (!link.missed(m.id)) return link.fail(`peer ${host} sent a pull-miss that answers no pull of this agent`);
      const p = this.pending.get(m.id);
      if (p && p.host === host) p.reject(new LostError(host, `${host} no longer holds output ${quote(p.key)} (pull-miss)`));
    } else if (m.type === 'abort') {
      // Static runs' peer abort means nothing here: the coordinator decides what a failure costs.
    } else link.frames.close(CLOSE.protocol, `"${m.type}" is not used in task-bag runs`);
  }

  /** A peer is gone: its pulls fail naming it, and so does every later pull from it. */
  private linkLost(host: string, why: string): void {
    if (this.lost.has(host)) return;
    this.lost.set(host, why);
    for (const p of this.pending.values()) if (p.host === host) p.reject(new LostError(host, why));
  }
}
