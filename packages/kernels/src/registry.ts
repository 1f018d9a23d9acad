import { ELEMENT_BYTES, KernelError, type DataType, type KernelSpec, type Params } from './types.js';
import { matrixKernels } from './matrix/index.js';
import { granulometryKernels } from './granulometry/index.js';
import { saliencyKernels } from './saliency/index.js';
import { customKernels } from './custom/index.js';

const all: KernelSpec[] = [...matrixKernels, ...granulometryKernels, ...saliencyKernels, ...customKernels];

const byId = new Map(all.map((k) => [k.id, k]));

/** Every registered kernel, in palette order. */
export function listKernels(): readonly KernelSpec[] {
  return all;
}

export function findKernel(id: string): KernelSpec | undefined {
  return byId.get(id);
}

/** Throws a KernelError (not a crash) for an id that is not registered. */
export function getKernel(id: string): KernelSpec {
  const k = byId.get(id);
  if (!k) throw new KernelError(id, 'is not registered');
  return k;
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
