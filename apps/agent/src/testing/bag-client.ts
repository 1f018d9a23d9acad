import WebSocket from 'ws';
import { PROTOCOL_VERSION, type FromAgent, type ToAgent, type TraceEvent } from '@pipeloom/core';
import { dialPeer } from '../peer/handshake.js';
import { PeerLink } from '../peer/link.js';
import { DataStore } from '../taskbag/pulls.js';

// A coordinator's side of task-bag runs, spoken raw over ws (the tests drive agents with it
// before core's runBag exists, and to send what no coordinator would), and a probe: a peer of
// the run that reads agents' outputs by pulling them, as another agent would.

export class BagClient {
  private readonly got: FromAgent[] = [];
  /** Every message the agent sent, in order. */
  readonly all: FromAgent[] = [];
  private waiters: { pred: (m: FromAgent) => boolean; resolve: (m: FromAgent) => void }[] = [];
  readonly events: TraceEvent[] = [];
  closed: { code: number; reason: string } | null = null;
  private onClose: (() => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      const m = JSON.parse(String(d)) as FromAgent;
      if (m.type === 'trace') this.events.push(...m.events);
      this.all.push(m);
      this.got.push(m);
      for (const w of [...this.waiters]) {
        if (w.pred(m)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      for (const f of this.onClose) f();
    });
    ws.on('error', () => {});
  }

  /** Logs in; resolves once the agent welcomed it. */
  static async connect(url: string, token: string): Promise<BagClient> {
    const ws = new WebSocket(url, { maxPayload: 1 << 30 });
    const c = new BagClient(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token })));
      ws.once('error', reject);
      ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)}`)));
      c.next((m) => m.type === 'welcome', 20_000).then(() => resolve(), reject);
    });
    return c;
  }

  send(m: ToAgent | Record<string, unknown>): void {
    this.ws.send(JSON.stringify(m));
  }

  /** The first message (already received or to come) matching `pred`; rejects after `ms` or when the connection closes. */
  next<T extends FromAgent>(pred: (m: FromAgent) => boolean, ms = 30_000): Promise<T> {
    const seen = this.got.find(pred);
    if (seen) {
      this.got.splice(this.got.indexOf(seen), 1);
      return Promise.resolve(seen as T);
    }
    return new Promise<T>((resolve, reject) => {
      const w = {
        pred,
        resolve: (m: FromAgent) => {
          clearTimeout(t);
          this.got.splice(this.got.indexOf(m), 1);
          resolve(m as T);
        },
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`no matching message within ${ms} ms (got ${this.got.map((m) => m.type).join(', ') || 'nothing'})`));
      }, ms);
      this.waiters.push(w);
      this.onClose.push(() => {
        clearTimeout(t);
        reject(new Error(`connection closed: ${this.closed?.code} ${this.closed?.reason}`));
      });
    });
  }

  /** The task's result: task-done or task-failed for `id` (and `attempt`). */
  result(id: string, attempt = 1, ms = 60_000): Promise<Extract<FromAgent, { type: 'task-done' | 'task-failed' }>> {
    return this.next((m) => (m.type === 'task-done' || m.type === 'task-failed') && m.id === id && m.attempt === attempt, ms);
  }

  /** Resolves once the connection closed. */
  whenClosed(ms = 10_000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms);
      this.onClose.push(() => {
        clearTimeout(t);
        resolve(this.closed!);
      });
    });
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * A peer of a task-bag run that only pulls: it must be first in the run's hosts (earlier hosts
 * dial later ones), and dials each agent with the run's keys while they deploy.
 */
export class BagProbe {
  readonly store: DataStore;
  private constructor(
    readonly links: Map<string, PeerLink>,
    me: string,
  ) {
    this.store = new DataStore(me, links, 1 << 30);
  }

  static async dial(me: string, agents: { host: string; url: string }[], keys: { token: string; secret: string; runId: string }): Promise<BagProbe> {
    const links = new Map<string, PeerLink>();
    await Promise.all(
      agents.map(async (a) => {
        const frames = await dialPeer(a.url, me, a.host, keys, { maxFrame: 1 << 30, maxText: 16 << 20 });
        links.set(a.host, new PeerLink(a.host, frames));
      }),
    );
    return new BagProbe(links, me);
  }

  /** Output `key` (`bytes` long) from `host`, as an agent would pull it (fresh: nothing cached), as f32. */
  async f32(host: string, key: string, bytes: number): Promise<Float32Array> {
    const b = await this.store.get(host, key, 'probe', bytes);
    this.store.free([key]);
    return new Float32Array(b.slice().buffer);
  }

  close(): void {
    for (const l of this.links.values()) l.close();
  }
}
