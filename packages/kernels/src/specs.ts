// @pipeloom/kernels/specs: every kernel's spec (ports, params, data types, cost hints) and the
// helpers over them, without the implementations: no WGSL source, no CPU twin, no image
// decoder is loaded from here (specs.test.ts checks it). Core reads kernels only through this.
import { ELEMENT_BYTES, type DataType, type KernelSpec, type Params } from './types.js';
import { matrixSpecs } from './matrix/spec.js';
import { granulometrySpecs } from './granulometry/spec.js';
import { saliencySpecs } from './saliency/spec.js';
import { customSpecs } from './custom/spec.js';

export * from './types.js';
export { mulberry32 } from './random.js';
export { CUSTOM_WGSL, CUSTOM_WGSL_EXAMPLE, MAX_VECTOR } from './custom/spec.js';
export { SALIENCY_PATHWAY } from './saliency/spec.js';

const all: KernelSpec[] = [...matrixSpecs, ...granulometrySpecs, ...saliencySpecs, ...customSpecs];

const byId = new Map(all.map((k) => [k.id, k]));

/** Every registered kernel's spec, in palette order. */
export function listKernels(): readonly KernelSpec[] {
  return all;
}

export function findKernel(id: string): KernelSpec | undefined {
  return byId.get(id);
}

/** Params with defaults filled in for every param the kernel declares. */
export function withDefaults(kernel: KernelSpec, params: Params | undefined): Params {
  const out: Params = {};
  for (const [name, spec] of Object.entries(kernel.params)) out[name] = params?.[name] ?? spec.default;
  return out;
}

export function dataTypeBytes(t: DataType): number {
  return t.shape.reduce((a, b) => a * b, 1) * ELEMENT_BYTES[t.element];
}

export function sameDataType(a: DataType, b: DataType): boolean {
  return a.kind === b.kind && a.element === b.element && a.shape.length === b.shape.length && a.shape.every((v, i) => v === b.shape[i]);
}

export function formatDataType(t: DataType): string {
  return `${t.kind}<${t.element}>[${t.shape.join('x')}]`;
}
