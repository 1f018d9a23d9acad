// Seeded randomness for generators used by tests and benchmarks (core never uses Math.random).
// The generator itself lives with the kernels, whose synthetic inputs use it too.
export { mulberry32 } from '@pipeloom/kernels/specs';

/** An integer in [lo, hi]. */
export function randomInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** What core uses of Web Crypto (browsers, workers and Node alike); core compiles without DOM or Node types. */
interface PlatformCrypto {
  getRandomValues<T extends Uint8Array>(array: T): T;
}

/** `n` bytes from the platform's CSPRNG. */
export function secureRandomBytes(n: number): Uint8Array {
  return (globalThis as unknown as { crypto: PlatformCrypto }).crypto.getRandomValues(new Uint8Array(n));
}
