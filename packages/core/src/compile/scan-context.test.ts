import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import type { WrittenDocument } from '../document/types.js';
import { scanNodeOf } from '../document/scan-context.js';
import { igContextCopies } from './scan-context.js';

// The scan's replicated context against its workers' PEs: image registration (reg2d.compose)
// reads the series' pyramids (`frames`) on every expanded node. 9 frames of 32 x 32 with
// levels 16 x 16 and 8 x 8: 9 x 1344 f32 = 48,384 bytes (47.3 KiB).

const FRAMES_BYTES = 9 * (32 * 32 + 16 * 16 + 8 * 8) * 4;

/** reg2d.frames -> reg2d.pair -> scan1 (8 elements) with frames -> scan1.frames, on the PEs given; `memory` per host CPU. */
function withContext(pes: string[], memory: Record<string, number>): WrittenDocument {
  const hosts = Math.max(...pes.map((p) => Number(/@h(\d+)$/.exec(p)![1]))) + 1;
  const series = { width: 32, height: 32, frames: 9 };
  return {
    format: 'pipeloom/v2',
    name: 'scan context',
    app: {
      nodes: [
        { id: 'frames', kernel: 'reg2d.frames', params: series },
        { id: 'pairs', kernel: 'reg2d.pair', params: { ...series, count: 8 } },
        { id: 'scan1', type: 'scan', params: { operator: 'reg2d.compose', network: 'kogge-stone', ...series } },
      ],
      edges: [
        { from: { node: 'frames', port: 'frames' }, to: { node: 'pairs', port: 'frames' } },
        { from: { node: 'pairs', port: 'out' }, to: { node: 'scan1', port: 'in' } },
        { from: { node: 'frames', port: 'frames' }, to: { node: 'scan1', port: 'frames' } },
      ],
    },
    arch: {
      hosts: Array.from({ length: hosts }, (_, i) => ({ id: `h${i}`, cpus: 1, ...(memory[`h${i}`] ? { cpuMemory: memory[`h${i}`] } : {}) })),
      pes: [],
      links: [],
      network: { kind: 'ethernet', bandwidth: 1e9, latency: 1e-5 },
    },
    mapping: { frames: 'cpu@h0', pairs: 'cpu@h0', scan1: pes },
    options: { overlap: false, iterations: 1 },
  };
}

const errors = (doc: WrittenDocument) => {
  const r = compile(doc);
  return r.ok ? [] : r.diagnostics.filter((d) => d.severity === 'error');
};

describe('scan context copies', () => {
  it('reads a scan node id: the scan (nested ids too), the plan key, the worker', () => {
    expect(scanNodeOf('scan1/local.w3')).toEqual({ scan: 'scan1', key: 'local.w3', worker: 3 });
    expect(scanNodeOf('seg/scan1/ks.r2.w15')).toEqual({ scan: 'seg/scan1', key: 'ks.r2.w15', worker: 15 });
    expect(scanNodeOf('scan1/barrier.r2')).toBeUndefined();
    expect(scanNodeOf('local.w3')).toBeUndefined();
  });

  it("a context over a worker PE's document memory is an error naming the scan, the port, the worker and its mapping entry", () => {
    const [d, ...rest] = errors(withContext(['cpu@h0', 'cpu@h1'], { h1: 40_000 }));
    expect(rest).toEqual([]);
    expect(d).toMatchObject({
      path: 'mapping.scan1[1]',
      message: 'scan "scan1": context port "frames" (47.3 KiB) on worker 1\'s PE cpu@h1 exceeds its memory (39.1 KiB in the document)',
    });
    expect(d.hint).toBe('shrink the data feeding scan1.frames, or map worker 1 to a PE with more memory');
  });

  it('a PE listed for two workers holds one copy, named with both workers; a scan of one worker points at its whole mapping entry', () => {
    const two = errors(withContext(['cpu@h0', 'cpu@h1', 'cpu@h0', 'cpu@h1'], { h1: 40_000 }));
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({ path: 'mapping.scan1[1]', message: expect.stringContaining('on the PE cpu@h1 of workers 1 and 3 exceeds') });
    const one = errors(withContext(['cpu@h1'], { h1: 40_000 }));
    expect(one[0]).toMatchObject({ path: 'mapping.scan1', message: expect.stringContaining("on worker 0's PE cpu@h1") });
  });

  it('a context that fits passes, and the compiled graph lists one copy per worker PE', () => {
    const r = compile(withContext(['cpu@h0', 'cpu@h1', 'cpu@h1'], {}));
    expect(r.ok, JSON.stringify(r.diagnostics)).toBe(true);
    if (!r.ok) return;
    const pes = r.ig.programs.pes.map((p) => p.pe as string);
    const h1 = igContextCopies(r.ig, pes.indexOf('cpu@h1'));
    expect(h1.groups).toEqual([[expect.objectContaining({ scan: 'scan1', port: 'frames', workers: [1, 2], bytes: FRAMES_BYTES })]]);
    expect(h1.workers.get('scan1')).toBe(3);
    expect(igContextCopies(r.ig, pes.indexOf('cpu@h0')).groups[0][0].workers).toEqual([0]);
  });
});
