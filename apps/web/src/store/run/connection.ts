import { Coordinator, type SocketLike } from '@pipeloom/core';
import type { RunContext } from './state.js';
import { browserClock } from '../../lib/clock.js';

// The Run view's connections: logging in to the agents, and logging in again on its own when a
// connection closes without being asked to (an agent restarted).

/**
 * Milliseconds before each try to log in again after a connection closed: an agent restarted
 * by its supervisor listens again within a second or two; one down for longer is tried every
 * few seconds, never given up on (Disconnect stops it).
 */
export const RECONNECT_MS = [500, 1000, 2000, 4000, 8000];

/**
 * The coordinator's view of a socket, telling `closed` too when it closes (the coordinator
 * keeps the socket's own handlers).
 */
function watched(socket: SocketLike, closed: () => void): SocketLike {
  const w: SocketLike = {
    get readyState() {
      return socket.readyState;
    },
    send: (data) => socket.send(data),
    close: (code, reason) => socket.close(code, reason),
    onopen: null,
    onmessage: null,
    onclose: null,
    onerror: null,
  };
  socket.onopen = (ev) => w.onopen?.(ev);
  socket.onmessage = (ev) => w.onmessage?.(ev);
  socket.onerror = (ev) => w.onerror?.(ev);
  socket.onclose = (ev) => {
    w.onclose?.(ev);
    closed();
  };
  return w;
}

/** Connect and Disconnect of a Run view's store; `connect` opens a socket to an agent. */
export function connectionSlice(ctx: RunContext, connect: (url: string) => SocketLike) {
  const { store } = ctx;
  // Logins are numbered; `live` is the one the coordinator in use came from. A socket of another
  // login closing is one we closed (or a login that failed): only the live one's are losses.
  let logins = 0;
  let live = 0;
  // The agents and token of the live login, to log in to again after a loss.
  let target: { list: string[]; token: string } | null = null;
  // The reconnect in progress (cleared to cancel it) and its wait.
  let retry: object | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;

  /** Logs in to `list` with sockets that report a close to `lostConnection`. */
  const login = (list: string[], token: string) => {
    const n = ++logins;
    const open = (url: string) => watched(connect(url), () => lostConnection(n, url));
    return { n, connecting: Coordinator.connect(list, { token, connect: open, clock: browserClock, timeout: 10_000 }) };
  };

  const cancelRetry = () => {
    retry = null;
    clearTimeout(retryTimer);
  };

  const lostConnection = (n: number, url: string) => {
    if (n !== live) return;
    const host = ctx.coordinator?.agents.find((a) => a.url === url)?.host ?? url;
    const lost = store.getState().lost ?? [];
    store.setState({ connection: 'reconnecting', lost: lost.includes(host) ? lost : [...lost, host], connectError: undefined });
    if (!retry) void reconnect();
  };

  /** Logs in to the same agents again, after the run the loss ended (if any) is over; tries until it works or is cancelled. */
  const reconnect = async () => {
    const mine = {};
    retry = mine;
    // The run on the lost agent fails on its own, naming the host; its coordinator goes after it.
    while (ctx.handle) await ctx.handle.done;
    if (retry !== mine || !target) return;
    live = 0;
    ctx.coordinator?.close();
    ctx.coordinator = null;
    const { list, token } = target;
    for (let attempt = 0; ; attempt++) {
      const wait = RECONNECT_MS[Math.min(attempt, RECONNECT_MS.length - 1)];
      await new Promise((resolve) => (retryTimer = setTimeout(resolve, wait)));
      if (retry !== mine) return;
      const { n, connecting } = login(list, token);
      try {
        const c = await connecting;
        if (retry !== mine) {
          c.close();
          return;
        }
        retry = null;
        ctx.coordinator = c;
        live = n;
        store.setState({ connection: 'connected', agents: c.agents, lost: undefined, connectError: undefined });
        return;
      } catch (e) {
        if (retry !== mine) return;
        const next = RECONNECT_MS[Math.min(attempt + 1, RECONNECT_MS.length - 1)] / 1000;
        store.setState({ connectError: `${e instanceof Error ? e.message : String(e)} (trying again in ${next} s)` });
      }
    }
  };

  const slice = {
    async connect(): Promise<void> {
      const { urls, token } = store.getState();
      const list = urls
        .split(/[\s,]+/)
        .map((s) => s.trim())
        .filter(Boolean);
      if (!list.length) {
        store.setState({ connection: 'failed', connectError: 'enter at least one agent URL, e.g. ws://127.0.0.1:7070' });
        return;
      }
      slice.disconnect();
      store.setState({ connection: 'connecting', connectError: undefined });
      const { n, connecting } = login(list, token);
      try {
        ctx.coordinator = await connecting;
        live = n;
        target = { list, token };
        store.setState({ connection: 'connected', agents: ctx.coordinator.agents });
      } catch (e) {
        ctx.coordinator = null;
        store.setState({ connection: 'failed', agents: [], connectError: e instanceof Error ? e.message : String(e) });
      }
    },

    disconnect(): void {
      cancelRetry();
      live = 0;
      target = null;
      ctx.handle?.stop('disconnected by the user');
      ctx.coordinator?.close();
      ctx.coordinator = null;
      store.setState({ connection: 'disconnected', agents: [], lost: undefined });
    },
  };
  return slice;
}
