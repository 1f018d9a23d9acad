import { defineKernel } from './define.js';
import { KernelError, type Kernel, type KernelImplementation, type KernelSpec } from './types.js';

/**
 * Joins each built-in spec to its implementation by id, through `defineKernel` like any
 * package's kernel (nothing built in skips a check); a spec left without one is a programming error.
 */
export function implement(specs: readonly KernelSpec[], impls: Record<string, KernelImplementation>): Kernel[] {
  const extra = Object.keys(impls).filter((id) => !specs.some((s) => s.id === id));
  if (extra.length) throw new KernelError(extra[0], 'is implemented but has no spec');
  return specs.map((spec) => {
    const impl = impls[spec.id];
    if (!impl) throw new KernelError(spec.id, 'has a spec but no implementation');
    return defineKernel({ ...spec, ...impl });
  });
}
