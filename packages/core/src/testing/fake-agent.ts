import type { ImplementationGraph } from '../compile/types.js';
import type { Clock, SocketLike } from '../run/coordinator.js';
import { PROTOCOL_VERSION, type FromAgent, type ToAgent } from '../run/protocol.js';

/** A fake agent's side of the conversation: the host it serves and how it answers (after the current task, as a socket would). */
export interface FakeAgentIo {
  host: string;
  send: (m: FromAgent) => void;
}

/**
 * In-memory agents for a real Coordinator (pass the result as `CoordinatorOptions.connect`,
 * with URLs `mem://<host>`): each logs in reporting the PEs `ig` maps onto its host (ample
 * memory and limits), answers pings on `clock` and frees a run on `stop`; every other message
 * goes to `onMessage`, which answers through `io.send` as the test's agent would.
 */
export function fakeAgents(ig: ImplementationGraph, clock: Pick<Clock, 'now'>, onMessage: (m: ToAgent, io: FakeAgentIo) => void): (url: string) => SocketLike {
  return (url) => {
    const host = url.slice('mem://'.length);
    const s: SocketLike = {
      readyState: 1,
      send(text) {
        const m = JSON.parse(text) as ToAgent;
        const send = (a: FromAgent) => queueMicrotask(() => s.onmessage?.({ data: JSON.stringify(a) }));
        if (m.type === 'auth') {
          const pes = ig.programs.pes
            .filter((p) => p.host === host)
            .map((p) => ({
              id: p.pe,
              kind: p.kind,
              name: p.pe,
              vendor: 'mem',
              memory: 2 ** 40,
              limits: p.kind === 'gpu' ? { maxBufferSize: 2 ** 40, maxStorageBufferBindingSize: 2 ** 40 } : undefined,
            }));
          send({ type: 'welcome', version: PROTOCOL_VERSION, host, pes });
        } else if (m.type === 'ping') send({ type: 'pong', id: m.id, t: m.t, agent: clock.now() });
        else if (m.type === 'stop') send({ type: 'stopped', runId: m.runId, freed: true });
        else onMessage(m, { host, send });
      },
      close() {},
      onopen: null,
      onmessage: null,
      onclose: null,
      onerror: null,
    };
    queueMicrotask(() => s.onopen?.(undefined as never));
    return s;
  };
}
