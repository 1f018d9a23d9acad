import type { Progress } from '@pipeloom/core';
import { describe, expect, it } from 'vitest';
import { deployLine, eta, plainLine, ProgressBar, shortDuration, terminalLine } from './bar.js';

const at = (cycle: number, cycles: number, elapsed: number): Progress => ({ cycle, cycles, elapsed, iterationsPerSecond: elapsed > 0 ? cycle / elapsed : 0 });

/** A stream that keeps what is written; a terminal of `columns` when given. */
function stream(columns?: number) {
  const writes: string[] = [];
  const s = { isTTY: columns !== undefined, columns, write: (t: string) => writes.push(t) > 0 };
  return { s: s as unknown as NodeJS.WriteStream, writes };
}

describe('the progress line', () => {
  it('fits every terminal width, one column spare, and keeps the ETA while there is room for it', () => {
    const p = at(6, 1013, 4.5);
    for (let columns = 8; columns <= 200; columns++) {
      const line = terminalLine(p, columns);
      expect(line.length, `${columns} columns: ${line}`).toBeLessThanOrEqual(columns - 1);
      if (columns >= 20) expect(line, `${columns} columns`).toContain('eta ');
    }
    expect(terminalLine(p, 80)).toMatch(/^\[-{29}\] +1% {2}cycle 6\/1013 {2}1\.3 it\/s {2}4\.5 s {2}eta 12m35s$/);
    // Wide terminals: the bar stops at 30 cells.
    expect(terminalLine(at(500, 1000, 10), 300)).toMatch(/^\[#{15}-{15}\]/);
  });

  it('the ETA is the cycles left at the rate so far: unknown before the first cycle, 0 at the end', () => {
    expect(eta(at(0, 100, 1))).toBeUndefined();
    expect(eta(at(25, 100, 10))).toBeCloseTo(30);
    expect(eta(at(100, 100, 40))).toBe(0);
    expect(terminalLine(at(0, 100, 1), 80)).toContain('eta --');
    expect(plainLine(at(25, 100, 10))).toBe('progress: 25%  cycle 25/100  2.5 it/s  10.0 s  eta 30.0 s');
    expect([shortDuration(59.94), shortDuration(185), shortDuration(3725)]).toEqual(['59.9 s', '3m05s', '1h02m']);
  });

  it('on a terminal each redraw fits its width, read again at each update (a resize)', () => {
    const { s, writes } = stream(40);
    const bar = new ProgressBar(s);
    bar.update(at(1, 10, 1));
    (s as { columns: number }).columns = 24;
    bar.update(at(2, 10, 2));
    bar.done();
    const drawn = writes.filter((w) => w.startsWith('\r')).map((w) => w.slice(1).replace('\x1b[K', ''));
    expect(drawn.map((d) => d.length <= 39)).toEqual([true, true]);
    expect(drawn[1].length).toBeLessThanOrEqual(23);
    expect(writes.at(-1)).toBe('\n');
  });

  it('without a terminal: a plain line every 2 s, and the final one once however often the last cycle is reported', () => {
    const { s, writes } = stream();
    const bar = new ProgressBar(s);
    for (const p of [at(1, 10, 0.5), at(4, 10, 2.1), at(5, 10, 2.5), at(8, 10, 4.2), at(10, 10, 5), at(10, 10, 5.1), at(10, 10, 5.2)]) bar.update(p);
    bar.done();
    expect(writes).toEqual([`${plainLine(at(4, 10, 2.1))}\n`, `${plainLine(at(8, 10, 4.2))}\n`, `${plainLine(at(10, 10, 5))}\n`]);
  });
});

describe('the deploy line', () => {
  const p = {
    elapsed: 42.5,
    hosts: [
      { host: 'h0', steps: [{ step: 'kernels' as const, pe: 'gpu0@h0' }], deployed: false },
      { host: 'h1', steps: [], deployed: true },
      { host: 'h2', steps: [], deployed: false },
    ],
  };
  it("names each host's step and the time so far", () => {
    expect(deployLine(p)).toBe('deploying  42.5 s  h0 kernel preparation of gpu0@h0, h1 ready, h2 waiting');
  });
  it('fits a terminal, and without one is printed every few seconds', () => {
    const tty = stream(30);
    new ProgressBar(tty.s).deploy(p);
    expect(tty.writes[0]).toBe('\rdeploying  42.5 s  h0 kern...\x1b[K');
    const plain = stream();
    const bar = new ProgressBar(plain.s);
    for (const elapsed of [0, 0.5, 1, 2.5, 3]) bar.deploy({ ...p, elapsed });
    expect(plain.writes.map((w) => w.slice(0, 17))).toEqual(['deploying  0.0 s ', 'deploying  2.5 s ']);
  });
});
