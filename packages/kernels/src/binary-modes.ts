import type { DataType, PortSpec } from './types.js';

// A binary operator's modes as data, below the kernel definitions that read them (definition.ts
// rebuilds a binary kernel's ports from its manifest with `binaryPorts`).
//
// Every token is a list of elements of 2 + W u32 words, [lo, hi, payload...]: [lo, hi] is the
// range of inputs the element covers. (+) needs left.hi + 1 = right.lo and covers
// [left.lo, right.hi]; an element whose range is empty (lo > hi; written EMPTY = [1, 0]) is
// the symbolic identity: combining with it fires nothing.

export const BINARY_MODES = ['apply', 'scan', 'reduce', 'propagate', 'exclusive'] as const;
export type BinaryMode = (typeof BINARY_MODES)[number];

/** The empty range of the symbolic identity (lo > hi). */
export const EMPTY_LO = 1;
export const EMPTY_HI = 0;

/** Payload words an operator may declare: four copies (operands, result, running element) fit the 16 KiB of workgroup memory every WebGPU device has. */
export const MAX_WORDS = 1000;

/** Elements per block (`count`): one workgroup each in propagate, so at most the 65535 of one dispatch row. */
export const MAX_COUNT = 65535;

/** The data kind of every scan token. */
export const SCAN_ELEMENT = 'scan-element';

/** The data type of m elements of W payload words: u32[m][2 + W]. */
export function scanElementType(m: number, words: number): DataType {
  return { kind: SCAN_ELEMENT, element: 'u32', shape: [m, 2 + words] };
}

/** Applications one firing makes, at most (empty ranges fire none). */
export function applications(mode: BinaryMode, m: number): number {
  if (mode === 'apply') return 1;
  if (mode === 'propagate') return m;
  return Math.max(0, m - 1);
}

/**
 * The ports of one mode: `apply` a, b -> out (1 element each); `scan` in -> out, total;
 * `reduce` in -> total; `propagate` prefix, block -> out; `exclusive` in -> out, total. The
 * context ports follow the mode's inputs. Throws naming the param for a mode the operator cannot run.
 */
export function binaryPorts(
  id: string,
  mode: string,
  m: number,
  words: number,
  context: readonly PortSpec[],
  hasIdentity: boolean,
): { inputs: PortSpec[]; outputs: PortSpec[] } {
  if (!(BINARY_MODES as readonly string[]).includes(mode)) throw new Error(`param mode: "${mode}" is not one of ${BINARY_MODES.join(', ')}`);
  if (mode === 'exclusive' && !hasIdentity)
    throw new Error(
      `param mode: operator "${id}" declares no identity, so it cannot give an exclusive scan (use mode "scan", or give the operator binary.identity)`,
    );
  if (!Number.isInteger(m) || m < 1 || m > MAX_COUNT) throw new Error(`param count: ${m} is not an element count 1 .. ${MAX_COUNT}`);
  if (!Number.isInteger(words) || words < 0 || words > MAX_WORDS) throw new Error(`operator "${id}" gives ${words} payload words, not 0 .. ${MAX_WORDS}`);
  const one = scanElementType(1, words);
  const block = scanElementType(m, words);
  const port = (name: string, t: DataType, description: string): PortSpec => ({ name, description, type: () => t });
  const ctx = [...context];
  switch (mode as BinaryMode) {
    case 'apply':
      return { inputs: [port('a', one, 'left operand'), port('b', one, "right operand, the range after a's"), ...ctx], outputs: [port('out', one, 'a (+) b')] };
    case 'scan':
      return {
        inputs: [port('in', block, 'a block of adjacent elements'), ...ctx],
        outputs: [port('out', block, 'inclusive scan of the block, left to right'), port('total', one, 'the block reduced')],
      };
    case 'reduce':
      return { inputs: [port('in', block, 'a block of adjacent elements'), ...ctx], outputs: [port('total', one, 'the block reduced, left to right')] };
    case 'propagate':
      return {
        inputs: [
          port('prefix', one, 'what comes before the block (the empty range: the identity)'),
          port('block', block, 'an inclusive scan of the block'),
          ...ctx,
        ],
        outputs: [port('out', block, 'prefix (+) block[j] for each j')],
      };
    case 'exclusive':
      return {
        inputs: [port('in', block, 'a block of adjacent elements'), ...ctx],
        outputs: [port('out', block, 'the identity, then the inclusive scan shifted by one'), port('total', one, 'the block reduced')],
      };
  }
}
