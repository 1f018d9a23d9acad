import { EMPTY_HI, EMPTY_LO } from '../binary-modes.js';
import type { FiringReport, Params } from '../types.js';
import { knownCount, knownWords, matrixSide, MULMOD_PRIME } from './spec.js';

// The known answer of a scan over scan.source's elements: what scan.source makes
// and what scan.check expects, element by element, on the host (the CPU twins, and the GPU
// check's report). source-check.ts's WGSL computes the same words with the same arithmetic.
//   x_i = [i, i, payload]; scan.range: no payload; mat.mulmod: M_(i+1) embedded in the k x k
//   identity, M_j = [[1, 1, 0], [0, 1, j], [0, 0, 1]] mod P.
//   The product M_1 ... M_n = [[1, n, (n^3 - n)/3], [0, 1, n(n+1)/2], [0, 0, 1]] mod P (n = 0:
//   the identity), so an inclusive y_i (range [0, i]) holds the product for n = i + 1, an
//   exclusive y_i (range [0, i - 1]) for n = i, and y_0 is the identity on the empty range.

const P = MULMOD_PRIME;
/** 2^-1 and 3^-1 mod P: n(n+1)/2 and (n^3 - n)/3 = (n-1) n (n+1)/3 without leaving u32. */
export const INV2 = 32761;
export const INV3 = 43681;

/** a b mod P for a, b < P: a b < 2^32, exact in a double and in u32. */
const mm = (a: number, b: number) => (a * b) % P;

/** The entries of M_1 ... M_n that are not the identity's: (0,1) = n, (0,2) = (n^3 - n)/3, (1,2) = n(n+1)/2, mod P. */
export function prefixEntries(n: number): { n01: number; n02: number; n12: number } {
  if (n === 0) return { n01: 0, n02: 0, n12: 0 };
  const [a, b, c] = [(n - 1) % P, n % P, (n + 1) % P];
  return { n01: b, n02: mm(mm(mm(a, b), c), INV3), n12: mm(mm(b, c), INV2) };
}

/** Writes the k x k embedding of [[1, x01, x02], [0, 1, x12], [0, 0, 1]] (identity elsewhere) into `into`. */
function embed(into: Uint32Array, k: number, x01: number, x02: number, x12: number): void {
  into.fill(0);
  for (let d = 0; d < k; d++) into[d * k + d] = 1;
  into[1] = x01;
  into[2] = x02;
  into[k + 2] = x12;
}

/** scan.source's element i ([i, i, payload]) into `into` (2 + W words). */
export function sourceElement(params: Params, i: number, into: Uint32Array): void {
  into[0] = i;
  into[1] = i;
  if (knownWords(params)) embed(into.subarray(2), matrixSide(params), 1, 0, (i + 1) % P);
}

/** The element covering [lo, hi] of the known scan (lo > hi: the identity on the empty range), into `into`. */
function prefixElement(params: Params, lo: number, hi: number, into: Uint32Array): void {
  into[0] = lo;
  into[1] = hi;
  if (!knownWords(params)) return;
  const { n01, n02, n12 } = prefixEntries(lo > hi ? 0 : hi + 1);
  embed(into.subarray(2), matrixSide(params), n01, n02, n12);
}

/** What element i of the scan's `out` must hold: inclusive [0, i]; exclusive [1, 0] (the identity) for i = 0, else [0, i - 1]. */
export function expectedOut(params: Params, i: number, into: Uint32Array): void {
  if (String(params.output) === 'exclusive') {
    if (i === 0) prefixElement(params, EMPTY_LO, EMPTY_HI, into);
    else prefixElement(params, 0, i - 1, into);
  } else prefixElement(params, 0, i, into);
}

/** What the scan's `total` must hold: [0, N - 1]. */
export function expectedTotal(params: Params, into: Uint32Array): void {
  prefixElement(params, 0, knownCount(params) - 1, into);
}

/** Most payload entries a report spells out; past them it names the first wrong entry only. */
const SHOWN = 9;

/** An element as a report says it: `[lo, hi]`, and its payload as a k x k matrix when it is small. */
function describe(e: Uint32Array, k: number): string {
  const range = `[${e[0]}, ${e[1]}]`;
  const W = e.length - 2;
  if (!W) return range;
  if (W > SHOWN) return range;
  const rows = Array.from({ length: k }, (_, r) => `[${Array.from(e.subarray(2 + r * k, 2 + (r + 1) * k)).join(', ')}]`);
  return `${range} [${rows.join(', ')}]`;
}

/**
 * A failed check: names the iteration, the port, the first bad element, what it holds and what
 * it should (a large payload: its first wrong entry), with both as values.
 */
export function mismatchReport(params: Params, iteration: number, port: string, index: number, got: Uint32Array, want: Uint32Array): FiringReport {
  const k = matrixSide(params);
  let text = `iteration ${iteration}: ${port} element ${index} holds ${describe(got, k)}, expected ${describe(want, k)}`;
  const W = got.length - 2;
  if (W > SHOWN) {
    const w = got.findIndex((v, j) => j >= 2 && v !== want[j]);
    if (w >= 2) text += ` (entry (${Math.floor((w - 2) / k)}, ${(w - 2) % k}) is ${got[w]}, expected ${want[w]})`;
  }
  const show = (e: Uint32Array) => Array.from(e.subarray(0, 2 + Math.min(W, 256)));
  return { ok: false, message: text, values: { iteration, port, index, got: show(got), expected: show(want) } };
}
