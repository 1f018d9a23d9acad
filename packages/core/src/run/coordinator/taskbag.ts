/**
 * A task-bag run (run/taskbag/): the agents form a pool of PEs; `TaskBag` decides which task
 * goes where as results come back, and this file carries its commands to the agents and their
 * answers to it over the connections, with heartbeats and the bag's counters as trace events.
 */
import { findKernel, IO_WRITE } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../../diagnostics.js';
import type { TraceEvent } from '../../trace/event.js';
import type { DeployOptions } from '../deploy-watch.js';
import type { SinkWrite, ToAgent } from '../protocol.js';
import { failingClause, reported } from '../../document/requires.js';
import { taskBagPolicy } from '../policy.js';
import { kernelMajor, TaskBag, type BagCommand, type BagCounts, type BagPe } from '../taskbag/bag.js';
import type { BagGraph } from '../taskbag/graph.js';
import { later, cancel, type Clock } from '../timers.js';
import type { AgentConn, Listener } from './connection.js';
import { samePe } from '../pe-alias.js';
import {
  answered,
  attach,
  byId,
  emptyResult,
  ending,
  relayTrace,
  runSecret,
  stopped,
  watchDeploy,
  type OnStoppable,
  type RunOptions,
  type RunResult,
} from './lifecycle.js';

/** A task-bag run's options (run/taskbag/): the bag's window and the policy's prefetch besides what every run takes. */
export interface BagRunOptions extends Pick<RunOptions, 'iterations' | 'onProgress' | 'onEvents' | 'keepEvents' | 'emulateDevices' | keyof DeployOptions> {
  /** Most iterations in flight (default 2). */
  window?: number;
  /** Most tasks a PE holds given and not done (default 2); 'unbounded': the paper's literal reading. */
  prefetch?: number | 'unbounded';
  /** Milliseconds of silence after which an agent leaves the pool (default 2000): its tasks are requeued. */
  heartbeat?: number;
  /** A labelled emulation of slower PEs: PE id -> factor s (the agent sleeps (s - 1) x each task's run time after it). */
  slow?: Record<string, number>;
  /** Tries of one task before the run fails (default 3). */
  attempts?: number;
  /** Only these PEs form the pool (default: every PE of every connected agent). */
  pes?: readonly string[];
  /** The bag's counts after every event (commits, requeues, discarded results): live numbers for a UI, and what fault tests wait for. */
  onBag?: (counts: BagCounts & { depth: number; inFlight: number }) => void;
}

/**
 * The pool of a task-bag run: every PE of every connected agent, and each node that no PE of
 * it can run, with each PE's first failing clause (the run is refused before it starts).
 */
export function checkBag(conns: readonly AgentConn[], graph: BagGraph, only?: readonly string[]): Diagnostic[] {
  const pool = poolOf(conns, only);
  const unknown = only?.filter((id) => !conns.some((c) => c.info.pes.some((p) => samePe(p.id, id)))) ?? [];
  if (unknown.length)
    return [
      error(
        'run.pes',
        `no connected agent serves PE ${unknown.join(', ')}`,
        `name PEs the agents report: ${poolOf(conns)
          .map((p) => p.id)
          .join(', ')}`,
      ),
    ];
  const bag = new TaskBag(graph, pool, { iterations: 1, policy: taskBagPolicy() });
  return bag.unplaceable().map(({ node }) => {
    const why = pool.map((pe) => {
      const failing = pe.capabilities && node.requires?.length ? failingClause(pe.capabilities, node.requires) : undefined;
      const lacks = pe.kernels && node.version && !pe.kernels.has(kernelMajor(node.kernel, node.version));
      return `${pe.id} on ${pe.host}: ${lacks ? `its agent lacks kernel ${node.kernel} ${node.version} (or has another major version; load it with --kernels)` : failing ? `fails ${failing.text} (${reported(pe.capabilities!, failing)})` : pe.capabilities ? 'its buffers do not fit (memory or binding limits), or the kernel has no WGSL for a GPU' : 'reports no capabilities'}`;
    });
    const clauses = node.requires?.map((c) => c.text).join(',') ?? '';
    return error(
      `app.nodes.${node.id}`,
      `node "${node.id}" has no PE to run on among the connected agents: ${why.join('; ') || 'none connected'}`,
      clauses
        ? `connect an agent with a PE that meets ${clauses} (\`pipeloom agents --match "${clauses}"\` lists them), or relax the requirement`
        : 'connect an agent whose PEs can hold its buffers, or shrink the data',
    );
  });
}

