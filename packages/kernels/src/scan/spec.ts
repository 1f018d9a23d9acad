import { builtinBinarySpecs } from '../binary.js';
import { MAX_COUNT, MAX_WORDS, scanElementType } from '../binary-modes.js';
import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, ParamSpec, Params, PortSpec } from '../types.js';

// The built-in scan operators as data (the spec side of defineBinaryKernel); their
// applications, CPU and WGSL, are in index.ts. Elements: [lo, hi, payload...] (binary.ts).
// Beside them, a source of the operators' known-answer elements and a checker of a scan's
// result (known.ts holds the answers; source-check.ts runs them).

/** The prime modulus of mat.mulmod: the largest below 2^16, so a product of two residues and a residue still fit in u32. */
export const MULMOD_PRIME = 65521;

export const matrixSide = (p: Params) => Number(p.k);

export const scanSpecs: KernelSpec[] = builtinBinarySpecs([
  {
    id: 'scan.range',
    title: 'Range operator',
    description:
      'The scan operator on ranges only (no payload): [lo, a] (+) [a + 1, hi] = [lo, hi]. Exact, not commutative; wires and checks a scan network without computing anything.',
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

export const SCAN_SOURCE = 'scan.source';
export const SCAN_CHECK = 'scan.check';

/** The operators scan.source makes elements for and scan.check knows the answer of. */
export const KNOWN_OPERATORS = ['scan.range', 'mat.mulmod'] as const;

/** Payload words W of one element of the known-answer elements: 0 for scan.range, k^2 for mat.mulmod. */
export const knownWords = (p: Params) => (String(p.operator) === 'mat.mulmod' ? matrixSide(p) ** 2 : 0);
/** Elements N of the scanned series. */
export const knownCount = (p: Params) => Number(p.count);

const seriesType = (p: Params): DataType => scanElementType(knownCount(p), knownWords(p));
const totalType = (p: Params): DataType => scanElementType(1, knownWords(p));

const knownParams: Record<string, ParamSpec> = {
  operator: {
    type: 'enum',
    default: 'mat.mulmod',
    values: [...KNOWN_OPERATORS],
    description: 'The scan operator whose elements these are (scan.range: ranges only; mat.mulmod: k x k matrices mod 65521)',
  },
  // A single worker's block holds every element: the operator's count bound.
  count: { type: 'int', default: 64, min: 1, max: MAX_COUNT, unit: 'elements', description: 'Elements N of the series' },
  // The known answer's 3 x 3 matrices sit in the top-left of the identity, so k >= 3.
  k: {
    type: 'int',
    default: 3,
    min: 3,
    max: 16,
    description: 'Matrix side k of mat.mulmod (the 3 x 3 known answer embedded in the k x k identity); unused by scan.range',
  },
};

const checkPorts = (p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } => ({
  inputs: [
    { name: 'out', description: "the scan's out: N elements", type: seriesType },
    ...(p.total === true ? [{ name: 'total', description: "the scan's total: one element", type: totalType }] : []),
  ],
  outputs: [],
});

export const knownSpecs: KernelSpec[] = builtinSpecs([
  {
    id: SCAN_SOURCE,
    title: 'Scan source',
    category: 'Scan operators',
    description:
      'N elements of a scan operator with a known prefix: x_i = [i, i, payload]. scan.range: no payload. mat.mulmod: M_(i+1), where M_j = [[1, 1, 0], [0, 1, j], [0, 0, 1]] (mod 65521) in the top-left of the k x k identity. The same every iteration.',
    params: knownParams,
    inputs: [],
    outputs: [{ name: 'out', description: 'N elements [i, i, payload]', type: seriesType }],
    cost: (p) => ({ flops: 0, bytes: 4 * knownCount(p) * (2 + knownWords(p)) }),
  },
  {
    id: SCAN_CHECK,
    title: 'Scan check',
    category: 'Scan operators',
    description:
      "Checks a scan of scan.source's elements against the known answer, every element: ranges [0, i] (exclusive: the empty range [1, 0], then [0, i - 1]); for mat.mulmod the prefix of M_1 ... M_n = [[1, n, (n^3 - n)/3], [0, 1, n(n + 1)/2], [0, 0, 1]] mod 65521 (the identity for the empty range); with `total`, its input total = [0, N - 1]. A mismatch names the port, the first bad element, what it holds and what it should.",
    params: {
      ...knownParams,
      output: {
        type: 'enum',
        default: 'inclusive',
        values: ['inclusive', 'exclusive'],
        description: "The scan's output: inclusive (y_i covers [0, i]) or exclusive (y_0 the identity, y_i covers [0, i - 1])",
      },
      total: { type: 'bool', default: false, description: "Also check a `total` input (the scan's total: [0, N - 1])" },
    },
    inputs: checkPorts({ total: false }).inputs,
    outputs: [],
    ports: checkPorts,
    cost: (p) => ({ flops: 8 * knownCount(p) * (2 + knownWords(p)), bytes: 4 * (knownCount(p) + 1) * (2 + knownWords(p)) }),
  },
]);

export const SCAN_BARRIER = 'scan.barrier';

const barrierType = (p: Params): DataType => scanElementType(Number(p.count), Number(p.words));

/**
 * A scan's barrier between network levels (execution "rounds", core's document/scan.ts): it
 * fires once every element of its `in` has come, one from each node of the level before, and
 * relays them unchanged, so a node of the next level that reads its operands from `out` cannot
 * start before the whole level before it ended.
 */
export const barrierSpecs: KernelSpec[] = builtinSpecs([
  {
    id: SCAN_BARRIER,
    title: 'Scan barrier',
    category: 'Scan operators',
    description:
      'Relays count scan elements unchanged once all have come: the barrier before a network level of a scan run in rounds (each of its nodes reads its operands from here). Fires no operator.',
    params: {
      words: { type: 'int', default: 0, min: 0, max: MAX_WORDS, unit: 'words', description: "Payload words W of one element (the operator's)" },
      count: {
        type: 'int',
        default: 1,
        min: 1,
        max: MAX_COUNT,
        unit: 'elements',
        description: "Elements relayed: the next level's operands, then one from each node of the level before that gives none",
      },
    },
    inputs: [{ name: 'in', description: 'the elements, one or more from each node of the level before', type: barrierType }],
    outputs: [{ name: 'out', description: 'the same elements', type: barrierType }],
    cost: (p) => ({ flops: 0, bytes: 8 * Number(p.count) * (2 + Number(p.words)) }),
  },
]);
