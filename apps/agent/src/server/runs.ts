import { CLOSE, type BagDeploy, type FromAgent, type PeerMessage, type ToAgent } from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';
import type { FrameSocket } from '../peer/frames.js';
import { answerPeer, dialPeer, HANDSHAKE, type RunKeys } from '../peer/handshake.js';
import { PeerLink } from '../peer/link.js';
import { processMemory, HostRun } from '../runtime/host-run.js';
import type { Limits } from './security.js';
import { excerpt, type FrontDoorLog } from './front-door-log.js';
import { customWgslRefusal, missingKernelRefusal } from './wgsl-policy.js';
import { deployRefusal, type DeployLimits } from '../runtime/deploy-limits.js';
import { initialRefusal } from '../runtime/initial.js';
import { BagRun } from '../taskbag/bag-run.js';
import { checkBagDeploy, checkFree, checkTask, type BagNode } from '../taskbag/check.js';
import { DEPLOY_LIMITS } from '../runtime/deploy-limits.js';
import { DeployReporter } from './deploy-progress.js';
import { dataRefusal, fireActions } from '../io/check.js';
import type { DataRoot } from '../io/roots.js';
import { bagKernelCalls, deployKernelCalls, prefetchKernelCalls } from '../kernels/load.js';

// The agent's one run at a time, and who may touch it. A run belongs to the coordinator
// connection that deployed it: only that connection starts or stops it, and its peer links
// are opened only by agents that prove the run's secret (peer/handshake.ts). Another
// coordinator, even one holding the token, learns that the agent is busy and nothing more.

type Deploy = Extract<ToAgent, { type: 'deploy' }>;

/** A coordinator's authenticated connection, as the run host sees it. */
export interface CoordinatorConnection {
  send(m: FromAgent): void;
  /** Closes the connection with a reason (a malformed message). */
  close(code: number, reason: string): void;
}

export interface RunHostOptions {
  devices: Devices;
  token: string;
  limits: Limits;
  /** This agent serves TLS: peer links are dialled with wss. */
  tls: boolean;
  linkRate?: number;
  /** Milliseconds for a peer handshake (dialling, or waiting for the run a hello names). */
  handshakeTimeout: number;
  allowWgsl?: boolean;
  /** Bounds on a deploy (default DEPLOY_LIMITS). */
  deployLimits?: DeployLimits;
  kernelTimeoutMs?: number;
  /** The directories io nodes read and write (--data). */
  data?: readonly DataRoot[];
  onStuck?: (reason: string) => void;
  /** The agent's log (front-door-log.ts): escaped, rate-limited lines. */
  log: FrontDoorLog;
}

interface Active {
  runId: string;
  keys: RunKeys;
  /** Hosts allowed to dial this agent for the run (those before it in the run's order). */
  diallers: Set<string>;
  owner: CoordinatorConnection;
  run?: HostRun;
  /** A task-bag run (taskbag/): its nodes and hosts, as checked at bag-deploy. */
  bag?: { run: BagRun; nodes: BagNode[]; hosts: Set<string> };
  links: Map<string, PeerLink>;
  finished: boolean;
}

/** A peer's hello for a run this agent has not been deployed yet: held until the deploy comes, or a deadline. */
interface Waiting {
  runId: string;
  wake: () => void;
}

/** Why a peer's hello is closed when its run has not come: the dialler tries again (dialUntilDeployed). */
const NO_SUCH_RUN = 'no such run on this agent';

/** How many peer hellos may wait for their run's deploy at once, over all runs. */
export const MAX_WAITING_PEERS = 64;

export class RunHost {
  private active: Active | null = null;
  /** Why this agent takes no more runs: a PE thread is held by a kernel that overran. */
  stuck: string | null = null;
  /**
   * Runs being freed. A deploy allocates only once they are released, so two runs' GPU memory
   * never has to fit at once, and `stop` and `close` answer only once the memory is free.
   */
  private freeing: Promise<void> = Promise.resolve();
  /** Frees still under way (a deploy reports waiting for them). */
  private frees = 0;
  private waiting = new Set<Waiting>();
  /** Deploys waiting for the links their earlier hosts dial. */
  private linkWaiters = new Set<() => void>();

  constructor(private readonly opts: RunHostOptions) {}

