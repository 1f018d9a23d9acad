import type { Progress } from '@pipeloom/core';

// The run's progress on stderr: one redrawn line on a terminal, a plain line every few
// seconds otherwise (CI logs).

export class ProgressBar {
  private lastPlain = 0;
  private drawn = false;
  constructor(
    readonly stream: NodeJS.WriteStream = process.stderr,
    readonly width = 30,
  ) {}

  get tty(): boolean {
    return Boolean(this.stream.isTTY);
  }

  update(p: Progress): void {
    const frac = p.cycles ? Math.min(1, p.cycle / p.cycles) : 0;
    const text = `cycle ${p.cycle}/${p.cycles}  ${p.iterationsPerSecond.toFixed(1)} it/s  ${p.elapsed.toFixed(1)} s`;
    if (this.tty) {
      const full = Math.round(frac * this.width);
      this.stream.write(`\r[${'#'.repeat(full)}${'-'.repeat(this.width - full)}] ${(frac * 100).toFixed(0).padStart(3)}%  ${text}\x1b[K`);
      this.drawn = true;
    } else if (p.elapsed - this.lastPlain >= 2 || p.cycle === p.cycles) {
      this.lastPlain = p.elapsed;
      this.stream.write(`progress: ${(frac * 100).toFixed(0)}%  ${text}\n`);
    }
  }

  done(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}
