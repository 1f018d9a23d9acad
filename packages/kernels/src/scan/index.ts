import { binaryKernel } from '../define-binary.js';
import { implement } from '../implement.js';
import type { Kernel, KernelSpec, Params } from '../types.js';
import { checkImplementation, sourceImplementation } from './source-check.js';
import { barrierImplementation } from './barrier.js';
import { barrierSpecs, knownSpecs, MULMOD_PRIME, matrixSide, SCAN_BARRIER, SCAN_CHECK, SCAN_SOURCE, scanSpecs } from './spec.js';

// The built-in scan operators' applications: the CPU twin's and the WGSL's, joined to their
// specs (spec.ts) by id; then the known-answer source and checker (source-check.ts).

export { MULMOD_PRIME } from './spec.js';

/**
 * out = a b over Z_P, row-major k x k. Both factors are reduced below P = 65521 first, so a
 * product is < P^2 and s + product < (P - 1) + (P - 1)^2 = P (P - 1) < 2^32: reducing after each
 * multiply-add keeps every intermediate in u32 (WGSL) and exact in a double (the twin).
 */
export function mulmod(a: Uint32Array, b: Uint32Array, out: Uint32Array, k: number): void {
  const P = MULMOD_PRIME;
  for (let r = 0; r < k; r++)
    for (let c = 0; c < k; c++) {
      let s = 0;
      for (let t = 0; t < k; t++) s = (s + (a[r * k + t] % P) * (b[t * k + c] % P)) % P;
      out[r * k + c] = s;
    }
}

/** The same loop in WGSL: lanes share the k^2 entries of the result. */
const mulmodWgsl = (p: Params) => /* wgsl */ `
const MM_K: u32 = ${matrixSide(p)}u;
const MM_P: u32 = ${MULMOD_PRIME}u;
fn op_apply(lane: u32, lanes: u32) {
  for (var e = lane; e < MM_K * MM_K; e += lanes) {
    let r = e / MM_K;
    let c = e % MM_K;
    var s = 0u;
    // Factors reduced below P: s + product < P (P - 1) < 2^32.
    for (var t = 0u; t < MM_K; t++) { s = (s + (op_a[r * MM_K + t] % MM_P) * (op_b[t * MM_K + c] % MM_P)) % MM_P; }
    op_out[e] = s;
  }
}`;

const spec = (id: string): KernelSpec => scanSpecs.find((s) => s.id === id)!;

export const scanKernels: Kernel[] = [
  binaryKernel(spec('scan.range'), {
    // No payload: the ranges are the kernel's.
    cpu: () => {},
    wgsl: 'fn op_apply(lane: u32, lanes: u32) {}',
  }),
  binaryKernel(spec('mat.mulmod'), {
    cpu: (a, b, out, p) => mulmod(a, b, out, matrixSide(p)),
    wgsl: mulmodWgsl,
  }),
  ...implement(knownSpecs, { [SCAN_SOURCE]: sourceImplementation, [SCAN_CHECK]: checkImplementation }),
  ...implement(barrierSpecs, { [SCAN_BARRIER]: barrierImplementation }),
];