  private get host(): string {
    return this.opts.devices.host;
  }

  /** Frees a run's memory and threads; a PE thread stuck in a kernel puts the agent out of service. */
  private release(run: HostRun | BagRun): Promise<void> {
    const done = this.releaseNow(run);
    this.addFree(done);
    return done;
  }

  private addFree(done: Promise<void>): void {
    this.frees++;
    const settled = done.catch(() => {}).finally(() => this.frees--);
    this.freeing = Promise.all([this.freeing, settled]).then(() => undefined);
  }

  private async releaseNow(run: HostRun | BagRun): Promise<void> {
    await (run instanceof HostRun ? run.free() : run.stop());
    const pes = run.stuck;
    if (!pes.length || this.stuck) return;
    this.stuck = `${pes.join(', ')} ${pes.length > 1 ? 'are' : 'is'} held by a kernel that ran past the time limit`;
    if (this.opts.onStuck) this.opts.onStuck(this.stuck);
    else this.opts.log.line('error', 'stuck', `${this.stuck}: new runs are refused until the agent restarts`);
  }

  private endRun(reason: string): void {
    const a = this.active;
    if (!a) return;
    this.active = null;
    a.run?.abort(reason);
    if (a.run) void this.release(a.run);
    if (a.bag) void this.release(a.bag.run);
    for (const l of a.links.values()) l.close(reason);
    // A deploy waiting for its peers' links learns that its run is over.
    for (const check of this.linkWaiters) check();
    this.opts.log.line('info', 'run-ended', `run ${excerpt(a.runId)} ended: ${reason}`);
  }

  /** A coordinator's message after login. Throws with a message for the coordinator. */
  async handle(from: CoordinatorConnection, m: ToAgent): Promise<void> {
    switch (m.type) {
      case 'ping':
        from.send({ type: 'pong', id: m.id, t: m.t, agent: performance.timeOrigin + performance.now() });
        return;
      case 'deploy':
        return this.deploy(from, m);
      case 'bag-deploy':
        return this.bagDeploy(from, m);
      case 'task': {
        const a = this.mine(from, m.runId);
        if (!a?.bag) throw new Error(`no task-bag run of this coordinator is deployed on ${this.host}`);
        const r = checkTask(m, a.bag.nodes, a.bag.hosts, this.opts.devices, this.opts.deployLimits ?? DEPLOY_LIMITS);
        if (!r.ok) return from.close(CLOSE.protocol, r.reason);
        a.bag.run.task(r.checked);
        return;
      }
      case 'free': {
        const r = checkFree(m);
        if (!r.ok) return from.close(CLOSE.protocol, r.reason);
        this.mine(from, m.runId)?.bag?.run.free(r.keys);
        return;
      }
      case 'start': {
        const a = this.mine(from, m.runId);
        if (a?.bag) {
          from.send({ type: 'started', runId: a.runId });
          a.bag.run.start();
          return;
        }
        if (!a?.run) throw new Error(`no run of this coordinator is deployed on ${this.host}`);
        from.send({ type: 'started', runId: a.runId });
        const run = a.run;
        await run.execute();
        a.finished = true;
        void this.release(run);
        return;
      }
      case 'stop': {
        const a = this.mine(from, m.runId);
        if (a) {
          this.endRun(typeof m.reason === 'string' ? m.reason.slice(0, 200) : 'stopped');
          await this.freeing;
          from.send({ type: 'stopped', runId: a.runId, freed: true });
        } else {
          // Only an id as long as a peer's hello may name goes back (a longer string is not cut and echoed).
          from.send({ type: 'stopped', runId: typeof m.runId === 'string' && m.runId.length <= HANDSHAKE.maxId ? m.runId : '', freed: false });
        }
        return;
      }
      default:
        return;
    }
  }

  /** The active run if `from` deployed it and `runId` names it; otherwise nothing (whose run it is stays unsaid). */
  private mine(from: CoordinatorConnection, runId: unknown): Active | null {
    const a = this.active;
    return a && a.owner === from && a.runId === runId ? a : null;
  }

  /** A coordinator's connection closed: its run, if any, ends. */
  coordinatorGone(from: CoordinatorConnection): void {
    if (this.active?.owner === from) this.endRun('the coordinator disconnected');
  }

