import { parseMessage, PROTOCOL_VERSION, type FromAgent, type PeReport } from '@pipeloom/core/coordinator/protocol';

// Asks an agent what it serves: open, authenticate, read its welcome, close. Rejects with a
// sentence naming the agent and what went wrong (refused, wrong token, not an agent).

export interface AgentWelcome {
  host: string;
  pes: PeReport[];
}

export function probeAgent(url: string, token: string, timeoutMs = 5000): Promise<AgentWelcome> {
  return new Promise((resolve, reject) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url);
    } catch (e) {
      reject(new Error(`${url} is not a WebSocket URL (${e instanceof Error ? e.message : String(e)}); write ws://host:port`));
      return;
    }
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
      try {
        ws.close();
      } catch {
        // already closed
      }
    };
    const timer = setTimeout(() => done(() => reject(new Error(`${url} did not answer within ${timeoutMs / 1000} s`))), timeoutMs);
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token }));
    ws.onmessage = (ev) => {
      const m = parseMessage<FromAgent>(String(ev.data));
      if (!m.ok) return done(() => reject(new Error(`${url}: ${m.reason}`)));
      if (m.message.type === 'welcome') {
        const w = m.message;
        done(() => resolve({ host: w.host, pes: w.pes }));
      } else if (m.message.type === 'error') {
        const msg = m.message.message;
        done(() => reject(new Error(`${url}: ${msg}`)));
      }
    };
    ws.onerror = () => done(() => reject(new Error(`cannot reach an agent at ${url}; is \`pipeloom agent\` running there?`)));
    ws.onclose = (ev) => done(() => reject(new Error(`${url} closed the connection${ev.reason ? `: ${ev.reason}` : ''}${ev.code === 4001 ? ' (check the token)' : ''}`)));
  });
}
