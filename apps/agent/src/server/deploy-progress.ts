import { MAX_DEPLOY_STEPS, type DeployStep, type DeployStepReport, type FromAgent } from '@pipeloom/core';

// A deploy's progress as this agent reports it (`deploy-progress`): the steps in flight, sent
// when they change and repeated every `progressMs` while one runs, so the coordinator sees a
// busy machine is alive and fails a deploy only when an agent goes silent. A deploy that does
// not ask (no `progressMs`: an older coordinator) gets no reports.

export class DeployReporter {
  /** Steps in flight, by PE ('' for a host-wide step), oldest first. */
  private readonly steps = new Map<string, DeployStepReport>();
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly runId: string,
    progressMs: number | undefined,
    private readonly send: (m: FromAgent) => void,
  ) {
    this.timer = progressMs ? setInterval(() => this.report(), progressMs) : undefined;
  }

  /** A host-wide step (peer links, freeing, allocation): it replaces every step in flight. */
  host(step: DeployStep): void {
    this.steps.clear();
    this.steps.set('', { step });
    this.report();
  }

  /** A PE's step (device set-up, kernel preparation), or `null` once the PE is ready. */
  pe(pe: string, step: DeployStep | null): void {
    this.steps.delete('');
    // A changed step goes last: the map lists the step running longest first.
    this.steps.delete(pe);
    if (step) this.steps.set(pe, { step, pe });
    this.report();
  }

  /** The deploy ended (deployed or refused): no more reports. */
  end(): void {
    clearInterval(this.timer);
  }

  private report(): void {
    if (this.timer === undefined) return;
    this.send({ type: 'deploy-progress', runId: this.runId, steps: [...this.steps.values()].slice(0, MAX_DEPLOY_STEPS) });
  }
}
