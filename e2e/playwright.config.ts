import { defineConfig } from '@playwright/test';

// Debian's Chromium, never a downloaded browser. The designer is built and served by
// `vite preview` on loopback (WebGPU needs an http origin, not file:).
const PORT = Number(process.env.PIPELOOM_E2E_PORT ?? 4317);

export default defineConfig({
  testDir: './tests',
  outputDir: './artifacts/results',
  timeout: 120_000,
  // Generous: CI machines have 2 cores and the agents' WebGPU work shares them.
  expect: { timeout: 25_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  globalSetup: './global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    viewport: { width: 1440, height: 900 },
    headless: true,
    screenshot: 'only-on-failure',
    trace: 'off',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--enable-unsafe-webgpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-features=Translate,MediaRouter',
        '--disable-dev-shm-usage',
      ],
    },
  },
  webServer: {
    command: `npx vite build --logLevel warn && npx vite preview --port ${PORT} --strictPort --host 127.0.0.1`,
    cwd: '..',
    url: `http://127.0.0.1:${PORT}`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
