import { describe, expect, it } from 'vitest';
import { compile, lowerDocument, type ImplementationGraph, type RunResult, type WrittenDocument } from '@pipeloom/core';
import { getKernel, runCpu } from '@pipeloom/kernels';
import { agentsForSuite } from './testing/suite.js';
import { connect, example } from './testing/fixtures.js';

// Split nodes in static mode on a real local agent (its CPU PE and an llvmpipe GPU PE):
// examples/mlem.json runs projbp as K tasks shared out over gpu0@h0 and cpu@h0, summed by
// generic.sum. mlem.error reports the last iteration's relative error to the phantom and the
// total activity; both are checked against the CPU twin run on one PE, so K = 4 and K = 1 agree
// with it and with each other. Tolerance 1e-4 relative: GPU shares compute in f32 with another
// summation order than the twin (the kernels' own tests use the same bound for 5 iterations).
//
// The example's loop has delay D = 4 (static mode, shares on two PEs, with or without overlap):
// iteration k holds MLEM step floor(k / 4) + 1, so 12 iterations end at step 3.

const agentsOf = agentsForSuite(['h0']);
const TOLERANCE = 1e-4;

function compiled(K: number): ImplementationGraph {
  const r = compile(example('mlem') as WrittenDocument, { overlap: false, params: { K } });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return r.ig;
}

/** MLEM on the CPU twin, unsplit, from the flat start: the error and activity after `steps` steps. */
function reference(steps: number): { error: number; activity: number } {
  const size = 16;
  const source = runCpu(getKernel('mlem.phantom'), { size, angles: 36, spheres: 6, seed: 1 }, {}).outputs;
  let est: Float32Array = new Float32Array(size ** 3).fill(1);
  for (let s = 0; s < steps; s++) {
    const bp = runCpu(getKernel('mlem.projbp'), { size, angles: 36 }, { estimate: est, sinogram: source.sinogram }).outputs.backprojection;
    est = runCpu(getKernel('mlem.update'), { size }, { previous: est, backprojection: bp, sensitivity: source.sensitivity }).outputs.estimate as Float32Array;
  }
  const values = runCpu(getKernel('mlem.error'), { size }, { estimate: est, truth: source.truth }).report!.values!;
  return { error: Number(values.error), activity: Number(values.activity) };
}

const measured = (r: RunResult) => {
  const rep = r.reports.find((x) => x.node === 'error')!;
  return { iteration: rep.iteration, error: Number(rep.values.error), activity: Number(rep.values.activity) };
};
const close = (a: number, b: number) => Math.abs(a - b) / Math.abs(b);

describe('mlem.json with projbp as tasks, static mode, on a local agent', () => {
  it("K = 4 over gpu0 and cpu and K = 1 give the single-PE CPU twin's estimate, and the error falls below the first iteration's", async () => {
    const four = compiled(4);
    const one = compiled(1);
    // The shares alternate over the list: projbp[0], [2] on the GPU, [1], [3] on the CPU.
    const mapping = lowerDocument(example('mlem'), { params: { K: 4 } }).lowered!.doc.mapping;
    expect(Object.fromEntries(Object.entries(mapping).filter(([n]) => n.startsWith('projbp')))).toEqual({
      'projbp[0]': 'gpu0@h0',
      'projbp[1]': 'cpu@h0',
      'projbp[2]': 'gpu0@h0',
      'projbp[3]': 'cpu@h0',
      projbp: 'gpu0@h0',
    });
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      expect(c.check(four)).toEqual([]);
      const results: Record<string, ReturnType<typeof measured>> = {};
      for (const [name, ig, iterations] of [
        ['K=4', four, 12],
        ['K=1', one, 12],
        ['K=4, first iteration', four, 1],
      ] as const) {
        const r = await c.run(ig, { iterations }).done;
        expect(r.failure, name).toBeUndefined();
        expect(r.ok, name).toBe(true);
        results[name] = measured(r);
      }
      const want = reference(3);
      for (const name of ['K=4', 'K=1']) {
        expect(results[name].iteration, name).toBe(11);
        expect(close(results[name].error, want.error), `${name} error`).toBeLessThan(TOLERANCE);
        expect(close(results[name].activity, want.activity), `${name} activity`).toBeLessThan(TOLERANCE);
      }
      const first = results['K=4, first iteration'];
      expect(first.iteration).toBe(0);
      expect(close(first.error, reference(1).error)).toBeLessThan(TOLERANCE);
      expect(results['K=4'].error).toBeLessThan(first.error);
    } finally {
      c.close();
    }
  }, 120_000);
});
