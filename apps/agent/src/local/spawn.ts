import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

// Local agents for `pipeloom run` without --agents and for `npm start`: one process per host of
// the document on loopback, a random token, free ports; stopped when the command ends. With
// `restart`, a supervisor starts again an agent that exits on its own (a kernel past its time
// limit makes it kill itself for exactly this; a crash), on the same port with the same token
// and flags, so the URLs and token already handed out stay good. One that a SIGINT or SIGTERM
// stopped (Ctrl-C reaches the whole process group) stays stopped.

const BIN = fileURLToPath(new URL('../../bin/pipeloom.js', import.meta.url));

/**
 * The `pipeloom` to start: this one, or in tests the CLI built once per test run
 * (PIPELOOM_TEST_BIN, scripts/test-build.mjs), which starts without compiling TypeScript.
 */
export function pipeloomBin(): string {
  return process.env.PIPELOOM_TEST_BIN ?? BIN;
}

export interface LocalAgent {
  host: string;
  url: string;
  /** The agent's process now: a restart replaces it. */
  process: ChildProcess;
  /** How many times the supervisor has restarted it. */
  restarts: number;
}

export interface LocalAgents {
  token: string;
  agents: LocalAgent[];
  stop(): Promise<void>;
  /** SIGKILL to every agent at once, for a command leaving without waiting (a second Ctrl-C). */
  kill(): void;
  /**
   * Resolves once every agent is listening: at once, or when the one being restarted is back.
   * Rejects with the supervisor's message when it gave up on an agent.
   */
  ready(): Promise<void>;
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
  /** Start again an agent that exits other than by `stop`, `kill` or a stop signal (SIGINT, SIGTERM); RESTART says how often. */
  restart?: boolean;
  /** With `restart`: an agent is back, listening at its URL again; `why` is how it had ended. */
  onRestart?: (agent: LocalAgent, why: string) => void;
  /** With `restart`: an agent that crashed RESTART.giveUpAfter times in a row is left down; `message` says so and why. */
  onGiveUp?: (host: string, message: string) => void;
}

/**
 * The supervisor's bounds. An exit within `quickMs` of listening, or a start that fails, is a
 * quick crash; the n-th quick crash in a row waits `backoffMs[n - 1]` (the last one from then on)
 * before the next start, and `giveUpAfter` of them leave the agent down. An agent that had run
 * longer is restarted at once.
 */
export const RESTART = { quickMs: 10_000, backoffMs: [250, 500, 1000, 2000], giveUpAfter: 5 };

/** Dawn prints these on every adapter request (native code, straight to stderr); harmless. */
const DAWN_NOTICE = /^Warning: \w+ artificially reduced from \d+ to \d+/;
/** Which of them this process has passed on already. */
const dawnNotices = new Set<string>();

