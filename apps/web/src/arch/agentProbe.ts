import { Coordinator, type SocketLike, type PeReport } from '@pipeloom/core';
import type { KernelManifest } from '@pipeloom/kernels';
import { browserClock } from '../lib/clock.js';

// Asks an agent what it serves through core's coordinator (native WebSocket as its socket):
// connect, authenticate, read the welcome, close. Rejects with the coordinator's sentence
// naming the agent and what went wrong (unreachable, wrong token, not an agent).

export interface AgentWelcome {
  host: string;
  pes: PeReport[];
  /** The kernels the agent runs (manifests), where it reports them. */
  kernels?: KernelManifest[];
}

export async function probeAgent(url: string, token: string, timeoutMs = 8000): Promise<AgentWelcome> {
  const c = await Coordinator.connect([url], {
    token,
    connect: (u) => new WebSocket(u) as unknown as SocketLike,
    clock: browserClock,
    timeout: timeoutMs,
  });
  try {
    const a = c.agents[0];
    return { host: a.host, pes: a.pes, kernels: a.kernels };
  } finally {
    c.close();
  }
}
