import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { compile } from '../compile/compile.js';
import { parseDocument } from './parse.js';
import { normalize } from './normalize.js';
import type { ProjectDocument } from './types.js';
import { validate } from './validate.js';

// p (cpu@h0) -> a (gpu0@h0) -> b (gpu1@h0) -> c (cpu@h1)
function doc(): ProjectDocument {
  const size = { width: 8, height: 8 };
  return {
    format: 'pipeloom/v2',
    name: 'test',
    app: {
      nodes: [
        { id: 'p', kernel: 'matrix.produce', params: { ...size } },
        { id: 'a', kernel: 'matrix.increment', params: { ...size } },
        { id: 'b', kernel: 'matrix.increment', params: { ...size } },
        { id: 'c', kernel: 'matrix.consume', params: { ...size } },
      ],
      edges: [
        { from: { node: 'p', port: 'out' }, to: { node: 'a', port: 'in' } },
        { from: { node: 'a', port: 'out' }, to: { node: 'b', port: 'in' } },
        { from: { node: 'b', port: 'out' }, to: { node: 'c', port: 'in' } },
      ],
    },
    arch: {
      hosts: [
        { id: 'h0', cpus: 1, gpus: 2 },
        { id: 'h1', cpus: 1, gpus: 0 },
      ],
      pes: [],
      links: [],
      network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
    },
    mapping: { p: 'cpu@h0', a: 'gpu0@h0', b: 'gpu1@h0', c: 'cpu@h1' },
    options: { overlap: true, iterations: 10 },
  };
}

const messages = (d: unknown) => validate(d).map(formatDiagnostic);