/** The PEs of the connected agents (or only those named), with what the bag places by: capabilities and kernel versions. */
function poolOf(conns: readonly AgentConn[], only?: readonly string[]): BagPe[] {
  const pool = conns
    .filter((c) => !c.closed)
    .flatMap((c) => {
      const kernels =
        c.info.kernels &&
        new Set(c.info.kernels.filter((k) => typeof k?.id === 'string' && typeof k.version === 'string').map((k) => kernelMajor(k.id, k.version)));
      return c.info.pes.map((pe) => ({ id: pe.id, host: c.info.host, capabilities: pe.capabilities, kernels }));
    });
  return only ? pool.filter((pe) => only.some((id) => samePe(id, pe.id))) : pool;
}

/**
 * Runs `graph` in task-bag mode on every connected agent: tasks go to idle, else least-loaded,
 * capable PEs as they become ready (run/taskbag/bag.ts, run/policy.ts). The agents pull inputs
 * from one another; nothing but tasks and their receipts passes through here.
 */
export async function runBag(
  conns: AgentConn[],
  clock: Clock,
  runId: string,
  graph: BagGraph,
  opts: BagRunOptions,
  onStoppable: OnStoppable,
): Promise<RunResult> {
  const result = emptyResult(runId, opts.iterations, opts.iterations);
  const heartbeatMs = opts.heartbeat ?? 2000;
  const problems = checkBag(conns, graph, opts.pes);
  if (problems.length) {
    result.failure = { host: problems[0].path, message: problems.map((d) => d.message).join('; ') };
    return result;
  }
  const involved = conns.filter((c) => !c.closed);
  const bag = new TaskBag(graph, poolOf(conns, opts.pes), {
    iterations: opts.iterations,
    window: opts.window,
    policy: taskBagPolicy({ prefetch: opts.prefetch }),
    attempts: opts.attempts,
  });
  const perPe: Record<string, number> = byId();
  result.bag = { ...bag.counts, perPe, heartbeat: heartbeatMs };
  let startMs = 0;
  const { finish, finished } = ending(() => bag.end());
  onStoppable((reason) => finish({ host: 'coordinator', message: reason }));
  const byHost = new Map(involved.map((c) => [c.info.host, c]));
  const gone = new Set<string>();
  const watch = watchDeploy(involved, clock, opts, finish);

  // The bag's depth and tasks in flight as counter events, whenever they change.
  let lastDepth = -1;
  let lastFlight = -1;
  const counters = () => {
    if (!startMs) return;
    const depth = bag.depth;
    const flight = bag.inFlight;
    if (depth === lastDepth && flight === lastFlight) return;
    const t = (clock.now() - startMs) * 1000;
    const events: TraceEvent[] = [];
    const counter = (name: string, value: number): TraceEvent => ({
      host: 'coordinator',
      pe: 'bag',
      thread: 'bag',
      kind: 'counter',
      name,
      value,
      start: t,
      end: t,
      iteration: -1,
      cycle: -1,
    });
    if (depth !== lastDepth) events.push(counter('bag depth', depth));
    if (flight !== lastFlight) events.push(counter('in flight', flight));
    lastDepth = depth;
    lastFlight = flight;
    result.eventCount += events.length;
    if (opts.keepEvents !== false) result.events.push(...events);
    opts.onEvents?.(events);
  };
  const take = (cmds: BagCommand[]) => {
    for (const cmd of cmds) {
      if (cmd.type === 'task') byHost.get(cmd.host)?.send({ type: 'task', runId, ...cmd.task });
      else if (cmd.type === 'free') byHost.get(cmd.host)?.send({ type: 'free', runId, keys: cmd.keys });
      else if (cmd.type === 'finished') finish();
      else finish(cmd.failure);
    }
    Object.assign(result.bag!, bag.counts);
    counters();
    opts.onBag?.({ ...bag.counts, depth: bag.depth, inFlight: bag.inFlight });
    if (opts.onProgress && startMs) {
      const elapsed = (clock.now() - startMs) / 1000;
      const cycle = Math.floor(bag.counts.committed / Math.max(1, graph.nodes.length));
      opts.onProgress({ cycle, cycles: opts.iterations, elapsed, iterationsPerSecond: elapsed > 0 ? cycle / elapsed : 0, unit: 'iteration' });
    }
  };
  const leave = (c: AgentConn, reason: string) => {
    if (gone.has(c.info.host)) return;
    gone.add(c.info.host);
    if (startMs) take(bag.leave(c.info.host, reason));
    else finish(watch.during({ host: c.info.host, message: `agent ${c.info.host} (${c.url}) ${reason} before the run started` }));
  };

  const cleanups: (() => void)[] = [];
  for (const c of involved) {
    const offsetUs = c.info.offset * 1000;
    const host = c.info.host;
    const listener: Listener = (m) => {
      if ('runId' in m && m.runId !== runId) return;
      switch (m.type) {
        case 'trace':
          relayTrace(m, startMs * 1000 + offsetUs, result, opts);
          break;
        case 'task-done': {
          const before = bag.counts.committed;
          take(bag.done(host, m));
          if (bag.counts.committed > before) {
            perPe[m.pe] = (perPe[m.pe] ?? 0) + 1;
            const at = m.id.lastIndexOf('@');
            if (m.values && typeof m.values === 'object') {
              const node = m.id.slice(0, at);
              result.reports.push({ host, node, iteration: Number(m.id.slice(at + 1)), values: m.values });
              const w = sinkWrite(node, host, m.pe, m.values, graph);
              if (w) result.writes = [...result.writes.filter((x) => x.node !== node), w];
            }
          }
          break;
        }
        case 'deploy-progress':
          watch.progress(host, m.steps);
          break;
        case 'deployed':
          watch.deployed(host);
          break;
        case 'task-failed':
          take(bag.failed(host, { ...m, lost: typeof m.lost === 'string' && byHost.has(m.lost) ? m.lost : undefined }));
          break;
        case 'failed':
          leave(c, `failed: ${m.failure?.message ?? 'unknown'}`);
          break;
        case 'error':
          leave(c, `reported an error: ${m.message}`);
          break;
        default:
          break;
      }
    };
    cleanups.push(attach(c, listener, (reason) => leave(c, `disconnected: ${reason}`)));
  }

  const hosts = involved.map((c) => ({ id: c.info.host, url: c.url }));
  const kernels: Record<string, string> = {};
  for (const n of graph.nodes) {
    const v = findKernel(n.kernel)?.version;
    if (v) kernels[n.kernel] = v;
  }
  const deploy = JSON.stringify({
    type: 'bag-deploy',
    runId,
    secret: runSecret(),
    hosts,
    nodes: graph.nodes.map((n) => ({ id: n.id, kernel: n.kernel, params: n.params })),
    kernels,
    emulateDevices: opts.emulateDevices,
    slow: opts.slow,
    progressMs: watch.progressMs,
  } satisfies ToAgent);
  for (const c of involved) c.sendText(deploy);
  const deployed = await answered(involved, runId, 'deployed', result, finished);
  watch.stop();
  let heartbeat: unknown;
  if (deployed) {
    startMs = clock.now();
    for (const c of involved) c.send({ type: 'start', runId });
    // Heartbeats: a ping every quarter of the limit; an agent silent past it leaves the pool.
    const beat = () => {
      const now = clock.now();
      for (const c of involved) {
        if (gone.has(c.info.host) || c.closed) continue;
        if (now - Math.max(c.lastHeard, startMs) > heartbeatMs) leave(c, `silent for ${heartbeatMs / 1000} s`);
        else c.send({ type: 'ping', id: -1, t: now });
      }
      heartbeat = later(clock, beat, heartbeatMs / 4);
    };
    heartbeat = later(clock, beat, heartbeatMs / 4);
    take(bag.start());
  }
  const failure = await finished;
  if (heartbeat !== undefined) cancel(clock, heartbeat as never);
  result.seconds = startMs ? (clock.now() - startMs) / 1000 : 0;
  for (const c of involved) c.send({ type: 'stop', runId, reason: failure ? `run failed: ${failure.message}` : 'run complete' });
  // Every agent flushes its last trace batches before `stopped` (after a success too: tasks
  // report done before their trace batch goes out).
  await stopped(involved, runId, clock);
  for (const f of cleanups) f();
  Object.assign(result.bag!, bag.counts);
  result.events.sort((a, b) => a.start - b.start);
  result.ok = !failure;
  if (failure) result.failure = failure;
  return result;
}

/** A sink's totals from its task's report (an io.write task reports path, bytes, files, iterations), or undefined. */
function sinkWrite(node: string, host: string, pe: string, v: Record<string, unknown>, graph: BagGraph): SinkWrite | undefined {
  if (graph.nodes.find((n) => n.id === node)?.kernel !== IO_WRITE) return undefined;
  const { path, bytes, files, iterations } = v;
  if (typeof path !== 'string' || ![bytes, files, iterations].every((x) => Number.isSafeInteger(x))) return undefined;
  return { node, host, pe, path: path.slice(0, 1024), bytes: bytes as number, files: files as number, iterations: iterations as number };
}
