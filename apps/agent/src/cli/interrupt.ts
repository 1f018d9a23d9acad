// Ctrl-C during `run` or `calibrate`: the first SIGINT stops the run in progress; the command
// then stops its local agents and exits 130 (128 + SIGINT, what shells report for Ctrl-C).
// A second SIGINT leaves at once, killing the local agents so none outlives the command.

export const EXIT_INTERRUPTED = 130;
/** The reason a run stopped by Ctrl-C ends with (its failure's message). */
export const INTERRUPTED = 'interrupted (Ctrl-C)';

export class Interrupt {
  interrupted = false;
  /** Stops the work in progress (the run); set while there is one. */
  onStop?: () => void;
  /** Ends what must not outlive the command (local agents) at once, for a second Ctrl-C. */
  onForce?: () => void;

  private readonly handler = () => {
    if (this.interrupted) {
      this.onForce?.();
      process.exit(EXIT_INTERRUPTED);
    }
    this.interrupted = true;
    process.stderr.write(`\npipeloom ${this.command}: interrupted; stopping the run and the local agents (Ctrl-C again to leave at once)\n`);
    this.onStop?.();
  };

  constructor(readonly command: string) {
    process.on('SIGINT', this.handler);
  }

  dispose(): void {
    process.off('SIGINT', this.handler);
  }
}
