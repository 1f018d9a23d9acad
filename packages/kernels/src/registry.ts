import { KernelError, type Kernel } from './types.js';
import { matrixKernels } from './matrix/index.js';
import { granulometryKernels } from './granulometry/index.js';
import { saliencyKernels } from './saliency/index.js';
import { customKernels } from './custom/index.js';
import { genericKernels } from './generic/index.js';
import { mlemKernels } from './mlem/index.js';
import { scanKernels } from './scan/index.js';
import { reg2dKernels } from './reg2d/index.js';
import { ioKernels } from './io/index.js';
import { findKernel } from './specs.js';

// The kernels as the agents execute them: each spec (specs.ts) joined to its CPU twin and WGSL.
export { listKernels, findKernel, registerKernels, nearestKernels, withDefaults, dataTypeBytes, sameDataType, formatDataType } from './specs.js';

const byId = new Map<string, Kernel>(
  [
    ...matrixKernels,
    ...granulometryKernels,
    ...saliencyKernels,
    ...customKernels,
    ...genericKernels,
    ...mlemKernels,
    ...scanKernels,
    ...reg2dKernels,
    ...ioKernels,
  ].map((k) => [k.id, k]),
);

/**
 * The kernel with its implementations; throws a KernelError (not a crash) for an id that is not
 * registered. Package kernels are registered whole in the specs registry (`registerKernels`).
 */
export function getKernel(id: string): Kernel {
  const k = byId.get(id);
  if (k) return k;
  const registered = findKernel(id) as Kernel | undefined;
  if (!registered || typeof registered.cpu !== 'function') throw new KernelError(id, 'is not registered');
  return registered;
}
