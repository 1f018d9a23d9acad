import { KernelError, type Kernel } from './types.js';
import { matrixKernels } from './matrix/index.js';
import { granulometryKernels } from './granulometry/index.js';
import { saliencyKernels } from './saliency/index.js';
import { customKernels } from './custom/index.js';

// The kernels as the agents execute them: each spec (specs.ts) joined to its CPU twin and WGSL.
export { listKernels, findKernel, withDefaults, dataTypeBytes, sameDataType, formatDataType } from './specs.js';

const byId = new Map<string, Kernel>([...matrixKernels, ...granulometryKernels, ...saliencyKernels, ...customKernels].map((k) => [k.id, k]));

/** The kernel with its implementations; throws a KernelError (not a crash) for an id that is not registered. */
export function getKernel(id: string): Kernel {
  const k = byId.get(id);
  if (!k) throw new KernelError(id, 'is not registered');
  return k;
}
