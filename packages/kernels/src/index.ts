// Browser-safe entry point: no Node APIs here or below (the Node test device lives in
// ./gpu/node-device.ts and is imported by path). Everything in './specs' plus the kernels'
// implementations (getKernel), WGSL plumbing and the image decoder.
export * from './specs.js';
export { getKernel } from './registry.js';
export { setDataHost, type DataHost } from './io/index.js';
export { defineKernel, LINEAR_ID, type KernelDefinition, type WgslKernel, type WgslPass } from './define.js';
export {
  defineBinaryKernel,
  binaryKernel,
  rangeViolation,
  nonFiniteResult,
  MAX_COUNTERS,
  type ApplyInfo,
  type BinaryApply,
  type BinaryKernelDefinition,
} from './define-binary.js';
export { mulmod } from './scan/index.js';
export { increment, expectedValue, parseIncrements } from './matrix/index.js';
export { patternSpectrum, predominantSize } from './granulometry/morphology.js';
export { expectedVectorValue } from './custom/index.js';
export { decodeImage, registerImageFile, type GreyImage } from './saliency/image-file.js';
export { createPipeline, dispatchSize } from './gpu/pipeline.js';
export { GpuRunner, runCpu, allocate, type FiringResult, type TypedArray } from './gpu/harness.js';
