import { availableParallelism } from 'node:os';
import WebSocket from 'ws';
import { programHosts, type ImplementationGraph, Coordinator, ConnectError, type RunResult, type SocketLike } from '@pipeloom/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { exited, spawnLocalAgents, type LocalAgents } from '../local/spawn.js';
import type { DataRoot } from '../io/roots.js';
import { EXIT_INTERRUPTED, Interrupt } from './interrupt.js';
import { EXIT } from './read-document.js';
import { MAX_CPUS } from '../devices/discover.js';

// The agents a command runs on: `--agents URLS --token T`, or one local agent per host of the
// document (started here, stopped by `close`). Shared by `pipeloom run` and `pipeloom calibrate`.

const wsConnect = (url: string) => new WebSocket(url, { maxPayload: 1 << 30 }) as unknown as SocketLike;

/** The coordinator's clock in Node: wall milliseconds on the performance timeline. */
export const nodeClock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (h: never) => clearTimeout(h),
};

/** GPU PEs needed per host (gpu<i>@host needs i+1). */
export function gpusPerHost(ig: ImplementationGraph): Record<string, number> {
  // Keyed by the document's host ids: no prototype, so a host named "constructor" is a host.
  const out: Record<string, number> = Object.create(null);
  for (const p of ig.programs.pes) {
    const m = /^gpu(\d+)@/.exec(p.pe);
    if (m) out[p.host] = Math.max(out[p.host] ?? 0, Number(m[1]) + 1);
  }
  return out;
}

/** CPU PEs needed per host: `cpu<i>@host` needs i+1, `cpu@host` (the first core) 1. */
export function cpusPerHost(pes: readonly { host: string; pe: string }[]): Record<string, number> {
  const out: Record<string, number> = Object.create(null);
  for (const p of pes) {
    const m = /^cpu(\d*)@/.exec(p.pe);
    if (m) out[p.host] = Math.max(out[p.host] ?? 0, Number(m[1] || 0) + 1);
  }
  return out;
}

/** `--cpus N` (an agent's CPU PEs): N, null when absent, undefined (after a message) when it is not 1 to MAX_CPUS. */
export function cpusFlag(command: string, value: string | boolean | undefined): number | null | undefined {
  if (value === undefined) return null;
  const n = Number(value);
  if (typeof value === 'string' && value.trim() !== '' && Number.isInteger(n) && n >= 1 && n <= MAX_CPUS) return n;
  console.error(
    `pipeloom ${command}: --cpus must be a whole number of CPU PEs from 1 to ${MAX_CPUS}, not "${String(value)}" (this machine has ${availableParallelism()} cores; more PEs than cores share them)`,
  );
  return undefined;
}

export interface AgentFlags {
  agents?: string;
  token?: string;
  /** Local agents only. */
  linkRate?: number;
  /** Local agents only: CPU PEs each serves, at least what the document maps (--cpus). */
  cpus?: number;
  allowWgsl?: boolean;
  kernelTimeout?: number | null;
  /** Local agents only: --kernel-load-timeout in seconds. */
  kernelLoadTimeout?: number;
  /** Local agents only: kernel package files each loads (--kernels). */
  kernels?: string[];
  /** Local agents only: the data roots each serves (--data). */
  data?: readonly DataRoot[];
}

/** The agent flags `run` and `calibrate` share (--agents, --token, --allow-wgsl), with what each parsed of the rest. */
export function agentFlags(
  v: { agents?: unknown; token?: unknown; 'allow-wgsl'?: unknown },
  parsed: Pick<AgentFlags, 'kernelTimeout' | 'kernelLoadTimeout' | 'kernels' | 'data'>,
): AgentFlags {
  return { agents: v.agents as string | undefined, token: v.token as string | undefined, allowWgsl: v['allow-wgsl'] === true, ...parsed };
}

export interface OpenAgents {
  /** Connected to every agent (`renew` replaces it after a connection was lost). */
  coordinator: Coordinator;
  local?: LocalAgents;
  /**
   * The coordinator for the next run: this one while every connection is open, else a new one
   * logged in to every agent again (local agents: once their supervisor has restarted them).
   */
  renew(): Promise<Coordinator>;
  close(): Promise<void>;
}

/**
 * For kernels this process does not have: which of the agents at `urls` report them, as
 * `h0 (1.0.0 from PKG)` by kernel id (connects, reads their logins, closes). Empty when the
 * agents cannot be reached: the unknown-kernel diagnostics stand on their own.
 */
export async function agentsHaving(urls: string[], token: string, ids: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!ids.length || !urls.length) return out;
  try {
    const c = await Coordinator.connect(urls, { token, connect: wsConnect, clock: nodeClock, timeout: 10_000 });
    c.close();
    for (const a of c.agents) {
      for (const k of a.kernels ?? []) if (ids.includes(k.id)) out.set(k.id, [...(out.get(k.id) ?? []), `${a.host} (${k.version} from ${k.package})`]);
    }
  } catch {
    // Unreachable agents: nothing more to say than the diagnostics.
  }
  return out;
}

/** Connects to the agents (starting local ones first without --agents); a message on stderr and undefined when it cannot. */
/** The hosts local agents are started for, and the GPUs each serves. */
export interface LocalCluster {
  hosts: string[];
  gpus: Record<string, number>;
  /** CPU PEs each host's agent serves (`--cpus`; a host not named: 1). */
  cpus?: Record<string, number>;
}