  private async deploy(from: CoordinatorConnection, m: Deploy): Promise<void> {
    const host = this.host;
    if (this.stuck) throw new Error(`agent ${host} cannot take runs until it restarts: ${this.stuck}`);
    await this.prefetch('deploy', deployKernelCalls(m));
    if (this.active && this.active.owner !== from) throw new Error(`agent ${host} is busy with another coordinator's run`);
    // Shape, counts and sizes against this agent's PEs, before anything is dialled or allocated.
    const refused = deployRefusal(m, this.opts.devices, this.opts.deployLimits);
    if (refused) {
      this.opts.log.line('warn', 'deploy-refused', `deploy on ${host}: ${refused}`);
      throw new Error(`deploy on ${host}: ${refused}`);
    }
    if (this.active) this.endRun('replaced by a new deploy');
    if (!Array.isArray(m.programs) || !Array.isArray(m.hosts)) throw new Error('malformed deploy: programs and hosts must be lists');
    if (typeof m.runId !== 'string' || typeof m.secret !== 'string' || m.secret.length < 16)
      throw new Error('malformed deploy: runId and a secret of 16+ characters are required');
    const me = m.hosts.findIndex((h) => h?.id === host);
    const a: Active = {
      runId: m.runId,
      keys: { token: this.opts.token, secret: m.secret, runId: m.runId },
      diallers: new Set(m.hosts.slice(0, Math.max(0, me)).map((h) => h.id)),
      owner: from,
      links: new Map(),
      finished: false,
    };
    this.active = a;
    const progress = new DeployReporter(m.runId, m.progressMs, (msg) => from.send(msg));
    try {
      if (me < 0) throw new Error(`agent ${host} is not among the run's hosts`);
      // Before any link or device work: a refused run costs nothing and the agent stays free.
      const refusal =
        missingKernelRefusal(host, m.programs, m.kernels) ??
        customWgslRefusal(host, m.programs, this.opts.allowWgsl ?? false) ??
        initialRefusal(host, m.programs, m.buffers, m.kernels) ??
        dataRefusal(host, fireActions(m.programs), this.opts.data ?? [], m.iterations);
      if (refusal) {
        this.opts.log.line('warn', 'deploy-refused', refusal);
        throw new Error(refusal);
      }
      await this.connectLinks(a, m.hosts, me, progress);
      if (this.frees) progress.host('freeing');
      await this.freeing;
      if (this.active !== a) throw new Error('run replaced while deploying');
      const run = await HostRun.prepare(m, this.opts.devices, a.links, (msg) => from.send(msg), {
        kernelTimeoutMs: this.opts.kernelTimeoutMs,
        progress: (pe, step) => (pe === null ? step && progress.host(step) : progress.pe(pe, step)),
      });
      if (this.active !== a) {
        void this.release(run);
        throw new Error('run stopped while deploying');
      }
      a.run = run;
      for (const [peer, link] of a.links) {
        link.rate = m.linkRate ?? this.opts.linkRate ?? 0;
        link.onMessage = (pm) => {
          if (pm.type === 'barrier') run.barrier.token(pm.seq, pm.round);
          else if (pm.type === 'credit') run.credit(peer, pm.counter, pm.value);
          else if (pm.type === 'abort') run.abort(pm.message);
        };
        link.onClose = (reason) => {
          if (this.active === a && !a.finished) run.fail({ host: peer, message: `lost the link from ${host} to host ${peer} (${reason})` });
        };
      }
      progress.end();
      from.send({
        type: 'deployed',
        runId: m.runId,
        adapters: run.adapters,
        allocated: run.allocated(),
        memory: { ...processMemory(), peHeaps: run.peHeaps.start },
      });
    } catch (e) {
      if (this.active === a) this.endRun('deploy failed');
      throw new Error(`deploy on ${host}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      progress.end();
    }
  }

  /**
   * Package kernels' functions that a deploy's checks call (port types...), evaluated first on
   * the package thread (kernels/package-host.ts): this thread keeps answering meanwhile, and
   * one past the time limit refuses the deploy, naming it.
   */
  private async prefetch(what: string, calls: { kernel: string; params: Record<string, unknown> }[]): Promise<void> {
    try {
      await prefetchKernelCalls(calls);
    } catch (e) {
      const reason = `${what} on ${this.host}: ${e instanceof Error ? e.message : String(e)}`;
      this.opts.log.line('warn', 'deploy-refused', reason);
      throw new Error(reason);
    }
  }

  /**
   * Every link of the run: dialled to later hosts, waited for from earlier ones. No time limit:
   * a peer that is slow to get its deploy keeps reporting progress, one that went silent fails
   * the deploy at the coordinator, which then stops the run here.
   */
  private async connectLinks(a: Active, hosts: { id: string; url: string }[], me: number, progress: DeployReporter): Promise<void> {
    if (hosts.length > 1) progress.host('links');
    for (const w of this.waiting) if (w.runId === a.runId) w.wake();
    // Lower index dials higher: each pair gets one link.
    await Promise.all(hosts.slice(me + 1).map(async (h) => a.links.set(h.id, await this.dialUntilDeployed(a, h.id, h.url))));
    await this.linksFrom(a);
  }

  /**
   * Dials a later host until it has this run: a peer holds a hello for a run it has not been
   * deployed yet only for the handshake's time (it is not authenticated yet), so a peer whose
   * deploy comes later than that (a busy machine) is dialled again while this run lasts. Any
   * other failure (unreachable, no answer at all, a wrong proof) fails the deploy at once.
   */
  private async dialUntilDeployed(a: Active, peer: string, url: string): Promise<PeerLink> {
    for (let pause = 100; ; pause = Math.min(1000, pause * 2)) {
      try {
        return await this.dial(a, peer, url);
      } catch (e) {
        if (this.active !== a || !(e instanceof Error) || !e.message.endsWith(`closed: ${NO_SUCH_RUN}`)) throw e;
      }
      await new Promise((r) => setTimeout(r, pause));
      if (this.active !== a) throw new Error('run stopped while deploying');
    }
  }

  /**
   * A task-bag run (taskbag/): checked, linked to every other agent of the run (pulls go over
   * those links), then `deployed`; nothing is allocated and no PE thread starts until tasks come.
   */
  private async bagDeploy(from: CoordinatorConnection, m: BagDeploy): Promise<void> {
    const host = this.host;
    if (this.stuck) throw new Error(`agent ${host} cannot take runs until it restarts: ${this.stuck}`);
    await this.prefetch('bag-deploy', bagKernelCalls(m));
    if (this.active && this.active.owner !== from) throw new Error(`agent ${host} is busy with another coordinator's run`);
    const checked = checkBagDeploy(m, this.opts.devices, { allowWgsl: this.opts.allowWgsl ?? false });
    if (!checked.ok) {
      this.opts.log.line('warn', 'deploy-refused', `bag-deploy on ${host}: ${checked.reason}`);
      throw new Error(`bag-deploy on ${host}: ${checked.reason}`);
    }
    // A task may run on any agent: each checks the io nodes whose root it serves.
    const data = dataRefusal(
      host,
      checked.nodes.map((n) => ({ node: n.id, kernel: n.kernel.id, params: n.params })),
      this.opts.data ?? [],
      undefined,
      true,
    );
    if (data) throw new Error(data);
    if (this.active) this.endRun('replaced by a new deploy');
    const me = m.hosts.findIndex((h) => h.id === host);
    const a: Active = {
      runId: m.runId,
      keys: { token: this.opts.token, secret: m.secret, runId: m.runId },
      diallers: new Set(m.hosts.slice(0, me).map((h) => h.id)),
      owner: from,
      links: new Map(),
      finished: false,
    };
    this.active = a;
    const progress = new DeployReporter(m.runId, m.progressMs, (msg) => from.send(msg));
    try {
      await this.connectLinks(a, m.hosts, me, progress);
      if (this.frees) progress.host('freeing');
      await this.freeing;
      if (this.active !== a) throw new Error('run stopped while deploying');
      for (const link of a.links.values()) link.rate = this.opts.linkRate ?? 0;
      const maxBytes = (this.opts.deployLimits ?? DEPLOY_LIMITS).maxHostBytes;
      const run = new BagRun(m, checked.nodes, this.opts.devices, a.links, (msg) => from.send(msg), maxBytes, this.opts.kernelTimeoutMs);
      a.bag = { run, nodes: checked.nodes, hosts: new Set(m.hosts.map((h) => h.id)) };
      progress.end();
      from.send({ type: 'deployed', runId: m.runId, adapters: run.adapters, allocated: {}, memory: processMemory() });
    } catch (e) {
      if (this.active === a) this.endRun('deploy failed');
      throw new Error(`bag-deploy on ${host}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      progress.end();
    }
  }

  /** Opens the link to a later host of the run, proving the run's keys and checking the peer's. */
  private async dial(a: Active, peer: string, url: string): Promise<PeerLink> {
    const fail = (why: string) => new Error(`cannot reach peer agent ${peer} at ${String(url).slice(0, 200)}: ${why}`);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw fail('not a URL');
    }
    if (target.protocol !== 'ws:' && target.protocol !== 'wss:') throw fail('peer URLs are ws:// or wss://');
    // An agent that serves TLS keeps its run's data off the wire in clear too.
    if (this.opts.tls) target.protocol = 'wss:';
    try {
      // Twice the time the peer holds a hello for a run it does not have yet: its answer
      // (`no such run`, dialled again) comes before this side gives up.
      const frames = await dialPeer(
        target.toString(),
        this.host,
        peer,
        a.keys,
        { maxFrame: this.opts.limits.maxFrame, maxText: this.opts.limits.maxMessage },
        2 * this.opts.handshakeTimeout,
      );
      return new PeerLink(peer, frames, this.opts.linkRate ?? 0);
    } catch (e) {
      throw fail(e instanceof Error ? e.message : String(e));
    }
  }

  /** Waits until every earlier host of the run has dialled in, or the run ends. */
  private linksFrom(a: Active): Promise<void> {
    const missing = () => [...a.diallers].filter((h) => !a.links.has(h));
    if (!missing().length) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.active !== a) return done(new Error('run stopped while deploying'));
        if (!missing().length) done();
      };
      const done = (e?: Error) => {
        this.linkWaiters.delete(check);
        if (e) reject(e);
        else resolve();
      };
      this.linkWaiters.add(check);
    });
  }

  /**
   * A peer agent dialled in and said hello: answer it with the run's keys once this agent has
   * the run (its deploy may still be on the way), then add the link to the run. A hello for a
   * run that does not come within the handshake's time, from a host that is not one of the
   * run's earlier hosts, or beyond MAX_WAITING_PEERS, is closed.
   */
  async acceptPeer(frames: FrameSocket, hello: { host: string; runId: string; nonce: string }, deadline: number): Promise<void> {
    let a = this.runFor(hello.runId);
    if (!a) {
      if (this.waiting.size >= MAX_WAITING_PEERS) return frames.close(4008, 'too many peer links waiting for their run');
      const w: Waiting = { runId: hello.runId, wake: () => {} };
      const woke = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
        w.wake = () => {
          clearTimeout(t);
          resolve(true);
        };
        frames.handlers = { ...frames.handlers, close: () => w.wake() };
        this.waiting.add(w);
      });
      this.waiting.delete(w);
      if (!frames.open) return;
      a = woke ? this.runFor(hello.runId) : null;
      if (!a) return frames.close(4001, NO_SUCH_RUN);
    }
    if (!a.diallers.has(hello.host) || a.links.has(hello.host)) return frames.close(4001, 'this host does not dial this agent in the run');
    try {
      await answerPeer(frames, this.host, hello, a.keys, deadline);
    } catch {
      return;
    }
    if (this.active !== a) return frames.close(1000, 'run over');
    a.links.set(hello.host, new PeerLink(hello.host, frames, this.opts.linkRate ?? 0));
    frames.sendText(JSON.stringify({ type: 'peer-ready', host: this.host } satisfies PeerMessage));
    for (const check of this.linkWaiters) check();
  }

  private runFor(runId: string): Active | null {
    return this.active?.runId === runId && !this.active.run && !this.active.bag ? this.active : null;
  }

  /** Ends the run and waits until its memory is free (agent shutdown). */
  async close(): Promise<void> {
    this.endRun('agent shutting down');
    // Leaving with PE threads still freeing their devices would abort the process (runtime/pe-lifecycle.ts).
    await this.freeing;
  }
}
