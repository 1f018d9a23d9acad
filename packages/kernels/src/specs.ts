// @pipeloom/kernels/specs: every kernel's spec (ports, params, data types, cost hints) and the
// helpers over them, without the implementations: no WGSL source, no CPU twin, no image
// decoder is loaded from here (specs.test.ts checks it). Core reads kernels only through this.
import { ELEMENT_BYTES, type DataType, type KernelSpec, type Params } from './types.js';
import { type KernelProblem } from './definition.js';
import { matrixSpecs } from './matrix/spec.js';
import { granulometrySpecs } from './granulometry/spec.js';
import { saliencySpecs } from './saliency/spec.js';
import { customSpecs } from './custom/spec.js';
import { genericSpecs } from './generic/spec.js';
import { mlemSpecs } from './mlem/spec.js';
import { barrierSpecs, knownSpecs, scanSpecs } from './scan/spec.js';
import { reg2dSpecs } from './reg2d/spec.js';
import { ioSpecs } from './io/spec.js';

export * from './types.js';
export {
  bindingProblems,
  checkKernelSpec,
  declaredRate,
  defineKernelSpec,
  specFromManifest,
  formatKernelProblem,
  wgslBindings,
  type WgslBinding,
  kernelManifest,
  majorOf,
  portsFor,
  specFor,
  KernelDefinitionError,
  type KernelManifest,
  type KernelProblem,
  type KernelSpecInput,
  type PortManifest,
} from './definition.js';
export { mulberry32 } from './random.js';
export { CUSTOM_WGSL, CUSTOM_WGSL_EXAMPLE, MAX_VECTOR } from './custom/spec.js';
export { SALIENCY_PATHWAY } from './saliency/spec.js';
export { GENERIC_SUM, GENERIC_WORK } from './generic/spec.js';
export {
  BINARY_MODES,
  EMPTY_HI,
  EMPTY_LO,
  MAX_COUNT,
  MAX_WORDS,
  SCAN_ELEMENT,
  applications,
  binaryPorts,
  scanElementType,
  type BinaryMode,
} from './binary-modes.js';
export { binaryKernelSpec, type BinaryOperatorSpec } from './binary.js';
export { MULMOD_PRIME, SCAN_BARRIER } from './scan/spec.js';
export {
  FILE_DTYPES,
  FILE_DTYPE_BYTES,
  IO_FORMATS,
  IO_READ,
  IO_WRITE,
  MAX_IO_PATH,
  formatShape,
  framesOf,
  ioFormat,
  parseShape,
  portElement,
  readElement,
  y4mPlanes,
  type FileDtype,
  type IoFormat,
} from './io/spec.js';

const builtins: KernelSpec[] = [
  ...matrixSpecs,
  ...granulometrySpecs,
  ...saliencySpecs,
  ...customSpecs,
  ...genericSpecs,
  ...mlemSpecs,
  ...scanSpecs,
  ...knownSpecs,
  ...barrierSpecs,
  ...reg2dSpecs,
  ...ioSpecs,
];

// One registry per process (or worker): the built-ins, then the kernels of the packages the
// operator named (`--kernels`), registered by the loader. A package kernel is registered whole
// (spec and implementation, one object), so `getKernel` finds it here too.
const all: KernelSpec[] = [...builtins];
const byId = new Map(all.map((k) => [k.id, k]));

/** Every registered kernel's spec, in palette order (built-ins first, then packages in load order). */
export function listKernels(): readonly KernelSpec[] {
  return all;
}

export function findKernel(id: string): KernelSpec | undefined {
  return byId.get(id);
}

/**
 * Adds a package's kernels (each tagged with `from`, the package's path or name). A kernel
 * whose id is already registered is refused, naming both packages; the others are added.
 */
export function registerKernels(kernels: readonly KernelSpec[], from: string): KernelProblem[] {
  const problems: KernelProblem[] = [];
  for (const k of kernels) {
    const earlier = byId.get(k.id);
    if (earlier) {
      problems.push({
        kernel: k.id,
        path: '',
        message: `is defined by both ${earlier.package ?? 'builtin'} and ${from}`,
        hint: 'load only one of them, or rename one kernel',
      });
      continue;
    }
    const tagged = { ...k, package: from };
    all.push(tagged);
    byId.set(k.id, tagged);
  }
  return problems;
}

/** Up to `n` registered ids nearest to `id` (edit distance), for "unknown kernel" diagnostics. */
export function nearestKernels(id: string, n = 3): string[] {
  return all
    .map((k) => ({ id: k.id, d: editDistance(id, k.id) }))
    .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id))
    .slice(0, n)
    .map((x) => x.id);
}

/** Levenshtein distance (insertions, deletions, substitutions): core's "did you mean" reads it too. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** Params with defaults filled in for every param the kernel declares. */
export function withDefaults(kernel: KernelSpec, params: Params | undefined): Params {
  // (Variadic ports are expanded by portsFor / specFor, from these params.)
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