export async function spawnLocalAgents(hosts: string[], opts: SpawnOptions = {}): Promise<LocalAgents> {
  const token = opts.token ?? randomBytes(16).toString('hex');
  const started = await Promise.allSettled(hosts.map((h) => startOne(h, token, opts)));
  const agents = started.filter((s): s is PromiseFulfilledResult<LocalAgent> => s.status === 'fulfilled').map((s) => s.value);
  const supervisors = opts.restart ? agents.map((a) => supervise(a, token, opts)) : [];
  const stop = async () => {
    await Promise.all([...supervisors.map((s) => s.stop()), ...agents.map((a) => stopAgent(a.process))]);
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const kill = () => {
    for (const s of supervisors) s.kill();
    for (const a of agents) if (!hasExited(a.process)) a.process.kill('SIGKILL');
  };
  const ready = async () => {
    await Promise.all(supervisors.map((s) => s.ready()));
  };
  return { token, agents, stop, kill, ready };
}

interface Launch {
  child: ChildProcess;
  /** The URL it listens at; rejects when it exits (or says something else) first. */
  listening: Promise<string>;
}

function launch(host: string, token: string, opts: SpawnOptions, port = 0): Launch {
  const args = [
    'agent',
    '--name',
    host,
    '--port',
    String(port),
    '--emulate-gpus',
    String(opts.gpus?.[host] ?? 0),
    ...(opts.cpuOnly?.includes(host) ? ['--cpu-only'] : []),
    ...(opts.linkRate ? ['--link-rate', String(opts.linkRate)] : []),
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, ['--expose-gc', pipeloomBin(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env, PIPELOOM_TOKEN: token, EGL_PLATFORM: process.env.EGL_PLATFORM ?? 'surfaceless' },
  });
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
    if (!stoppedByUs(child, code, signal)) opts.log?.(host, `agent exited (${endOf(code, signal)})`);
  });
  const listening = new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (line) => {
      const m = /^listening (\S+)/.exec(line);
      if (m) resolve(m[1]);
      else reject(new Error(`local agent ${host} did not start: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`local agent ${host} exited (${code}) before listening:\n${errLines.join('\n')}`)));
    child.once('error', (e) => reject(new Error(`cannot start a local agent for ${host}: ${e.message}`)));
  });
  return { child, listening };
}

async function startOne(host: string, token: string, opts: SpawnOptions): Promise<LocalAgent> {
  const { child, listening } = launch(host, token, opts);
  return { host, url: await listening, process: child, restarts: 0 };
}

const endOf = (code: number | null, signal: NodeJS.Signals | null) => (signal ? `signal ${signal}` : `code ${code}`);
const stoppedByUs = (child: ChildProcess, code: number | null, signal: NodeJS.Signals | null) =>
  stopping.has(child) && (signal === 'SIGTERM' || code === 0 || killed.has(child));

/** Watches one agent and starts it again, on its port, each time it exits on its own. */
function supervise(agent: LocalAgent, token: string, opts: SpawnOptions) {
  const port = Number(new URL(agent.url).port);
  const say = (line: string) => opts.log?.(agent.host, line);
  let over = false;
  let gaveUp: string | undefined;
  let quick = 0;
  let listenedAt = performance.now();
  // The process being started, until it listens (then it is agent.process).
  let starting: ChildProcess | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  const settle = (e?: Error) => {
    for (const w of waiters) e ? w.reject(e) : w.resolve();
    waiters = [];
  };

  const watch = (child: ChildProcess) =>
    child.once('exit', (code, signal) => {
      if (over || stoppedByUs(child, code, signal)) return;
      // An agent exits 0 only when SIGINT or SIGTERM asked it to (before its handlers are set,
      // the signal itself ends it): for local agents, mostly a Ctrl-C in the terminal, which
      // signals the command's whole process group.
      if (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM') {
        gaveUp = `local agent ${agent.host} was stopped by a signal from outside (${endOf(code, signal)}); it is not restarted`;
        settle(new Error(gaveUp));
        return;
      }
      ended(endOf(code, signal), performance.now() - listenedAt < RESTART.quickMs);
    });

  const ended = (why: string, wasQuick: boolean, lastWords = '') => {
    quick = wasQuick ? quick + 1 : 0;
    if (quick >= RESTART.giveUpAfter) {
      gaveUp = `local agent ${agent.host} crashed ${quick} times in a row within ${RESTART.quickMs / 1000} s of starting (last: ${why}): it is not restarted again; fix the cause and start the command again${lastWords ? `. Its last lines:\n${lastWords}` : ''}`;
      say(gaveUp);
      opts.onGiveUp?.(agent.host, gaveUp);
      settle(new Error(gaveUp));
      return;
    }
    const wait = quick ? RESTART.backoffMs[Math.min(quick, RESTART.backoffMs.length) - 1] : 0;
    timer = setTimeout(() => restart(why), wait);
  };

  const restart = (why: string) => {
    timer = undefined;
    const { child, listening } = launch(agent.host, token, opts, port);
    starting = child;
    listening.then(
      (url) => {
        starting = undefined;
        if (over) return;
        agent.process = child;
        agent.url = url;
        agent.restarts++;
        listenedAt = performance.now();
        watch(child);
        say(`agent restarted after it exited (${why}): listening ${url} with the same token (restart ${agent.restarts})`);
        opts.onRestart?.(agent, why);
        settle();
      },
      (e: Error) => {
        starting = undefined;
        if (over) return;
        // Said something other than "listening": not an agent that serves; make sure it is gone.
        void stopAgent(child);
        const [first, ...rest] = e.message.split('\n');
        ended(first.replace(`local agent ${agent.host} `, '').replace(/:$/, ''), true, rest.slice(-10).join('\n'));
      },
    );
  };

  watch(agent.process);
  return {
    ready(): Promise<void> {
      if (gaveUp) return Promise.reject(new Error(gaveUp));
      if (!timer && !starting && !hasExited(agent.process)) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    async stop(): Promise<void> {
      over = true;
      clearTimeout(timer);
      settle(new Error(`local agent ${agent.host} was stopped`));
      if (starting) await stopAgent(starting);
    },
    kill(): void {
      over = true;
      clearTimeout(timer);
      settle(new Error(`local agent ${agent.host} was killed`));
      if (starting && !hasExited(starting)) starting.kill('SIGKILL');
    },
  };
}

/** Agents being stopped on purpose: their exit is not reported. */
const stopping = new WeakSet<ChildProcess>();
/** Agents that did not stop within 2 s of SIGTERM and were killed. */
const killed = new WeakSet<ChildProcess>();

export const hasExited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

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
