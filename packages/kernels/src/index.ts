// Browser-safe entry point: no Node APIs here or below (the Node test device lives in
// ./gpu/node-device.ts and is imported by path).
export * from './types.js';
export * from './registry.js';
export { mulberry32 } from './random.js';
export { increment, expectedValue, parseIncrements } from './matrix/index.js';
export { patternSpectrum, predominantSize } from './granulometry/morphology.js';
export { CUSTOM_WGSL, CUSTOM_WGSL_EXAMPLE, expectedVectorValue } from './custom/index.js';
export { SALIENCY_PATHWAY } from './saliency/index.js';
export { decodeImage, registerImageFile, type GreyImage } from './saliency/image-file.js';
export { createPipeline, dispatchSize } from './gpu/pipeline.js';
export { GpuRunner, runCpu, allocate, type FiringResult, type TypedArray } from './gpu/harness.js';