/** The hosts of a compiled graph's programs, their GPUs and their CPU PEs. */
export const clusterOf = (ig: ImplementationGraph): LocalCluster => ({ hosts: programHosts(ig), gpus: gpusPerHost(ig), cpus: cpusPerHost(ig.programs.pes) });

export async function openAgents(command: string, cluster: LocalCluster, f: AgentFlags): Promise<OpenAgents | undefined> {
  let local: LocalAgents | undefined;
  let urls: string[];
  let token: string;
  if (typeof f.agents === 'string') {
    urls = f.agents
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    token = f.token ?? process.env.PIPELOOM_TOKEN ?? '';
    if (!token) {
      console.error(`pipeloom ${command}: --agents needs --token (or env PIPELOOM_TOKEN)`);
      return undefined;
    }
  } else {
    local = await spawnLocalAgents(cluster.hosts, {
      gpus: cluster.gpus,
      linkRate: f.linkRate,
      args: [
        // Every local agent serves the most CPU PEs any host of the document has (spawnLocalAgents
        // passes the same flags to each): a run's threads are those of its programs only.
        '--cpus',
        String(Math.max(f.cpus ?? 1, ...Object.values(cluster.cpus ?? {}))),
        ...(f.allowWgsl ? ['--allow-wgsl'] : []),
        ...(f.kernelTimeout != null ? ['--kernel-timeout', String(f.kernelTimeout)] : []),
        ...(f.kernelLoadTimeout !== undefined ? ['--kernel-load-timeout', String(f.kernelLoadTimeout)] : []),
        ...(f.kernels ?? []).flatMap((k) => ['--kernels', k]),
        ...(f.data ?? []).flatMap((r) => ['--data', `${r.name}=${r.dir}`]),
      ],
      // Their log stays quiet, except a local agent that goes (a crash in native GPU code says
      // nothing else) and its supervisor's words: the run's failure names the host, these say
      // how it ended and that it is back for the next run.
      log: (host, line) => /^agent (exited|restarted)/.test(line) && console.error(`\npipeloom ${command}: local agent ${host} ${line.slice('agent '.length)}`),
      restart: true,
      onGiveUp: (_, message) => console.error(`\npipeloom ${command}: ${message}`),
    });
    urls = local.agents.map((a) => a.url);
    token = local.token;
    console.error(`started ${local.agents.length} local agent(s): ${local.agents.map((a) => `${a.host} ${a.url}`).join(', ')}`);
  }
  // The sockets of the coordinator in use: one closed means an agent was lost.
  let sockets: SocketLike[] = [];
  const login = () => {
    const mine: SocketLike[] = [];
    sockets = mine;
    const connect = (url: string) => {
      const s = wsConnect(url);
      mine.push(s);
      return s;
    };
    return Coordinator.connect(urls, { token, connect, clock: nodeClock });
  };
  try {
    const open: OpenAgents = {
      coordinator: await login(),
      local,
      renew: async () => {
        if (sockets.every((s) => s.readyState === WebSocket.OPEN)) return open.coordinator;
        // The local agents whose connection closed, as they were then.
        const lost = sockets.flatMap((s, i) => (s.readyState === WebSocket.OPEN || !local?.agents[i] ? [] : [local.agents[i].process]));
        open.coordinator.close();
        for (let attempt = 1; ; attempt++) {
          await local?.ready();
          try {
            return (open.coordinator = await login());
          } catch (e) {
            if (!local || attempt === 5) throw e;
            // A connection can close before its agent's exit is seen (a loaded machine delivers
            // the exit late): the refused login waits for that exit, then for the restart.
            await Promise.race([Promise.all(lost.map(exited)), sleep(250 * attempt)]);
          }
        }
      },
      close: async () => {
        open.coordinator.close();
        await local?.stop();
      },
    };
    return open;
  } catch (e) {
    await local?.stop();
    console.error(`pipeloom ${command}: ${e instanceof ConnectError ? e.message : String(e)}`);
    return undefined;
  }
}

/**
 * A run on agents, started here or given by --agents: Ctrl-C stops the run (twice: kills the
 * local agents), the agents are closed whatever happens, and a failure to start them is said in
 * a line. `go` returns the exit status.
 */
export async function onAgents(cluster: LocalCluster, flags: AgentFlags, go: (agents: OpenAgents, interrupt: Interrupt) => Promise<number>): Promise<number> {
  const interrupt = new Interrupt('run');
  try {
    // Local agents that cannot start throw here; the catch below names why.
    const agents = await openAgents('run', cluster, flags);
    if (!agents) return interrupt.interrupted ? EXIT_INTERRUPTED : EXIT.failure;
    interrupt.onForce = () => agents.local?.kill();
    try {
      if (interrupt.interrupted) return EXIT_INTERRUPTED;
      return await go(agents, interrupt);
    } finally {
      await agents.close();
    }
  } catch (e) {
    console.error(`pipeloom run: ${e instanceof Error ? e.message : String(e)}`);
    return interrupt.interrupted ? EXIT_INTERRUPTED : EXIT.failure;
  } finally {
    interrupt.dispose();
  }
}

/** The exit status of a finished run, its failure said in a line (a run stopped on purpose keeps its summary and trace). */
export function exitOf(result: RunResult, interrupt: Interrupt): number {
  if (interrupt.interrupted) return EXIT_INTERRUPTED;
  if (!result.ok) {
    const f = result.failure!;
    console.error(
      `pipeloom run: failed on host ${f.host}${f.node ? `, node ${f.node}` : ''}${f.iteration !== undefined ? `, iteration ${f.iteration}` : ''}: ${f.message}`,
    );
    return EXIT.failure;
  }
  return EXIT.ok;
}
