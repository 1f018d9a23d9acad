import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipeloomInProcess as pipeloom, root } from '../testing/fixtures.js';

// The CLI's commands, run in this process (main(argv), output captured): they are about the
// command's logic; cli/conventions.test.ts runs the real process.
const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-cli-'));

describe('pipeloom compile', () => {
  it("prints nodes with (schedule, latency), buffers and memory like the paper's figures", async () => {
    const r = await pipeloom('compile', 'examples/paper-fig5.json', '--no-overlap');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('without computation-communication overlap');
    expect(r.stdout).toMatch(/^ {2}b \(2, 2\) +on gpu1@h0$/m);
    expect(r.stdout).toMatch(/^ {2}bn_11 +gpu0@h1 +b\.out +single +colour \d+ +4 MiB +copied from bn_10; read by c2\.in, read by d\.in, read by f\.in$/m);
    expect(r.stdout).toMatch(/^ {2}gpu0@h1 +\S+ MiB \/ \S+ MiB \/ \S+ MiB {2}of 16 GiB$/m);
  });

  it('prints JSON with schedule, latency, buffers and memory', async () => {
    const r = await pipeloom('compile', 'examples/piic.json', '--format', 'json');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.schedule).toEqual({ P: 0, I1: 1, I2: 2, C: 3 });
    expect(out.latency).toEqual({ P: 0, I1: 2, I2: 6, C: 8 });
    expect(out.buffers[0]).toEqual({
      id: 'bn_0',
      pe: 'cpu@h0',
      source: 'P',
      port: 'out',
      from: 'P',
      consumers: [],
      next: ['bn_3'],
      depth: 2,
      bytes: 16777216,
      color: 0,
    });
    expect(out.memory['gpu0@h0']).toEqual({ before: 67108864, after: 67108864, lowerBound: 67108864, capacity: 17179869184 });
  });

  it("--param replaces a parameter's value: half the width of P-I-I-C, half the bytes of every buffer", async () => {
    const full = JSON.parse((await pipeloom('compile', 'examples/piic.json', '--format', 'json')).stdout);
    const r = await pipeloom('compile', 'examples/piic.json', '--format', 'json', '--param', 'W=1024', '--param', 'N=50');
    expect(r.status, r.stderr).toBe(0);
    const half = JSON.parse(r.stdout);
    expect(half.buffers.map((b: { bytes: number }) => b.bytes)).toEqual(full.buffers.map((b: { bytes: number }) => b.bytes / 2));
    // Each incrementer's firing carries nb_loop = N.
    expect(JSON.stringify(half.programs)).toContain('"nb_loop":50');
    expect(JSON.stringify(full.programs)).not.toContain('"nb_loop":50');
  });

  it("--param: malformed is a usage error naming the flag, an unknown name the document's diagnostic, a value out of range too; all exit 2", async () => {
    for (const [flag, words] of [
      ['W', '--param must be NAME=NUMBER (e.g. --param N=4), not "W"'],
      ['W=wide', '--param must be NAME=NUMBER (e.g. --param N=4), not "W=wide"'],
      ['2W=3', 'not "2W=3"'],
      ['Wd=1024', 'params: the override Wd=1024 names no parameter of the document (did you mean "W"?)'],
      ['W=0', 'params.W: parameter "W" is 0, below its minimum 1'],
    ] as const) {
      // predict (like run and calibrate) reads the flag the same way: checked on two cases, each a process.
      for (const command of flag === 'W' || flag === 'Wd=1024' ? ['compile', 'predict'] : ['compile']) {
        const r = await pipeloom(command, 'examples/piic.json', '--param', flag);
        expect(r.status, `${command} --param ${flag}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(words);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    }
  });

  it('prints Graphviz with one cluster per PE', async () => {
    const r = await pipeloom('compile', 'examples/piic.json', '--format', 'dot');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^digraph "P-I-I-C on two hosts" \{/);
    expect(r.stdout.match(/subgraph cluster_/g)).toHaveLength(4);
    expect(r.stdout).toContain('"buf:bn_4" -> "buf:bn_5" [style=bold];');
  });

  it('exits 2 with one diagnostic per line on stderr for an invalid document', async () => {
    const file = join(tmp, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'pipeloom/v2',
        app: { nodes: [{ id: 'a', kernel: 'matrix.produce' }], edges: [{ from: { node: 'a', port: 'out' }, to: { node: 'c9', port: 'in' } }] },
        arch: { hosts: [{ id: 'h0', gpus: 1 }] },
        mapping: {},
      }),
    );
    const r = await pipeloom('compile', file);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      'mapping: node "a" is not mapped (add "a": "<PE id>" to mapping)',
      'app.edges[0]: node "c9" does not exist (connect nodes listed in app.nodes)',
    ]);
  });

  it('with --format json, exits 2 and prints the diagnostics as JSON on stdout, the text on stderr', async () => {
    const file = join(tmp, 'keys.json');
    const doc = JSON.parse(readFileSync(join(root, 'examples/piic.json'), 'utf8'));
    doc.options.iteration = doc.options.iterations;
    delete doc.options.iterations;
    writeFileSync(file, JSON.stringify(doc));
    const r = await pipeloom('compile', file, '--format', 'json');
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: false,
      diagnostics: [{ severity: 'error', path: 'options.iteration', message: 'unknown key "iteration"', hint: 'did you mean "iterations"?' }],
    });
    expect(r.stderr.trim()).toBe('options.iteration: unknown key "iteration" (did you mean "iterations"?)');
    // A document that parses but does not compile (a node not mapped) reports the same way.
    const unmapped = join(tmp, 'unmapped.json');
    delete doc.mapping.C;
    doc.options.iterations = 3;
    delete doc.options.iteration;
    writeFileSync(unmapped, JSON.stringify(doc));
    const u = await pipeloom('compile', unmapped, '--format', 'json');
    expect(u.status).toBe(2);
    expect(JSON.parse(u.stdout).diagnostics).toEqual([
      { severity: 'error', path: 'mapping', message: 'node "C" is not mapped', hint: 'add "C": "<PE id>" to mapping' },
    ]);
    // Malformed JSON too, with its line and column as the path.
    const broken = join(tmp, 'broken-json.json');
    writeFileSync(broken, '{\n  "format": "pipeloom/v2",\n  "app": ,\n}');
    const b = await pipeloom('compile', broken, '--format', 'json');
    expect(b.status).toBe(2);
    expect(JSON.parse(b.stdout).diagnostics[0]).toMatchObject({ severity: 'error', path: 'line 3, column 10' });
  });

  it('exits 2 naming the line and column of malformed JSON', async () => {
    const file = join(tmp, 'broken.json');
    writeFileSync(file, '{\n  "format": "pipeloom/v2",\n  "app": ,\n}');
    const r = await pipeloom('compile', file);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^line 3, column 10: malformed JSON/);
  });

  it('exits 1 with a clear message and no stack for an unreadable file or a bad option', async () => {
    const missing = await pipeloom('compile', join(tmp, 'nope.json'));
    expect(missing.status).toBe(1);
    expect(missing.stderr.trim()).toBe(`pipeloom compile: cannot read ${join(tmp, 'nope.json')}: no such file`);
    const bad = await pipeloom('compile', 'examples/piic.json', '--format', 'svg');
    expect(bad.status).toBe(1);
    expect(bad.stderr.trim()).toBe('pipeloom compile: --format must be one of text, json, dot, not "svg"');
    for (const r of [missing, bad]) expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});
