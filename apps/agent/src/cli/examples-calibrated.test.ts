import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentsForSuite } from '../testing/suite.js';
import { pipeloomInProcess, root } from '../testing/fixtures.js';

// calibrate -> predict -> run through the CLI's commands (main(argv), in this process), both strategies and both sync modes,
// on one local cluster shared by the file (two hosts, three GPUs each: the most any example maps).
// Few iterations: what is checked is that each step reads what the one before wrote (a
// calibration of a document with delays or rates once broke predict and, silently, run). The
// examples with a delay (accumulator) and with feedback, tasks and rates (mlem) go through the
// commands; every example's calibrated prediction in both strategies and sync modes is checked
// in-process by core's run/calibration.test.ts (a process per step for all of them took 16 min).

const agentsOf = agentsForSuite(['h0', 'h1'], { gpus: { h0: 3, h1: 3 }, args: ['--kernel-timeout', '0'] });
const dir = mkdtempSync(join(tmpdir(), 'pipeloom-examples-calibrated-'));
const examples = ['accumulator.json', 'mlem.json'];

function copy(name: string): { file: string; kernels: string[] } {
  const file = join(dir, name);
  writeFileSync(file, readFileSync(join(root, 'examples', name), 'utf8'));
  return { file, kernels: [] };
}

describe("the MLEM example's checker", () => {
  it('fails a run whose reconstruction is above its bound, giving the error and the bound', async () => {
    const doc = JSON.parse(readFileSync(join(root, 'examples/mlem.json'), 'utf8')) as { app: { nodes: { id: string; params?: Record<string, unknown> }[] } };
    // Two iterations are one MLEM step each: nowhere near 1% of the phantom.
    doc.app.nodes.find((n) => n.id === 'error')!.params!.max_error = 0.01;
    const file = join(dir, 'mlem-tight.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = await pipeloomInProcess(
      'run',
      file,
      '--iterations',
      '2',
      '--agents',
      agentsOf()
        .agents.map((a) => a.url)
        .join(','),
      '--token',
      agentsOf().token,
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/node error.*iteration \d+: the reconstruction's relative error 0\.\d+ is above the bound 0\.01000 \(max_error\)/);
  }, 600_000);
});

describe('examples with delays and feedback: calibrate, then predict and run with its calibration', () => {
  for (const name of examples) {
    it(
      name,
      async () => {
        const { file, kernels } = copy(name);
        const agents = [
          '--agents',
          agentsOf()
            .agents.map((a) => a.url)
            .join(','),
          '--token',
          agentsOf().token,
        ];
        const cal = await pipeloomInProcess('calibrate', file, '--iterations', '1', ...agents, ...kernels);
        expect(cal.status, cal.stderr).toBe(0);
        const written = file.replace(/\.json$/, '.calibration.json');

        const p = await pipeloomInProcess('predict', file, '--format', 'json', ...kernels);
        expect(p.status, p.stderr).toBe(0);
        // Measured on this very document: no "another version" warning, nothing named that the user did not write.
        expect(p.stderr).not.toMatch(/another version|unknown key/);
        const json = JSON.parse(p.stdout);
        expect(json.calibration.file).toBe(written);
        for (const sync of ['barrier', 'self-timed'])
          for (const s of ['overlap', 'noOverlap']) if (json[s]) expect(json.bySync[sync][s].cycleTime, `${sync} ${s}`).toBeGreaterThan(0);

        for (const overlap of [true, false]) {
          for (const sync of ['barrier', 'self-timed']) {
            const r = await pipeloomInProcess('run', file, '--iterations', '2', overlap ? '--overlap' : '--no-overlap', '--sync', sync, ...agents, ...kernels);
            const what = `${overlap ? 'overlap' : 'no overlap'}, ${sync}: ${r.stderr}`;
            if (!json[overlap ? 'overlap' : 'noOverlap']) {
              // A strategy the document cannot run (predict says why) is refused as a user error.
              expect(r.status, what).toBe(2);
              continue;
            }
            expect(r.status, what).toBe(0);
            expect(r.stdout, what).toContain(`predicted with calibration ${written}`);
          }
        }
      },
      900_000,
    );
  }
});
