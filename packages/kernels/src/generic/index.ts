import { implement } from '../implement.js';
import type { Kernel } from '../types.js';
import { genericSpecs, GENERIC_WORK } from './spec.js';

// generic.work runs as cheaply as it can (zeros out), so what a run measures of it is the
// emulated time of its cost hint, not this code.

export const genericKernels: Kernel[] = implement(genericSpecs, {
  [GENERIC_WORK]: {
    cpu: ({ outputs }) => {
      for (const v of Object.values(outputs)) new Uint8Array(v.buffer, v.byteOffset, v.byteLength).fill(0);
    },
    gpu: {
      wgsl: {},
      dispatches: () => [],
      prepare: async () => ({
        encode(encoder, firing) {
          for (const b of Object.values(firing.outputs)) encoder.clearBuffer(b);
        },
        destroy() {},
      }),
    },
  },
});
