// Seeded randomness for generators used by tests and benchmarks (core never uses Math.random).
// The generator itself lives with the kernels, whose synthetic inputs use it too.
export { mulberry32 } from '@pipeloom/kernels/specs';

/** An integer in [lo, hi]. */
export function randomInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}
