import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { example, pipeloomInProcess } from '../testing/fixtures.js';

// `pipeloom run --mode taskbag` on local agents: the summary, the trace file, the flags' mistakes.
// The command runs in this process (main(argv)); its agents are processes.

const dir = mkdtempSync(join(tmpdir(), 'pipeloom-bag-'));
/** examples/mlem.json at 8^3, 12 angles, projbp as 6 tasks, the loop's delay 1 (one MLEM step per iteration). */
function mlemFile(mode?: 'taskbag'): string {
  const doc = example('mlem') as unknown as { params: Record<string, { value: number }>; options: Record<string, unknown> };
  doc.params.N.value = 8;
  doc.params.A.value = 12;
  doc.params.K.value = 6;
  doc.params.D.value = 1;
  if (mode) doc.options.mode = mode;
  const file = join(dir, `mlem-${mode ?? 'static'}.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

describe('pipeloom run --mode taskbag', () => {
  it('runs the tasks on local agents and prints what the bag did, the reports, and writes the trace with task slices and counters', async () => {
    const trace = join(dir, 'bag.json');
    const r = await pipeloomInProcess('run', mlemFile(), '--mode', 'taskbag', '--iterations', '4', '--prefetch', '1', '--window', '1', '--trace', trace);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/run complete in task-bag mode \(window 1, prefetch 1\), 4 iterations, 40 tasks in /);
    expect(r.stdout).toMatch(/tasks {8}40 committed; 0 late results discarded, 0 requeued, 0 recomputed; agents leave after 2 s of silence/);
    expect(r.stdout).toMatch(/per PE {7}(cpu0@h0|gpu0@h0) \d+/);
    expect(r.stdout).toMatch(/error \(iteration 3\): error = 0\.\d+, activity = /);
    const events = (JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { name: string; ph: string }[] }).traceEvents;
    expect(events.some((e) => e.ph === 'X' && e.name === 'projbp[5]@3')).toBe(true);
    expect(events.some((e) => e.ph === 'C' && e.name === 'bag depth')).toBe(true);
  });

  it("the document's options.mode alone selects the task bag, and --format json gives the summary", async () => {
    const r = await pipeloomInProcess('run', mlemFile('taskbag'), '--iterations', '2', '--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { mode: string; ok: boolean; bag: { committed: number; tasks: number; perPe: Record<string, number> } };
    expect(s).toMatchObject({ mode: 'taskbag', ok: true, bag: { committed: 20, tasks: 20 } });
    expect(Object.values(s.bag.perPe).reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('refuses bad flags with a message and exit 1, and a node no PE can run before anything starts', async () => {
    const file = mlemFile();
    for (const [flag, value, said] of [
      ['--mode', 'dynamic', /--mode must be one of static, taskbag, not "dynamic"/],
      ['--prefetch', '0', /--prefetch must be a whole number of at least 1/],
      ['--slow', 'cpu@h0=0.5', /--slow takes PE=FACTOR with a factor from 1 to 1000/],
    ] as const) {
      const r = await pipeloomInProcess('run', file, flag, value);
      expect(r.status, `${flag} ${value}`).toBe(1);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { app: { nodes: { id: string; requires?: string[] }[] } };
    doc.app.nodes.find((n) => n.id === 'update')!.requires = ['software=false'];
    const strict = join(dir, 'strict.json');
    writeFileSync(strict, JSON.stringify(doc));
    const r = await pipeloomInProcess('run', strict, '--mode', 'taskbag', '--iterations', '2');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/node "update" has no PE to run on among the connected agents: cpu0@h0 on h0: fails software=false/);
    expect(r.stderr).toMatch(/refused: no PE of the connected agents can run some node/);
  });
});