describe('validate', () => {
  it('accepts a valid document', () => {
    expect(validate(doc())).toEqual([]);
  });

  it('names a missing edge end: app.edges[3]: node "c9" does not exist', () => {
    const d = doc();
    d.app.edges.push({ from: { node: 'b', port: 'out' }, to: { node: 'c9', port: 'in' } });
    expect(messages(d)).toContain('app.edges[3]: node "c9" does not exist (connect nodes listed in app.nodes)');
  });

  it('names an unmapped node', () => {
    const d = doc();
    delete d.mapping.b;
    expect(messages(d)).toContain('mapping: node "b" is not mapped (add "b": "<PE id>" to mapping)');
  });

  it('names the missing architecture path', () => {
    const d = doc();
    d.arch.hosts.push({ id: 'h2', cpus: 1 });
    d.arch.network = undefined;
    d.arch.links.push({ a: 'cpu@h0', b: 'cpu@h1', kind: 'infiniband', bandwidth: 1e9, latency: 0, duplex: true });
    d.mapping.c = 'cpu@h2';
    expect(validate(d).map((x) => x.message)).toEqual(['no architecture path from gpu1@h0 to cpu@h2']);
  });

  it('names a cycle: cycle a -> b -> a', () => {
    const d = doc();
    d.app.nodes[1].kernel = 'matrix.add';
    d.app.edges.push({ from: { node: 'b', port: 'out' }, to: { node: 'a', port: 'b' } });
    d.app.edges[0].to.port = 'a';
    expect(validate(d).map((x) => x.message)).toEqual(['cycle a -> b -> a has no delay: no node of it can fire first']);
  });

  it('rejects duplicate ids, unknown kernels and unknown ports', () => {
    const d = doc();
    d.app.nodes.push({ id: 'a', kernel: 'matrix.increment' }, { id: 'z', kernel: 'no.such' });
    d.app.edges[1].from.port = 'result';
    const m = messages(d);
    expect(m).toContain('app.nodes[4].id: duplicate node id "a" (give each node its own id)');
    expect(m.some((x) => x.startsWith('app.nodes[5].kernel: unknown kernel "no.such" (nearest registered: '))).toBe(true);
    expect(m).toContain('app.edges[1].from.port: node "a" (matrix.increment) has no output port "result" (outputs: out)');
  });

  it('reports an unknown kernel once, not again for every edge touching its node', () => {
    const d = doc();
    d.app.nodes[1].kernel = 'matrix.incremnt';
    const m = messages(d);
    expect(m).toHaveLength(1);
    expect(m[0]).toBe(
      'app.nodes[1].kernel: unknown kernel "matrix.incremnt" (nearest registered: matrix.increment, matrix.consume, matrix.add; a package\'s kernels need --kernels PATH_OR_PACKAGE)',
    );
  });

  it('reports a param out of range once, not again as the data types it gives', () => {
    const d = doc();
    d.app.nodes[0].params = { width: -5, height: 8 };
    expect(messages(d)).toEqual(['app.nodes[0].params.width: param "width" is -5, below its minimum 1 (use a value (range 1 .. 16384))']);
  });

  it('rejects an unconnected input and an input fed twice', () => {
    const d = doc();
    d.app.edges.push({ from: { node: 'p', port: 'out' }, to: { node: 'b', port: 'in' } });
    d.app.edges.splice(2, 1);
    const m = messages(d);
    expect(m).toContain('app.edges[2].to: input b.in is already fed by app.edges[1] (an input port takes exactly one edge; remove one of them)');
    expect(m).toContain('app.nodes[3]: input port "in" of node "c" is not connected (add an edge to c.in)');
  });

  it('names both ports and types on a type mismatch', () => {
    const d = doc();
    d.app.nodes[2].params = { width: 16, height: 8 };
    expect(messages(d)).toContain(
      'app.edges[1]: type mismatch: a.out is matrix<f32>[8x8] but b.in expects matrix<f32>[8x16] (give "a" and "b" matching size params)',
    );
  });

  it('checks params against their specs: range, type, negative, unknown', () => {
    const d = doc();
    d.app.nodes[0].params = { width: -3, height: 2.5 };
    d.app.nodes[2].params = { width: 8, height: 8, colour: 3 };
    // (A string is an expression over the document's params: params.test.ts.)
    d.app.nodes[3].params = { width: true, height: 8 };
    const m = messages(d);
    expect(m).toContain('app.nodes[0].params.width: param "width" is -3, below its minimum 1 (use a value (range 1 .. 16384))');
    expect(m).toContain('app.nodes[0].params.height: param "height" must be an integer, not 2.5 (use a whole number (range 1 .. 16384))');
    expect(m).toContain('app.nodes[2].params.colour: kernel matrix.increment has no param "colour" (params: width, height, nb_loop)');
    expect(m.some((x) => x.startsWith('app.nodes[3].params.width: param "width" must be a number, not boolean'))).toBe(true);
  });

  it('refuses a param that is no JSON value (NaN) before looking at the kernel', () => {
    const d = doc();
    d.app.nodes[1].params = { width: 8, height: 8, nb_loop: Number.NaN };
    expect(messages(d)).toEqual(['app.nodes[1].params.nb_loop: must be a finite number, not NaN']);
  });

  it('rejects links to unknown PEs, PEs on unknown hosts, nonpositive bandwidth and iterations < 1', () => {
    const d = doc();
    d.arch.pes.push({ id: 'fpga@h0', host: 'h9', kind: 'cpu', memory: 1e9 });
    d.arch.links.push({ a: 'cpu@h0', b: 'gpu7@h0', kind: 'pcie', bandwidth: 1e9, latency: 0, duplex: true });
    expect(messages(d)).toEqual([
      'arch.pes[0].host: host "h9" does not exist (add it to arch.hosts or use one of: h0, h1)',
      'arch.links[0].b: PE "gpu7@h0" does not exist (link two PEs listed in arch.pes or made by a host shorthand)',
    ]);
    const e = doc();
    e.arch.links.push({ a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie', bandwidth: 0, latency: 0, duplex: true });
    e.options.iterations = 0;
    expect(messages(e)).toEqual([
      'arch.links[0].bandwidth: bandwidth must be positive, not 0 (use a value greater than 0)',
      'options.iterations: iterations must be at least 1, not 0',
    ]);
  });

  it('takes options.sync self-timed (the default) or barrier, and names any other value', () => {
    expect(normalize(doc()).options.sync).toBe('self-timed');
    for (const sync of ['self-timed', 'barrier'] as const) expect(messages({ ...doc(), options: { ...doc().options, sync } })).toEqual([]);
    const d = doc() as unknown as { options: Record<string, unknown> };
    d.options.sync = 'lockstep';
    expect(messages(d as unknown as ProjectDocument)).toEqual(['options.sync: must be one of self-timed, barrier, not "lockstep"']);
  });

  it('rejects mappings to unknown PEs and of unknown nodes', () => {
    const d = doc();
    d.mapping.b = 'gpu9@h0';
    d.mapping.ghost = 'cpu@h0';
    const m = messages(d);
    expect(m).toContain('mapping.ghost: node "ghost" does not exist (remove this entry or add the node to app.nodes)');
    expect(m.some((x) => x.startsWith('mapping.b: PE "gpu9@h0" does not exist'))).toBe(true);
  });

  it('rejects wrong JSON types field by field, never throwing', () => {
    for (const bad of [
      null,
      42,
      [],
      'x',
      {},
      { format: 'pipeloom/v2' },
      { format: 'pipeloom/v2', app: { nodes: 'x', edges: [] }, arch: { hosts: [{}] }, mapping: [] },
    ]) {
      expect(validate(bad).length).toBeGreaterThan(0);
      expect(compile(bad).ok).toBe(false);
    }
    expect(messages({ format: 'pipeloom/v9' })).toEqual(['format: unknown format "pipeloom/v9" (set "format" to one of: pipeloom/v1, pipeloom/v2)']);
  });

  it('reports a buffer larger than its PE memory: buffer bn_k (64 MiB) exceeds memory of gpu0@h0', () => {
    const d = doc();
    for (const n of d.app.nodes) n.params = { width: 4096, height: 4096 };
    d.arch.hosts[0].gpuMemory = 100 * 2 ** 20;
    const r = compile(d, { overlap: false });
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map((x) => x.message)).toContain('buffers on gpu0@h0 need 128 MiB after sharing, more than its memory (100 MiB)');
    const o = compile(d, { overlap: true });
    expect(o.diagnostics.map((x) => x.message)).toContain('buffer bn_1 (128 MiB) exceeds memory of gpu0@h0 (100 MiB)');
  });
});

describe('parseDocument', () => {
  it('gives the line and column of malformed JSON, never throwing', () => {
    const r = parseDocument('{\n  "format": "pipeloom/v2",\n  "app": }');
    expect(r.ok).toBe(false);
    expect(r.diagnostics[0].path).toBe('line 3, column 10');
    expect(r.diagnostics[0].message).toMatch(/^malformed JSON/);
    expect(parseDocument('').diagnostics[0].path).toBe('line 1, column 1');
    expect(parseDocument('{"a": [1, 2,]}').diagnostics[0].path).toBe('line 1, column 13');
  });

  it('parses a valid document', () => {
    expect(parseDocument(JSON.stringify(doc())).ok).toBe(true);
  });
});

describe('normalize', () => {
  it('expands the Fig 6 cluster from host shorthands and a network', () => {
    const d = normalize({
      ...doc(),
      arch: {
        hosts: [
          { id: 'h0', cpus: 1, gpus: 3, pcie: { bandwidth: 5e9, latency: 1e-5 } },
          { id: 'h1', cpus: 1, gpus: 3, pcie: { bandwidth: 5e9, latency: 1e-5 } },
        ],
        pes: [],
        links: [],
        network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
      },
    });
    expect(d.arch.pes.map((p) => p.id)).toEqual(['cpu@h0', 'gpu0@h0', 'gpu1@h0', 'gpu2@h0', 'cpu@h1', 'gpu0@h1', 'gpu1@h1', 'gpu2@h1']);
    expect(d.arch.links.map((l) => `${l.a}-${l.b} ${l.kind}`)).toEqual([
      'cpu@h0-gpu0@h0 pcie',
      'cpu@h0-gpu1@h0 pcie',
      'cpu@h0-gpu2@h0 pcie',
      'cpu@h1-gpu0@h1 pcie',
      'cpu@h1-gpu1@h1 pcie',
      'cpu@h1-gpu2@h1 pcie',
      'cpu@h0-cpu@h1 infiniband',
    ]);
    expect(d.arch.hosts[0]).toEqual({ id: 'h0' });
    expect(d.arch.network).toBeUndefined();
    // Canonical stays canonical.
    expect(normalize(d)).toEqual(d);
  });

  it('cpus: 3 makes cpu0@h0 .. cpu2@h0 sharing the host memory, memory links between every two, pcie to the first, the network on the first', () => {
    const d = normalize({
      ...doc(),
      arch: {
        hosts: [
          { id: 'h0', cpus: 3, gpus: 1, cpuMemory: 2 ** 30 },
          { id: 'h1', cpus: 1 },
        ],
        pes: [],
        links: [],
        network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
      },
    });
    expect(d.arch.pes.map((p) => `${p.id} ${p.kind} ${p.memory}`)).toEqual([
      `cpu0@h0 cpu ${2 ** 30}`,
      `cpu1@h0 cpu ${2 ** 30}`,
      `cpu2@h0 cpu ${2 ** 30}`,
      `gpu0@h0 gpu ${16 * 2 ** 30}`,
      `cpu@h1 cpu ${64 * 2 ** 30}`,
    ]);
    expect(d.arch.links.map((l) => `${l.a}-${l.b} ${l.kind} ${l.bandwidth}`)).toEqual([
      'cpu0@h0-cpu1@h0 memory 10000000000',
      'cpu0@h0-cpu2@h0 memory 10000000000',
      'cpu1@h0-cpu2@h0 memory 10000000000',
      'cpu0@h0-gpu0@h0 pcie 5000000000',
      'cpu0@h0-cpu@h1 infiniband 2600000000',
    ]);
    // The host keeps the memory its CPU PEs share; one CPU keeps today's canonical host.
    expect(d.arch.hosts).toEqual([{ id: 'h0', cpuMemory: 2 ** 30 }, { id: 'h1' }]);
    expect(normalize(d)).toEqual(d);
  });

  it("a host's memory link spec overrides the default; diagnostics point at the host's cpus or memory", () => {
    const d = doc();
    d.arch.hosts[1] = { id: 'h1', cpus: 2, memory: { bandwidth: 2e10, latency: 0 } };
    d.mapping.c = 'cpu1@h1';
    expect(normalize(d).arch.links.filter((l) => l.kind === 'memory')).toEqual([
      { a: 'cpu0@h1', b: 'cpu1@h1', kind: 'memory', bandwidth: 2e10, latency: 0, duplex: true },
    ]);
    expect(validate(d)).toEqual([]);
    // Such a host has no cpu@h1: the message says which PE is its first core.
    d.mapping.c = 'cpu@h1';
    expect(messages(d)).toEqual([
      'mapping.c: PE "cpu@h1" does not exist: host "h1" has several CPU PEs (map it to cpu0@h1 (its first core) or another cpuK@h1)',
    ]);
    d.mapping.c = 'cpu1@h1';
    // A PE the shorthand already makes, listed again, is named at the host's cpus.
    d.arch.pes.push({ id: 'cpu1@h1', host: 'h1', kind: 'cpu', memory: 1 });
    expect(messages(d)).toContain('arch.hosts[1].cpus: duplicate PE id "cpu1@h1" (give each PE its own id (a host shorthand may already define it))');
  });

  it('bounds cpus, naming the host', () => {
    const d = doc();
    d.arch.hosts[1].cpus = 100000;
    expect(messages(d)).toEqual([
      'arch.hosts[1].cpus: host "h1": 100000 CPU PEs is more than the shorthand makes (256) (give the host at most 256 cpus, or list its CPU PEs in arch.pes)',
    ]);
  });

  it('checks requires cores>=N against the CPU PEs the document gives the host, naming the node and the clause as written', () => {
    const d = doc();
    d.arch.hosts[1] = { id: 'h1', cpus: 4 };
    d.mapping.c = 'cpu2@h1';
    d.app.nodes[3].requires = ['cores >= 4'];
    expect(validate(d)).toEqual([]);
    d.app.nodes[3].requires = ['kind=cpu', 'cores>=8'];
    expect(messages(d)).toEqual([
      'mapping.c: node "c" requires cores>=8, but is mapped to cpu2@h1, on host "h1" with 4 CPU PEs (give a host enough CPU PEs ("cpus": N in arch.hosts) and map it there)',
    ]);
    d.app.nodes[3].requires = ['cores>2'];
    d.mapping.c = 'cpu@h0';
    expect(messages(d)).toEqual([
      'mapping.c: node "c" requires cores>2, but is mapped to cpu@h0, on host "h0" with 1 CPU PE (map it to a PE meeting cores>2: cpu0@h1, cpu1@h1, cpu2@h1, cpu3@h1)',
    ]);
    // A GPU reports no cores; the mapping check says so (a task-bag run places tasks itself, the check is its bag's).
    d.app.nodes[1].requires = ['cores>=1'];
    d.app.nodes[3].requires = undefined;
    expect(messages(d)).toEqual([
      'mapping.a: node "a" requires cores>=1, but is mapped to gpu0@h0, a gpu PE (cores are a CPU PE\'s host\'s) (map it to a PE meeting cores>=1: cpu@h0, cpu0@h1, cpu1@h1, cpu2@h1, cpu3@h1)',
    ]);
  });

  it("checks the sum of a host's CPU PEs' buffers against its cpuMemory, each PE free to use all of it", () => {
    // p (cpu0@h1) -> c (cpu1@h1), 16 MiB a frame: each buffer alone fits 24 MiB, both do not.
    const d = doc();
    for (const n of d.app.nodes) n.params = { width: 2048, height: 2048 };
    d.arch.hosts[1] = { id: 'h1', cpus: 2, cpuMemory: 24 * 2 ** 20 };
    d.app.nodes = [d.app.nodes[0], d.app.nodes[3]];
    d.app.edges = [{ from: { node: 'p', port: 'out' }, to: { node: 'c', port: 'in' } }];
    d.mapping = { p: 'cpu0@h1', c: 'cpu1@h1' };
    const r = compile(d, { overlap: false });
    expect(r.ok).toBe(false);
    expect(r.diagnostics.map(formatDiagnostic)).toEqual([
      'arch.hosts[1].cpuMemory: the CPU PEs of host "h1" share its memory (24 MiB), and their buffers need 32 MiB after sharing (cpu0@h1 16 MiB, cpu1@h1 16 MiB) (raise cpuMemory of host "h1" or map some nodes to another host)',
    ]);
    // Both on one PE: one buffer, 16 MiB, fits.
    d.mapping = { p: 'cpu1@h1', c: 'cpu1@h1' };
    expect(compile(d, { overlap: false }).ok).toBe(true);
  });
});
