/**
 * The coordinator: runs an implementation graph on agents. Transport-agnostic (no Node or DOM
 * imports): the caller passes a socket factory and a clock, so the CLI uses `ws` and the
 * browser its native WebSocket.
 *
 *   const c = await Coordinator.connect(['ws://127.0.0.1:7070'], {
 *     token, connect: (url) => new WebSocket(url), clock: { now: () => performance.timeOrigin + performance.now(), setTimeout, clearTimeout },
 *   });
 *   c.agents;                        // [{ url, host, pes }] as the agents reported them
 *   c.check(ig);                     // Diagnostic[]: missing host or PE, buffers too big for a PE
 *   const run = c.run(ig, { iterations: 100, onProgress, onEvents });
 *   run.stop('user pressed stop');   // optional
 *   const result = await run.done;   // RunResult: ok | failure (host, node, why), trace, per-thread stats
 *   c.close();
 *
 * Failures never throw out of `run.done`: they come back as `result.failure`. `connect`
 * rejects with a ConnectError whose message names the agent and why (e.g. invalid token).
 *
 * The pieces, one folder down (coordinator/), as the agent's server/ and taskbag/ are split:
 *   connection.ts  the agents' sockets: open, authenticate, clock offsets (`connect`)
 *   check.ts       a static run's graph against what the agents serve (`check`)
 *   lifecycle.ts   what both modes share: options, result, handle, end, trace relay, stop
 *   static.ts      the static run and its deploy messages (`run`, `deployMessages`, `deployTexts`)
 *   taskbag.ts     the task-bag run over `TaskBag` (`runBag`, `checkBag`)
 */
import type { Diagnostic } from '../diagnostics.js';
import type { ImplementationGraph } from '../compile/types.js';
import type { BagGraph } from './taskbag/graph.js';
import { checkGraph } from './coordinator/check.js';
import { connectAgents, type AgentConn, type AgentInfo, type CoordinatorOptions } from './coordinator/connection.js';
import { runHandle, type RunHandle, type RunOptions } from './coordinator/lifecycle.js';
import { runStatic } from './coordinator/static.js';
import { checkBag, runBag, type BagRunOptions } from './coordinator/taskbag.js';

export { ConnectError, type AgentInfo, type Clock, type CoordinatorOptions, type SocketLike } from './coordinator/connection.js';
export { sharedAdapters } from './coordinator/check.js';
export { STOP_WAIT_MS, type Progress, type RunHandle, type RunOptions, type RunResult } from './coordinator/lifecycle.js';
export { deployMessages, deployTexts, type DeploySettings } from './coordinator/static.js';
export type { BagRunOptions } from './coordinator/taskbag.js';

export class Coordinator {
  private constructor(
    private readonly conns: AgentConn[],
    private readonly opts: CoordinatorOptions,
  ) {}

  get agents(): AgentInfo[] {
    return this.conns.map((c) => c.info);
  }

  /** Connects to every agent, authenticates, estimates clock offsets. */
  static async connect(urls: string[], opts: CoordinatorOptions): Promise<Coordinator> {
    return new Coordinator(await connectAgents(urls, opts), opts);
  }

  /** Checks the graph against what the agents serve: every host has an agent, every PE exists and can hold its buffers. */
  check(ig: ImplementationGraph): Diagnostic[] {
    return checkGraph(ig, this.agents);
  }

  /** Deploys and starts a run. Check first: a run of a graph that fails `check` is refused as a failure. */
  run(ig: ImplementationGraph, opts: RunOptions): RunHandle {
    return runHandle(this.opts.clock, 'run', (runId, onStoppable) => runStatic(this.conns, this.opts.clock, runId, ig, opts, onStoppable));
  }

  /**
   * The pool of a task-bag run: every PE of every connected agent, and each node that no PE of
   * it can run, with each PE's first failing clause (the run is refused before it starts).
   */
  checkBag(graph: BagGraph, only?: readonly string[]): Diagnostic[] {
    return checkBag(this.conns, graph, only);
  }

  /**
   * Runs `graph` in task-bag mode on every connected agent: tasks go to idle, else least-loaded,
   * capable PEs as they become ready (run/taskbag/bag.ts, run/policy.ts). The agents pull inputs
   * from one another; nothing but tasks and their receipts passes through here.
   */
  runBag(graph: BagGraph, opts: BagRunOptions): RunHandle {
    return runHandle(this.opts.clock, 'bag', (runId, onStoppable) => runBag(this.conns, this.opts.clock, runId, graph, opts, onStoppable));
  }

  close(): void {
    for (const c of this.conns) if (!c.closed) c.socket.close(1000, 'coordinator done');
  }
}
