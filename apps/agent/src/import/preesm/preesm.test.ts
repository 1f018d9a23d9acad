import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compile, lowerDocument, validate, type ProjectDocument } from '@pipeloom/core';
import { simulate } from '@pipeloom/core/internal';
import { root, pipeloomAsync } from '../../testing/fixtures.js';
import { formatIssue } from './issues.js';
import { importPreesm } from './import.js';

const fixtures = join(root, 'apps/agent/src/import/preesm/fixtures');
const at = (p: string) => join(fixtures, p);
const SLAM = at('Archi/8CoreX86TwoMemories.slam');

function imported(algorithm: string, scenario?: string): { doc: ProjectDocument; warnings: string[] } {
  const r = importPreesm({ algorithm: at(`Algo/${algorithm}`), architecture: SLAM, scenario: scenario && at(`Scenarios/${scenario}`) });
  const errors = r.issues.filter((i) => i.severity === 'error').map(formatIssue);
  expect(errors).toEqual([]);
  expect(validate(r.doc).filter((d) => d.severity === 'error')).toEqual([]);
  return { doc: r.doc!, warnings: r.issues.map(formatIssue) };
}

/** Compiles both strategies and simulates the programs: every firing reads exactly the iteration it should. */
function compilesAndRunsExactly(doc: ProjectDocument) {
  for (const overlap of [false, true]) {
    const r = compile(doc, { overlap });
    if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
    for (const sync of ['barrier', 'self-timed'] as const) expect(simulate(r.ig, 6, { sync, seed: 7 }).violations).toEqual([]);
  }
}

