import { defineConfig } from '@playwright/test';
import { createServer } from 'node:net';
import { designerOut } from './global-setup.js';

// Debian's Chromium, never a downloaded browser. The designer is built once and served by
// `vite preview` on loopback (WebGPU needs an http origin, not file:) for every worker. Its
// port is one the system picks unless PIPELOOM_E2E_PORT names one, and its build goes to a
// folder of that port's (removed by global setup's teardown): two runs on one machine never
// meet. The workers load this file again: the environment hands them the same port.
process.env.PIPELOOM_E2E_PORT ||= String(await freePort());
const PORT = Number(process.env.PIPELOOM_E2E_PORT);
const DESIGNER_OUT = designerOut(PORT);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export default defineConfig({
  testDir: './tests',
  outputDir: './artifacts/results',
  // Generous: CI machines have 2 cores, the workers and the agents' WebGPU work share them.
  timeout: 300_000,
  expect: { timeout: 25_000 },
  // Every test on its own: agents are per worker (tests/agents.ts) or per file, on ports the
  // system picks, and `npm start` takes a free port and a build folder of its own.
  fullyParallel: true,
  workers: 2,
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
    command: `npx vite build --logLevel warn --outDir ${DESIGNER_OUT} --emptyOutDir && npx vite preview --outDir ${DESIGNER_OUT} --port ${PORT} --strictPort --host 127.0.0.1`,
    cwd: '..',
    url: `http://127.0.0.1:${PORT}`,
    timeout: 180_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
