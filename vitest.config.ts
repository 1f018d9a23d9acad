import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'examples/kernels/**/*.test.ts', 'apps/*/src/**/*.test.{ts,tsx}'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // GPU and agent tests start real processes and devices; 2 cores in CI.
    pool: 'forks',
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