describe('pipeloom import preesm', () => {
  it('the multi-rate split/join with a broadcast: ports, rates and token sizes from the .pi, N from the scenario; it compiles and runs exactly', () => {
    const { doc, warnings } = imported('splitjoin.pi', 'splitjoin.scenario');
    expect(doc.params).toEqual({ N: 8 });
    const node = (id: string) => doc.app.nodes.find((n) => n.id === id)!;
    // float tokens of 4 bytes; Gen makes N of them per firing, Worker takes one.
    expect(node('Gen')).toEqual({ id: 'Gen', kernel: 'generic.work', params: { ports: '-> out: 32', flops: 200 }, rates: { out: 'N' } });
    expect(node('Worker')).toEqual({ id: 'Worker', kernel: 'generic.work', params: { ports: 'in: 4 -> out: 4', flops: 2000 } });
    expect(node('Bc').params).toEqual({ ports: 'in: 32 -> toDisplay: 32, toCheck: 32', flops: 0 });
    expect(lowerDocument(doc).lowered!.repetitions).toMatchObject({ Gen: 1, Worker: 8, Collect: 1, Bc: 1, Display: 1, Check: 1 });
    // Constraints: Worker's firings spread over the four cores allowed (Core0-2 of shm0, Core4 the
    // first of shm1), the rest where allowed.
    expect(new Set(Array.from({ length: 8 }, (_, i) => doc.mapping[`Worker#${i}`]))).toEqual(new Set(['cpu0@shm0', 'cpu1@shm0', 'cpu2@shm0', 'cpu0@shm1']));
    expect(doc.mapping).toMatchObject({ Gen: 'cpu0@shm0', Collect: 'cpu0@shm0', Display: 'cpu0@shm0', Check: 'cpu0@shm1' });
    expect(['cpu0@shm0', 'cpu0@shm1']).toContain(doc.mapping.Bc);
    expect(doc.options.iterations).toBe(10);
    expect(warnings).toContain(
      "warning: apps/agent/src/import/preesm/fixtures/Scenarios/splitjoin.scenario: actor Check: has no timing: PREESM's default of 100 time units is used (add a timing for splitjoin/Check)",
    );
    compilesAndRunsExactly(doc);
  });

  it('the 8-core S-LAM with two memories: two hosts of four CPU PEs each (cpu0..cpu3, as an agent serves them), linked through QPI', () => {
    const { doc } = imported('splitjoin.pi', 'splitjoin.scenario');
    // The DDR of 1 GiB is the host's memory, shared by the four cores of its socket: each PE may
    // use all of it and the compiler checks their sum against the host's cpuMemory (it was
    // split equally, 256 MiB each, when a host's cores could not share).
    expect(doc.arch.hosts).toEqual([
      { id: 'shm0', cpuMemory: 2 ** 30 },
      { id: 'shm1', cpuMemory: 2 ** 30 },
    ]);
    expect(doc.arch.pes.map((p) => p.id)).toEqual([0, 1, 2, 3].map((i) => `cpu${i}@shm0`).concat([0, 1, 2, 3].map((i) => `cpu${i}@shm1`)));
    // One flop per time unit (1 ns).
    expect(doc.arch.pes[0]).toMatchObject({ kind: 'cpu', memory: 2 ** 30, flops: 1e9 });
    // The cores of a socket through its memory (were `loopback` links before the `memory` kind).
    const inside = doc.arch.links.filter((l) => l.kind === 'memory');
    expect(inside).toHaveLength(12);
    expect(inside[0]).toMatchObject({ a: 'cpu0@shm0', b: 'cpu1@shm0', bandwidth: 1e18 });
    // QPI: 1 byte per time unit.
    const between = doc.arch.links.filter((l) => l.kind === 'ethernet');
    expect(between).toHaveLength(1);
    expect(between[0]).toMatchObject({ a: 'cpu0@shm0', b: 'cpu0@shm1' });
    expect(between[0].bandwidth).toBe(1e9);
  });

  it("PREESM's 8-core x86 S-LAM (one shared memory): one host of eight CPU PEs, CoreK as cpuK, the constraints on them; it compiles onto that host and runs exactly", () => {
    const r = importPreesm({ algorithm: at('Algo/splitjoin.pi'), architecture: at('Archi/8CoreX86.slam'), scenario: at('Scenarios/splitjoin.scenario') });
    expect(r.issues.filter((i) => i.severity === 'error')).toEqual([]);
    const doc = r.doc!;
    expect(doc.arch.hosts).toEqual([{ id: 'shared_mem', cpuMemory: 64 * 2 ** 30 }]);
    expect(doc.arch.pes.map((p) => p.id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `cpu${i}@shared_mem`));
    // Every two cores through the shared memory (1e9 bytes per ns), nothing else.
    expect(doc.arch.links).toHaveLength(28);
    expect(new Set(doc.arch.links.map((l) => `${l.kind} ${l.bandwidth}`))).toEqual(new Set(['memory 1000000000000000000']));
    // Worker may run on Core0, 1, 2 and 4: cpu0, 1, 2 and 4 (Core3 is listed before Core2 in the design).
    expect(new Set(Array.from({ length: 8 }, (_, i) => doc.mapping[`Worker#${i}`]))).toEqual(
      new Set(['cpu0@shared_mem', 'cpu1@shared_mem', 'cpu2@shared_mem', 'cpu4@shared_mem']),
    );
    const c = compile(doc);
    if (!c.ok) throw new Error(c.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
    expect(new Set(c.ig.programs.pes.map((p) => p.host))).toEqual(new Set(['shared_mem']));
    // Copies between cores go over the memory links.
    expect(new Set(c.ig.programs.links.map((l) => l.kind))).toEqual(new Set(['memory']));
    compilesAndRunsExactly(doc);
  });

  it("PREESM's 8-core x86 S-LAM runs on one local agent serving its eight cores, in both sync modes", async () => {
    const r = importPreesm({ algorithm: at('Algo/splitjoin.pi'), architecture: at('Archi/8CoreX86.slam'), scenario: at('Scenarios/splitjoin.scenario') });
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-preesm-')), 'splitjoin-8core.json');
    writeFileSync(file, JSON.stringify(r.doc));
    for (const sync of ['self-timed', 'barrier']) {
      const ran = await pipeloomAsync('run', file, '--iterations', '4', '--sync', sync);
      expect(ran.status, ran.stderr).toBe(0);
      expect(ran.stderr).toMatch(/started 1 local agent\(s\): shared_mem /);
      expect(ran.stdout).toContain('run complete');
    }
  }, 180_000);

  it("a hierarchical actor: its .pi graph as a composite given the parent's parameter; sizes in bits read as bits", () => {
    const { doc, warnings } = imported('hierarchy.pi', 'hierarchy.scenario');
    expect(doc.params).toEqual({ Width: 16, Frame: 'Width * 2' });
    expect(doc.app.nodes.find((n) => n.id === 'Filter')).toEqual({ id: 'Filter', composite: 'filter', params: { W: 'Width' } });
    const def = doc.defs!.filter;
    expect(def.inputs).toEqual([{ name: 'in', to: [{ node: 'Blur', port: 'in' }] }]);
    expect(def.outputs).toEqual([{ name: 'out', from: { node: 'Sharpen', port: 'out' } }]);
    // short: 16 bits, padded to a word; Blur takes a row of W, Sharpen the frame of 2W.
    expect(def.nodes.map((n) => [n.id, n.params?.ports, n.rates])).toEqual([
      ['Blur', 'in: 64 -> out: 64', { in: 'W', out: 'W' }],
      ['Sharpen', 'in: 128 -> out: 128', { in: 'W * 2', out: 'W * 2' }],
    ]);
    expect(lowerDocument(doc).lowered!.repetitions).toMatchObject({ Src: 1, 'Filter/Blur': 2, 'Filter/Sharpen': 1, Snk: 1 });
    // Inner constraints by their PREESM paths (hierarchy/Filter/Sharpen only on Core5).
    expect(doc.mapping['Filter/Sharpen']).toBe('cpu1@shm1');
    expect(warnings.some((w) => w.includes('data type short: is 2 bytes: Pipeloom moves whole 4-byte words, so each token is padded to 4 bytes'))).toBe(true);
    compilesAndRunsExactly(doc);
  });

  it('a delay loop: the delay parameter on the edge with zeros, the loop kept on one PE; without a scenario every operator is allowed', () => {
    const { doc, warnings } = imported('loop.pi');
    expect(doc.params).toEqual({ D: 2 });
    expect(doc.app.edges.find((e) => e.to.node === 'Acc' && e.to.port === 'state')).toEqual({
      from: { node: 'Keep', port: 'out' },
      to: { node: 'Acc', port: 'state' },
      delay: 'D',
      init: 0,
    });
    expect(doc.mapping.Acc).toBe(doc.mapping.Keep);
    // A memory with several cores is one host an agent serves whole: no warning about it.
    expect(warnings).toEqual([]);
    compilesAndRunsExactly(doc);
  });
});

describe('what an import cannot carry over, named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipeloom-preesm-'));
  const pi = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key attr.name="name" attr.type="string" for="graph"/>
  <key attr.name="delay" attr.type="string" for="edge"/>
  <graph edgedefault="directed">
    <data key="name">t</data>
