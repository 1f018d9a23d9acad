import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toChromeTrace, toPajeTrace, toTraceCsv, traceMetadata, type ChromeTrace } from '@pipeloom/core';
import { chromeSliceCounts, pajeHostFields, pajeStateCounts, pjDump } from '@pipeloom/core/testing';
import { agentsForSuite } from '../testing/suite.js';
import { compileOrThrow, connect, piic, pipeloomAsync, pipeloomInProcess, root } from '../testing/fixtures.js';

// What CI checks of `--trace FILE.paje|.csv`: PajeNG's pj_dump (Debian's pajeng) reads every
// example's predicted Paje trace and a measured one from real local agents without error,
// and its states are the Chrome trace's slices, lane by lane and kind by kind. The commands run
// in this process (main(argv)), but for a document of the example kernel package: kernel packages
// load into the process that names them (--kernels), so that one is a process.

const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-trace-'));
const examples = readdirSync(join(root, 'examples'))
  .filter((f) => f.endsWith('.json'))
  .sort();
const agentsOf = agentsForSuite(['h0', 'h1']);

const flows = (t: ChromeTrace) => t.traceEvents.filter((e) => e.ph === 's').length;

describe('pipeloom predict --trace FILE.paje', () => {
  it(`pj_dump reads the trace of each of the ${examples.length} examples, one state per Chrome slice and one link per flow`, async () => {
    for (const [k, name] of examples.entries()) {
      const doc = join(root, 'examples', name);
      // Half take the format from the extension, half from --trace-format.
      const paje = k % 2 ? ['--trace', join(tmp, `${name}.paje`)] : ['--trace', join(tmp, `${name}.out`), '--trace-format', 'paje'];
      const packaged = readFileSync(doc, 'utf8').includes('"image.');
      const pipeloom = packaged ? pipeloomAsync : pipeloomInProcess;
      const common = ['predict', doc, '--iterations', '6', ...(packaged ? ['--kernels', 'examples/kernels/image'] : [])];
      const [p, c] = await Promise.all([pipeloom(...common, ...paje), pipeloom(...common, '--trace', join(tmp, `${name}.json`))]);
      expect(p.status, `${name}: ${p.stderr}`).toBe(0);
      expect(c.status, `${name}: ${c.stderr}`).toBe(0);
      expect(p.stderr).toContain('(open it in ViTE, or read it with pj_dump)');
      const chrome = JSON.parse(readFileSync(join(tmp, `${name}.json`), 'utf8')) as ChromeTrace;
      const text = readFileSync(paje[1], 'utf8');
      const d = pjDump(text);
      expect(pajeStateCounts(d), name).toEqual(chromeSliceCounts(chrome));
      expect(d.states.length, name).toBeGreaterThan(0);
      expect(d.links.length, name).toBe(flows(chrome));
      // Each host carries the Chrome trace's metadata.
      const m = chrome.metadata!;
      for (const fields of pajeHostFields(text).values())
        expect(fields, name).toEqual({
          source: 'predicted',
          document: m.document.name,
          hash: m.document.hash,
          strategy: m.strategy,
          sync: m.sync,
          calibration: m.calibration,
          agent: '-',
        });
      expect(pajeHostFields(text).size, name).toBe(d.containers.filter((c) => c.type === 'Host').length);
    }
  });

  it('--trace FILE.csv writes a header and a row per event it reports', async () => {
    const file = join(tmp, 'piic.csv');
    const r = await pipeloomInProcess('predict', 'examples/piic.json', '--iterations', '5', '--trace', file);
    expect(r.status, r.stderr).toBe(0);
    const wrote = /wrote .*piic\.csv: (\d+) events .*\(one row per event, for pandas or R\)/.exec(r.stderr);
    expect(wrote, r.stderr).not.toBeNull();
    const lines = readFileSync(file, 'utf8').split('\r\n');
    expect(lines[0]).toBe('lane,kind,name,iteration,start,duration,bytes,cycle,host,pe,thread,node,buffer,value,task,share,attempt');
    expect(lines).toHaveLength(Number(wrote![1]) + 2);
  });

  it('refuses an unknown --trace-format, or one without --trace, naming the flag, before predicting', async () => {
    const bad = await pipeloomInProcess('predict', 'examples/piic.json', '--trace', join(tmp, 'x.txt'), '--trace-format', 'otf2');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe('pipeloom predict: --trace-format must be one of chrome, paje, csv, not "otf2"\n');
    const alone = await pipeloomInProcess('predict', 'examples/piic.json', '--trace-format', 'csv');
    expect(alone.status).toBe(1);
    expect(alone.stderr).toContain('--trace-format says how to write the --trace file: give --trace FILE too');
  });
});

describe('a measured trace (real local agents)', () => {
  it("pj_dump reads the Paje export of a run's events; its states are the Chrome export's slices; the CSV has a row each", async () => {
    const doc = piic({ iterations: 6 });
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const ig = compileOrThrow(doc, true);
      const r = await c.run(ig, { iterations: 6, sync: 'barrier' }).done;
      expect(r.ok, r.failure?.message).toBe(true);
      const metadata = traceMetadata(doc, { source: 'measured', overlap: true, sync: 'barrier', agents: c.agents });
      const d = pjDump(toPajeTrace(r.events, ig, metadata));
      const chrome = toChromeTrace(r.events, ig, metadata);
      expect(pajeStateCounts(d)).toEqual(chromeSliceCounts(chrome));
      expect(d.states).toHaveLength(r.events.length);
      expect(d.links.length).toBe(flows(chrome));
      expect(d.states.filter((s) => s.kind === 'barrier').length).toBeGreaterThan(0);
      expect(toTraceCsv(r.events).split('\r\n')).toHaveLength(r.events.length + 2);
    } finally {
      c.close();
    }
  });

  it('pipeloom run --trace FILE.paje writes a trace pj_dump reads, a state per event it reports', async () => {
    const file = join(tmp, 'run.paje');
    const r = await pipeloomInProcess(
      'run',
      'examples/split-join.json',
      '--iterations',
      '4',
      '--agents',
      agentsOf()
        .agents.map((a) => a.url)
        .join(','),
      '--token',
      agentsOf().token,
      '--trace',
      file,
    );
    expect(r.status, r.stderr).toBe(0);
    const wrote = /wrote .*run\.paje: (\d+) events \(open it in ViTE, or read it with pj_dump\)/.exec(r.stderr);
    expect(wrote, r.stderr).not.toBeNull();
    const d = pjDump(readFileSync(file, 'utf8'));
    expect(d.states).toHaveLength(Number(wrote![1]));
    const version = (JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')) as { version: string }).version;
    expect(pajeHostFields(readFileSync(file, 'utf8')).get('host h0')).toMatchObject({ source: 'measured', agent: version });
  });
});
