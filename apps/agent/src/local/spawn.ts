import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

// Local agents for `pipeloom run` without --agents: one process per host of the document on
// loopback, a random token, free ports; killed when the run ends.

const BIN = fileURLToPath(new URL('../../bin/pipeloom.js', import.meta.url));

export interface LocalAgent {
  host: string;
  url: string;
  process: ChildProcess;
}

export interface LocalAgents {
  token: string;
  agents: LocalAgent[];
  stop(): Promise<void>;
  /** SIGKILL to every agent at once, for a command leaving without waiting (a second Ctrl-C). */
  kill(): void;
}

export interface SpawnOptions {
  /** GPU PEs each agent must serve (emulated on the machine's adapters when it has fewer). */
  gpus?: Record<string, number>;
  /** Hosts whose agents serve their CPU only (`--cpu-only`). */
  cpuOnly?: readonly string[];
  linkRate?: number;
  token?: string;
  /** Extra environment for every agent (e.g. PIPELOOM_FAULT in tests). */
  env?: Record<string, string>;
  /** Extra flags for every agent. */
  args?: string[];
  /** Where agent stderr goes (default: dropped unless an agent fails to start). */
  log?: (host: string, line: string) => void;
}

/** Dawn prints these on every adapter request (native code, straight to stderr); harmless. */
const DAWN_NOTICE = /^Warning: \w+ artificially reduced from \d+ to \d+/;
/** Which of them this process has passed on already. */
const dawnNotices = new Set<string>();

export async function spawnLocalAgents(hosts: string[], opts: SpawnOptions = {}): Promise<LocalAgents> {
  const token = opts.token ?? randomBytes(16).toString('hex');
  const started = await Promise.allSettled(hosts.map((h) => startOne(h, token, opts)));
  const agents = started.filter((s): s is PromiseFulfilledResult<LocalAgent> => s.status === 'fulfilled').map((s) => s.value);
  const stop = async () => {
    await Promise.all(agents.map((a) => stopAgent(a.process)));
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const kill = () => {
    for (const a of agents) if (!hasExited(a.process)) a.process.kill('SIGKILL');
  };
  return { token, agents, stop, kill };
}

function startOne(host: string, token: string, opts: SpawnOptions): Promise<LocalAgent> {
  const args = ['--expose-gc', BIN, 'agent', '--name', host, '--port', '0', '--emulate-gpus', String(opts.gpus?.[host] ?? 0), ...(opts.cpuOnly?.includes(host) ? ['--cpu-only'] : []), ...(opts.linkRate ? ['--link-rate', String(opts.linkRate)] : []), ...(opts.args ?? [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env, PIPELOOM_TOKEN: token, EGL_PLATFORM: process.env.EGL_PLATFORM ?? 'surfaceless' } });
  const errLines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    // Dawn's harmless notices, the same from every agent at every start: shown once.
    if (DAWN_NOTICE.test(line)) {
      if (!dawnNotices.has(line)) opts.log?.(host, line);
      dawnNotices.add(line);
      return;
    }
    if (errLines.length < 50) errLines.push(line);
    opts.log?.(host, line);
  });
  // An agent that goes while serving says how (a crash in native code leaves no log line).
  // Its exit can be delivered after a stop was asked for (a loaded machine reports the run's
  // failure first), so only the ends a stop causes stay unsaid: SIGTERM, code 0, our SIGKILL.
  child.once('exit', (code, signal) => {
    const stopped = stopping.has(child) && (signal === 'SIGTERM' || code === 0 || killed.has(child));
    if (!stopped) opts.log?.(host, `agent exited (${signal ? `signal ${signal}` : `code ${code}`})`);
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      const m = /^listening (\S+)/.exec(line);
      if (m) resolve({ host, url: m[1], process: child });
      else reject(new Error(`local agent ${host} did not start: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`local agent ${host} exited (${code}) before listening:\n${errLines.join('\n')}`)));
    child.once('error', (e) => reject(new Error(`cannot start a local agent for ${host}: ${e.message}`)));
  });
}

/** Agents being stopped on purpose: their exit is not reported. */
const stopping = new WeakSet<ChildProcess>();
/** Agents that did not stop within 2 s of SIGTERM and were killed. */
const killed = new WeakSet<ChildProcess>();

const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Resolves once the agent's process has exited (at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  return hasExited(child) ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, then SIGKILL after 2 s. */
export async function stopAgent(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  stopping.add(child);
  const t = setTimeout(() => {
    killed.add(child);
    child.kill('SIGKILL');
  }, 2000);
  child.kill('SIGTERM');
  await exited(child);
  clearTimeout(t);
}
