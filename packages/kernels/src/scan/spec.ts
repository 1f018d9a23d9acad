import { builtinBinarySpecs } from '../binary.js';
import type { KernelSpec, Params } from '../types.js';

// The built-in scan operators as data (the spec side of defineBinaryKernel); their
// applications, CPU and WGSL, are in index.ts. Elements: [lo, hi, payload...] (binary.ts).

/** The prime modulus of mat.mulmod: the largest below 2^16, so a product of two residues and a residue still fit in u32. */
export const MULMOD_PRIME = 65521;

export const matrixSide = (p: Params) => Number(p.k);

export const scanSpecs: KernelSpec[] = builtinBinarySpecs([
  {
    id: 'scan.range',
    title: 'Range operator',
    description: 'The scan operator on ranges only (no payload): [lo, a] (+) [a + 1, hi] = [lo, hi]. Exact, not commutative; wires and checks a scan network without computing anything.',
    words: () => 0,
    binary: { associativity: 'exact', commutative: false, identity: () => [] },
    // Reads two elements, writes one: 3 x 2 words.
    cost: () => ({ flops: 1, bytes: 24 }),
  },
  {
    id: 'mat.mulmod',
    title: 'Matrix product mod 65521',
    description: `The product of k x k matrices over Z_${MULMOD_PRIME} (row-major u32 payload, k^2 words): a (+) b = a b, reduced after each multiply-add so every intermediate fits in u32. Associative (exact: the same bits on every device and bracketing), not commutative; the identity is I.`,
    params: { k: { type: 'int', default: 3, min: 1, max: 16, description: 'Matrix side k (the payload is k x k words)' } },
    words: (p) => matrixSide(p) ** 2,
    binary: {
      associativity: 'exact',
      commutative: false,
      identity: (p) => {
        const k = matrixSide(p);
        return Array.from({ length: k * k }, (_, e) => (Math.floor(e / k) === e % k ? 1 : 0));
      },
    },
    // k^3 multiply-adds (each with its reduction); reads two matrices, writes one.
    cost: (p) => ({ flops: 2 * matrixSide(p) ** 3, bytes: 12 * matrixSide(p) ** 2 + 24 }),
  },
]);
