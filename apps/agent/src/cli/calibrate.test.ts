import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCalibration } from '@pipeloom/core';
import { piic, pipeloomInProcess as pipeloom } from '../testing/fixtures.js';

// `pipeloom calibrate` on real local agents (loopback, llvmpipe), then `pipeloom predict`
// reading the file it wrote beside the document; each command in this process (main(argv)).

describe('pipeloom calibrate', () => {
  it('measures every firing and transfer beside the document; predict then says it predicts with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipeloom-calibrate-'));
    const file = join(dir, 'piic.json');
    writeFileSync(file, JSON.stringify(piic({ iterations: 10 })));
    const r = await pipeloom('calibrate', file, '--iterations', '3');
    expect(r.stderr).not.toMatch(/failed/);
    expect(r.status).toBe(0);
    const written = join(dir, 'piic.calibration.json');
    expect(r.stdout).toContain(`wrote ${written}`);
    const cal = parseCalibration(readFileSync(written, 'utf8'));
    expect(cal.ok).toBe(true);
    if (!cal.ok) return;
    const c = cal.calibration;
    // Four nodes (P, I1, I2, C on four PEs) under each strategy; every transfer of the route too.
    expect(c.firings.map((f) => `${f.kernel} ${f.pe} ${f.overlap}`).sort()).toEqual(
      ['matrix.consume cpu@h1', 'matrix.increment gpu0@h0', 'matrix.increment gpu0@h1', 'matrix.produce cpu@h0'].flatMap((k) => [`${k} false`, `${k} true`]),
    );
    expect(c.firings.every((f) => f.seconds > 0)).toBe(true);
    expect(new Set(c.transfers.map((t) => `${t.from}->${t.to}`))).toEqual(
      new Set(['cpu@h0->gpu0@h0', 'gpu0@h0->cpu@h0', 'cpu@h0->cpu@h1', 'cpu@h1->gpu0@h1', 'gpu0@h1->cpu@h1']),
    );
    expect(c.machine.hostname).not.toBe('');
    expect(Object.keys(c.machine.adapters).sort()).toEqual(['gpu0@h0', 'gpu0@h1']);

    const p = await pipeloom('predict', file);
    expect(p.status).toBe(0);
    expect(p.stdout).toContain(`predicted with calibration ${written} (${c.date.slice(0, 10)}`);
    expect(p.stdout).toMatch(/4\/4 firings, 5\/5 transfers/);
    const json = JSON.parse((await pipeloom('predict', file, '--format', 'json')).stdout);
    expect(json.calibration.file).toBe(written);
    // Without it: the cost hints, much faster than llvmpipe.
    const hints = JSON.parse((await pipeloom('predict', file, '--format', 'json', '--no-calibration')).stdout);
    expect(hints.calibration).toBeUndefined();
    expect(json.overlap.cycleTime).toBeGreaterThan(hints.overlap.cycleTime);

    // run: the strategy it ran, predicted from the hints and with the calibration, each against
    // the measured cycle; with emulated devices each GPU firing lasts its calibrated time.
    const run = await pipeloom('run', file, '--iterations', '4', '--no-overlap', '--emulate-devices', '--trace', join(dir, 'trace.json'));
    expect(run.stderr).not.toMatch(/failed/);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^ {2}strategy {5}no overlap, (self-timed|barrier) sync$/m);
    expect(run.stdout).toMatch(
      new RegExp(
        `predicted with calibration ${written.replace(/[.]/g, '[.]')} \\(${c.date.slice(0, 10)} [0-9:]+ UTC\\): measured (\\d+(\\.\\d\\d)?x (slower|faster) than predicted|as predicted)`,
      ),
    );
    const i1 = c.firings.find((f) => f.pe === 'gpu0@h0' && f.overlap === false)!.seconds;
    const trace = JSON.parse(readFileSync(join(dir, 'trace.json'), 'utf8'));
    const fires = trace.traceEvents.filter((e: { ph: string; cat?: string; name: string }) => e.ph === 'X' && e.cat === 'fire' && e.name === 'I1');
    expect(fires).toHaveLength(4);
    for (const f of fires) expect(f.dur).toBeGreaterThanOrEqual(i1 * 1e6 - 1);

    // A document edited since: the entries that still match are used, and it says so.
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.app.nodes.find((n: { id: string }) => n.id === 'I2').params.nb_loop = 9;
    writeFileSync(file, JSON.stringify(edited));
    const stale = await pipeloom('predict', file);
    expect(stale.status).toBe(0);
    expect(stale.stderr).toMatch(/was measured on another version of the document/);
    expect(stale.stderr).toMatch(/has no entry for node I2 \(matrix.increment on gpu0@h1\)/);
    expect(stale.stdout).toMatch(/3\/4 firings/);

    // A malformed one is named and not used.
    writeFileSync(written, JSON.stringify({ ...c, firings: [{ ...c.firings[0], seconds: -1 }] }));
    const bad = await pipeloom('predict', file);
    expect(bad.status).toBe(0);
    expect(bad.stderr).toContain(`warning: ${written}.firings[0]: seconds must be a number of at least 0`);
    expect(bad.stdout).toContain('predicted from cost hints');
  });
});
