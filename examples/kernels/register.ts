import { findKernel, registerKernels } from '@pipeloom/kernels/specs';
import imageKernels from './image/index.js';

// For tests and benches only: examples/sobel.json uses the example kernel package; tests that
// read every example load it first, as `--kernels examples/kernels/image` would. It lives here,
// beside the package, so that core's testing/ stays inside core.

export function registerExampleKernels(): void {
  if (!findKernel('image.read')) registerKernels(imageKernels, 'examples/kernels/image');
}
