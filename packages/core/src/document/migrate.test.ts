import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { formatDiagnostic } from '../diagnostics.js';
import { migrate } from './migrate.js';
import { parseDocument } from './parse.js';
import { FORMAT } from './types.js';

/** A `pipeloom/v1` document using every field v1 had: host shorthands, explicit PEs and links, a network, positions, kernel versions, every option. */
function v1(): Record<string, any> {
  return {
    format: 'pipeloom/v1',
    name: 'every v1 feature',
    description: 'written before params, composites, rates and delays',
    app: {
      nodes: [
        { id: 'p', kernel: 'matrix.produce', params: { width: 64, height: 32 }, position: { x: 0, y: 0 } },
        { id: 'i', kernel: 'matrix.increment', params: { width: 64, height: 32, nb_loop: 5 }, position: { x: 100, y: 0 } },
        { id: 'c', kernel: 'matrix.consume', params: { width: 64, height: 32, increments: '5' } },
      ],
      edges: [
        { from: { node: 'p', port: 'out' }, to: { node: 'i', port: 'in' } },
        { from: { node: 'i', port: 'out' }, to: { node: 'c', port: 'in' } },
      ],
    },
    arch: {
      hosts: [
        {
          id: 'h0',
          agent: 'ws://127.0.0.1:7070',
          cpus: 1,
          gpus: 1,
          cpuMemory: 2 ** 30,
          gpuMemory: 2 ** 30,
          pcie: { bandwidth: 5e9, latency: 1e-5, duplex: true },
          position: { x: 0, y: 200 },
        },
        { id: 'h1', cpus: 1, gpus: 0 },
      ],
      pes: [{ id: 'gpu7@h1', host: 'h1', kind: 'gpu', memory: 2 ** 30, device: 0, flops: 1e12, memoryBandwidth: 3e11, position: { x: 50, y: 200 } }],
      links: [{ a: 'cpu@h1', b: 'gpu7@h1', kind: 'pcie', bandwidth: 4e9, latency: 2e-5, duplex: false }],
      network: { kind: 'ethernet', bandwidth: 1.25e9, latency: 5e-5, duplex: true },
    },
    mapping: { p: 'cpu@h0', i: 'gpu7@h1', c: 'cpu@h1' },
    options: { overlap: false, iterations: 7, sync: 'barrier' },
    kernels: { 'matrix.produce': '1.0.0' },
  };
}

describe('migration from pipeloom/v1', () => {
  it('reads a v1 document with every v1 feature as the same v2 document, and compiles it', () => {
    const before = v1();
    const parsed = parseDocument(JSON.stringify(before));
    expect(parsed.diagnostics).toEqual([]);
    if (!parsed.ok) return;
    expect(parsed.doc).toEqual({ ...before, format: FORMAT });
    const r = compile(parsed.doc);
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    // The input is not changed in place.
    expect(before.format).toBe('pipeloom/v1');
    expect(migrate(before).doc?.format).toBe(FORMAT);
  });

  it('names an unknown key in a v1 document as it does in a v2 one', () => {
    const messages = (format: string) => {
      const d = v1();
      d.format = format;
      d.options.iteration = d.options.iterations;
      delete d.options.iterations;
      d.arch.hosts[1].gpu = 1;
      return parseDocument(JSON.stringify(d)).diagnostics.map(formatDiagnostic);
    };
    expect(messages('pipeloom/v1')).toEqual([
      'arch.hosts[1].gpu: unknown key "gpu" (did you mean "gpus"?)',
      'options.iteration: unknown key "iteration" (did you mean "iterations"?)',
    ]);
    expect(messages('pipeloom/v1')).toEqual(messages(FORMAT));
  });
});
