import type { DeployStepReport, FailureReport } from './protocol.js';
import { cancel, later, type Clock } from './timers.js';

// Watching a deploy: agents report each step (`deploy-progress`) and repeat it while the step
// runs, so a deploy fails only on silence (no message from a host for `silenceMs`), or, when
// asked, past a hard cap on its whole time. A busy machine that keeps reporting is waited for.

/** Milliseconds of silence from an agent during a deploy before it fails (documented in docs/agents.md). */
export const DEPLOY_SILENCE_MS = 30_000;

/** What each host's deploy is doing, for progress displays (RunOptions.onDeploy). */
export interface DeployProgress {
  /** Seconds since the deploys were sent. */
  elapsed: number;
  hosts: { host: string; steps: DeployStepReport[]; deployed: boolean }[];
}

/** Options of a run's deploy (static and task-bag runs alike). */
export interface DeployOptions {
  /** Milliseconds without a message from an agent before its deploy fails (default DEPLOY_SILENCE_MS). */
  deploySilence?: number;
  /** A hard cap on the whole deploy, milliseconds; absent or 0: none. */
  deployTimeout?: number;
  /** How the cap is named in its failure (default "deploy timeout"; the CLI says "--deploy-timeout"). */
  deployTimeoutName?: string;
  /** Each host's step whenever one reports (and when a host has deployed). */
  onDeploy?: (p: DeployProgress) => void;
}

/** How often agents repeat their step while it runs, for a given silence bound: well inside it, at most every second. */
export const progressInterval = (silenceMs: number): number => Math.max(10, Math.min(1000, Math.floor(silenceMs / 4)));

/** The steps in words: "peer links", "device set-up of gpu0@h1, gpu1@h1 and kernel preparation of cpu@h1". */
export function stepsText(steps: readonly DeployStepReport[]): string {
  if (!steps.length) return 'finishing';
  const byStep = new Map<string, string[]>();
  for (const s of steps) {
    const list = byStep.get(s.step) ?? [];
    if (s.pe) list.push(s.pe);
    byStep.set(s.step, list);
  }
  const name: Record<string, string> = {
    links: 'peer links',
    freeing: 'freeing the previous run',
    allocation: 'allocation',
    device: 'device set-up',
    kernels: 'kernel preparation',
  };
  return [...byStep].map(([step, pes]) => `${name[step] ?? step}${pes.length ? ` of ${pes.join(', ')}` : ''}`).join(' and ');
}

interface Watched {
  host: string;
  steps: DeployStepReport[];
  reported: boolean;
  deployed: boolean;
}

/**
 * One deploy's watch: `progress` and `deployed` as the agents answer, `stop` once all deployed
 * or the run ended. `heard(host)` is when anything last came from the host (the clock's ms);
 * `fail` ends the run with the failure naming the host and step.
 */
export class DeployWatch {
  private readonly hosts: Watched[];
  private readonly started: number;
  private timer: unknown;
  private readonly silence: number;

  constructor(
    hosts: readonly string[],
    private readonly clock: Clock,
    private readonly opts: DeployOptions,
    private readonly heard: (host: string) => number,
    private readonly fail: (f: FailureReport) => void,
  ) {
    this.hosts = hosts.map((host) => ({ host, steps: [], reported: false, deployed: false }));
    this.started = clock.now();
    this.silence = opts.deploySilence ?? DEPLOY_SILENCE_MS;
    const tick = Math.min(progressInterval(this.silence), opts.deployTimeout ? Math.max(10, opts.deployTimeout / 4) : Infinity);
    const beat = () => {
      this.check();
      if (this.timer !== undefined) this.timer = later(clock, beat, tick);
    };
    this.timer = later(clock, beat, tick);
  }

  /** What agents are asked to repeat their step every (ms): the deploy's `progressMs`. */
  get progressMs(): number {
    return progressInterval(this.silence);
  }

  progress(host: string, steps: DeployStepReport[]): void {
    const h = this.hosts.find((x) => x.host === host);
    if (!h || h.deployed) return;
    h.steps = steps.map((s) => (s.pe === undefined ? { step: s.step } : { step: s.step, pe: s.pe }));
    h.reported = true;
    this.show();
  }

  deployed(host: string): void {
    const h = this.hosts.find((x) => x.host === host);
    if (!h) return;
    h.deployed = true;
    h.steps = [];
    this.show();
  }

  stop(): void {
    if (this.timer === undefined) return;
    cancel(this.clock, this.timer as never);
    this.timer = undefined;
  }

  /**
   * A failure during the deploy of a host still deploying (its agent's report, a lost link, a
   * closed connection) says which step that host was in.
   */
  during(f: FailureReport): FailureReport {
    const h = this.timer === undefined ? undefined : this.hosts.find((x) => x.host === f.host && !x.deployed && x.reported && x.steps.length);
    return h ? { ...f, message: `${f.message} (deploy: ${h.host} during ${stepsText(h.steps)})` } : f;
  }

  private show(): void {
    this.opts.onDeploy?.({
      elapsed: (this.clock.now() - this.started) / 1000,
      hosts: this.hosts.map((h) => ({ host: h.host, steps: h.steps, deployed: h.deployed })),
    });
  }

  private check(): void {
    const now = this.clock.now();
    const waiting = this.hosts.filter((h) => !h.deployed);
    for (const h of waiting) {
      if (now - Math.max(this.heard(h.host), this.started) <= this.silence) continue;
      this.stop();
      this.fail({
        host: h.host,
        ...(h.steps[0]?.pe ? { pe: h.steps[0].pe } : {}),
        message: `deploy: ${h.host} silent for ${this.silence / 1000} s ${h.reported ? `during ${stepsText(h.steps)}` : 'since the deploy was sent (no progress reported: an agent older than this coordinator, or one that never got the deploy)'}`,
      });
      return;
    }
    const cap = this.opts.deployTimeout;
    if (cap && now - this.started > cap && waiting.length) {
      this.stop();
      const still = waiting.map((h) => (h.reported ? `${h.host} still in ${stepsText(h.steps)}` : `${h.host} reported no progress`)).join('; ');
      this.fail({
        host: waiting.map((h) => h.host).join(', '),
        message: `deploy: ${still} after the ${cap / 1000} s ${this.opts.deployTimeoutName ?? 'deploy timeout'}`,
      });
    }
  }
}
