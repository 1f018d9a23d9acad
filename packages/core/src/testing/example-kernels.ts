import { findKernel, registerKernels } from '@pipeloom/kernels/specs';
import imageKernels from '../../../../examples/kernels/image/index.js';

// For tests only: examples/sobel.json uses the example kernel package; tests that read every
// example load it first, as `--kernels examples/kernels/image` would.

export function registerExampleKernels(): void {
  if (!findKernel('image.read')) registerKernels(imageKernels, 'examples/kernels/image');
}