${body}
  </graph>
</graphml>`;
  const run = (name: string, body: string) => {
    const file = join(dir, `${name}.pi`);
    writeFileSync(file, pi(body));
    return importPreesm({ algorithm: file, architecture: SLAM })
      .issues.map(formatIssue)
      .map((m) => m.replace(file, `${name}.pi`));
  };
  const pair = (outExpr: string, inExpr: string, type = 'int', edgeExtra = '') => `
    <node id="A" kind="actor"><port kind="output" name="o" expr="${outExpr}"/></node>
    <node id="B" kind="actor"><port kind="input" name="i" expr="${inExpr}"/></node>
    <edge kind="fifo" source="A" sourceport="o" target="B" targetport="i" type="${type}">${edgeExtra}</edge>`;

  it('an expression Pipeloom does not evaluate, at the port that has it', () => {
    expect(run('expr', pair('floor(3)', '1'))[0]).toMatch(
      /^error: .*expr\.pi:8: actor A port o: expression "floor\(3\)": unexpected "\(" at column 6 \(Pipeloom evaluates numbers, parameter names, \+ - \* \/ %, parentheses, min and max: rewrite the expression with those\)$/,
    );
  });

  it('a rate of 0, a name no parameter gives, an unconnected port', () => {
    expect(run('zero', pair('0', '1'))).toEqual([
      'error: zero.pi:8: actor A port o: rate "0" is 0: Pipeloom needs a positive whole number of tokens per firing (remove the port, or give it a rate of 1 or more)',
    ]);
    expect(run('name', pair('K', '1'))[0]).toMatch(
      /^error: name\.pi:8: actor A port o: expression "K": unknown parameter "K" at column 1 \(every name must be a parameter/,
    );
    expect(run('open', `<node id="A" kind="actor"><port kind="output" name="o" expr="1"/></node>`)).toEqual([
      'error: open.pi:7: actor A port o: is connected to no fifo (connect every data port in PREESM)',
    ]);
  });

  it('a local delay with a setter, and a type without size, as warnings; the document still imports', () => {
    const messages = run(
      'delay',
      `
    <node id="A" kind="actor"><port kind="output" name="o" expr="1"/><port kind="input" name="i" expr="1"/></node>
    <node expr="1" id="d" kind="delay" level="local" setter="A" getter=""/>
    <edge kind="fifo" source="A" sourceport="o" target="A" targetport="i" type="pixel"><data key="delay">d</data></edge>`,
    );
    expect(messages).toEqual([
      "warning: delay.pi: data type pixel: has no size (first used by fifo A.o -> A.i): its tokens are taken as 4 bytes (declare it in the scenario's dataTypes)",
      'warning: delay.pi:9: delay d: has persistence level "local": Pipeloom\'s initial tokens are permanent (each iteration reads the previous one\'s last tokens) (the first iteration reads zeros either way)',
      'warning: delay.pi:9: delay d: has a setter A: its initial tokens are zeros here (Pipeloom fills initial tokens with a constant or a source node (edit "init"))',
    ]);
  });

  it('a missing sub-graph and malformed XML, with file and line', () => {
    expect(run('sub', `<node id="H" kind="actor"><data key="graph_desc">Algo/nowhere.pi</data></node>`)[0]).toMatch(
      /^error: sub\.pi:7: actor H: its graph Algo\/nowhere\.pi is not found next to sub\.pi/,
    );
    const bad = join(dir, 'bad.pi');
    writeFileSync(bad, '<graphml>\n  <graph>\n</graphml>');
    expect(importPreesm({ algorithm: bad, architecture: SLAM }).issues.map(formatIssue)).toEqual([
      `error: ${bad}:3: algorithm: malformed XML: closing tag </graphml> does not match <graph> (line 2) (fix the XML at that position)`,
    ]);
  });
});

describe('the command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pipeloom-import-cli-'));

  it('writes a document that compile reads, prints the warnings, exits 0', async () => {
    const out = join(dir, 'splitjoin.json');
    const r = await pipeloomAsync('import', 'preesm', at('Algo/splitjoin.pi'), SLAM, at('Scenarios/splitjoin.scenario'), '-o', out);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('warning: apps/agent/src/import/preesm/fixtures/Scenarios/splitjoin.scenario: actor Check: has no timing');
    // Two warnings: Check's timing and the sizes at import (no longer one about several cores per memory).
    expect(r.stderr).toContain(`pipeloom import preesm: wrote ${out} (6 nodes, 8 PEs, 2 warnings)`);
    expect(JSON.parse(readFileSync(out, 'utf8')).format).toBe('pipeloom/v2');
    const c = await pipeloomAsync('compile', out, '--format', 'json');
    expect(c.status).toBe(0);
    // An existing output is kept unless --force.
    const again = await pipeloomAsync('import', 'preesm', at('Algo/splitjoin.pi'), SLAM, '-o', out);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('exists; choose another file or pass --force');
  });

  it('exits 2 on files it cannot import, 1 on a usage mistake', async () => {
    const bad = join(dir, 'bad.pi');
    writeFileSync(bad, '<graphml>');
    const r = await pipeloomAsync('import', 'preesm', bad, SLAM, '-o', join(dir, 'x.json'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('algorithm: malformed XML: the file ends with <graphml> (line 1) still open');
    const u = await pipeloomAsync('import', 'preesm', at('Algo/splitjoin.pi'), '-o', join(dir, 'y.json'));
    expect(u.status).toBe(1);
    expect(u.stderr).toContain('give ALGO.pi ARCH.slam and optionally SCENARIO.scenario, got 1 file');
    const f = await pipeloomAsync('import', 'sdf3', 'a.xml');
    expect(f.status).toBe(1);
    expect(f.stderr).toContain('unknown format "sdf3": the format read is preesm');
  });
});
