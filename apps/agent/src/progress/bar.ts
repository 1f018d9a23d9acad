import { stepsText, type DeployProgress, type Progress } from '@pipeloom/core';

// The run's progress on stderr: one redrawn line on a terminal, fitted to its width, and a
// plain line every few seconds otherwise (CI logs), the final one printed once.

/** Seconds as `4.5 s`, `3m05s`, `1h02m`: short enough for a progress line. */
export function shortDuration(s: number): string {
  if (!Number.isFinite(s) || s < 0) return '?';
  if (s < 60) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

/** Seconds left at the rate so far; undefined before the first cycle completes. */
export function eta(p: Progress): number | undefined {
  if (p.cycle >= p.cycles) return 0;
  return p.iterationsPerSecond > 0 ? (p.cycles - p.cycle) / p.iterationsPerSecond : undefined;
}

const fraction = (p: Progress) => (p.cycles ? Math.min(1, p.cycle / p.cycles) : 0);

/** The plain line (no terminal): every figure, no bar. */
export function plainLine(p: Progress): string {
  const left = eta(p);
  return `progress: ${(fraction(p) * 100).toFixed(0)}%  ${p.unit ?? 'cycle'} ${p.cycle}/${p.cycles}  ${p.iterationsPerSecond.toFixed(1)} it/s  ${shortDuration(p.elapsed)}${left === undefined ? '' : `  eta ${shortDuration(left)}`}`;
}

/**
 * The terminal line in at most `columns - 1` characters (the last column would wrap on some
 * terminals): the bar takes what the figures leave, up to 30; on a narrow terminal the least
 * useful figures go first (rate, then elapsed), then the bar, then the cycle count.
 */
export function terminalLine(p: Progress, columns: number): string {
  const room = Math.max(1, columns - 1);
  const frac = fraction(p);
  const pct = `${(frac * 100).toFixed(0).padStart(3)}%`;
  const left = eta(p);
  const etaText = `eta ${left === undefined ? '--' : shortDuration(left)}`;
  const cycle = `${p.unit ?? 'cycle'} ${p.cycle}/${p.cycles}`;
  const choices = [
    [cycle, `${p.iterationsPerSecond.toFixed(1)} it/s`, shortDuration(p.elapsed), etaText],
    [cycle, shortDuration(p.elapsed), etaText],
    [cycle, etaText],
    [etaText],
  ];
  for (const figures of choices) {
    const text = `${pct}  ${figures.join('  ')}`;
    // `[` bar `] ` before the text; a bar under 10 cells says little, so it goes instead.
    const bar = Math.min(30, room - text.length - 3);
    if (bar >= 10) {
      const full = Math.round(frac * bar);
      return `[${'#'.repeat(full)}${'-'.repeat(bar - full)}] ${text}`;
    }
  }
  for (const figures of choices) {
    const text = `${pct}  ${figures.join('  ')}`;
    if (text.length <= room) return text;
  }
  return pct.trim().slice(0, room);
}

/** A deploy's line: each host's step (or `ready`), then the time so far; cut to `room` characters on a terminal. */
export function deployLine(p: DeployProgress, room = Infinity): string {
  const hosts = p.hosts.map((h) => `${h.host} ${h.deployed ? 'ready' : h.steps.length ? stepsText(h.steps) : 'waiting'}`).join(', ');
  const line = `deploying  ${shortDuration(p.elapsed)}  ${hosts}`;
  return line.length <= room ? line : `${line.slice(0, Math.max(0, room - 3))}...`;
}

export class ProgressBar {
  private lastPlain = 0;
  private drawn = false;
  private finalShown = false;
  constructor(readonly stream: NodeJS.WriteStream = process.stderr) {}

  get tty(): boolean {
    return Boolean(this.stream.isTTY);
  }

  private lastDeploy = -Infinity;

  /** A deploy's progress (RunOptions.onDeploy): redrawn on a terminal, a plain line every few seconds otherwise. */
  deploy(p: DeployProgress): void {
    if (this.tty) {
      this.stream.write(`\r${deployLine(p, Math.max(1, (this.stream.columns || 80) - 1))}\x1b[K`);
      this.drawn = true;
      return;
    }
    if (p.elapsed - this.lastDeploy < 2) return;
    this.lastDeploy = p.elapsed;
    this.stream.write(`${deployLine(p)}\n`);
  }

  update(p: Progress): void {
    if (this.tty) {
      // Read each time: the terminal may have been resized.
      this.stream.write(`\r${terminalLine(p, this.stream.columns || 80)}\x1b[K`);
      this.drawn = true;
      return;
    }
    // The coordinator may report the last cycle more than once (each agent's final report).
    const final = p.cycle >= p.cycles;
    if (final ? this.finalShown : p.elapsed - this.lastPlain < 2) return;
    this.finalShown ||= final;
    this.lastPlain = p.elapsed;
    this.stream.write(`${plainLine(p)}\n`);
  }

  done(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}
