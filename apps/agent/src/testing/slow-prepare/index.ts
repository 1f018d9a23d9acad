import { defineKernel, getKernel } from '@pipeloom/kernels';

// A kernel package for the deploy progress tests (deploy-progress.test.ts): `test.slowprep` is
// matrix.increment whose GPU preparation takes `prepare_ms` longer, as a slow shader compile on
// a busy machine would; its firings are matrix.increment's.

const base = getKernel('matrix.increment');
const gpu = base.gpu!;

export const slowPrepare = defineKernel({
  ...base,
  id: 'test.slowprep',
  version: '1.0.0',
  package: undefined,
  description: 'matrix.increment, whose GPU preparation takes prepare_ms milliseconds longer.',
  params: { ...base.params, prepare_ms: { type: 'int', default: 0, min: 0, max: 3_600_000, description: 'milliseconds added to the GPU preparation' } },
  gpu: {
    wgsl: gpu.wgsl,
    dispatches: gpu.dispatches,
    prepare: async (device, params) => {
      await new Promise((r) => setTimeout(r, Number(params.prepare_ms)));
      return gpu.prepare(device, params);
    },
  },
});

export default [slowPrepare];
