import type { Page } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { serveDesigner } from '../../scripts/designer.js';
import { startAgents, type LocalAgents } from './agents.js';
import { npmStart, pickExample } from './helpers.js';
import { expect, test } from './fixtures.js';

// The designer as it is served: no response lets the page's URL leave as a referrer, the agents'
// token leaves the address bar once loaded (a run and a reload still work), and `npm start`'s
// agents come back after one is killed, with the designer logging in again on its own.

/** The Run tab connected to the agents, then the project open (split-join: h0's CPU only, light to deploy) run to a passed check. */
async function runToCheck(page: Page, iterations = '5') {
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
  await page.getByTestId('run-iterations').fill(iterations);
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
}

test.describe('with an agent', () => {
  let agents: LocalAgents;
  test.beforeAll(async () => {
    agents = await startAgents(['h0']);
  });
  test.afterAll(async () => {
    await agents?.stop();
  });

  test('the token leaves the address bar at load; a run works, and after a reload too', async ({ page }) => {
    await page.goto(`/${agents.query}`);
    await expect(page.getByTestId('app')).toBeVisible();
    await expect.poll(() => page.url()).not.toContain('token');
    expect(page.url()).not.toContain(agents.token);
    expect(new URL(page.url()).searchParams.get('agent')).toBe(agents.urls.join(','));
    await pickExample(page, 'split-join.json');
    await runToCheck(page);
    await page.reload();
    await expect(page.getByTestId('app')).toBeVisible();
    expect(page.url()).not.toContain(agents.token);
    await runToCheck(page);
    await expect(page.getByTestId('run-urls')).toHaveValue(agents.urls.join(', '));
  });
});

test('every response of the served designer says Referrer-Policy: no-referrer (production build and dev server)', async ({ request }) => {
  // The production build under `vite preview`, as Playwright serves it (the same config as npm start).
  const page = await request.get('/?agent=ws://127.0.0.1:1&token=T');
  expect(page.headers()['referrer-policy']).toBe('no-referrer');
  const script = /src="([^"]+\.js)"/.exec(await page.text())?.[1];
  expect(script).toBeDefined();
  expect((await request.get(script!)).headers()['referrer-policy']).toBe('no-referrer');
  expect((await request.get('/licenses.txt')).headers()['referrer-policy']).toBe('no-referrer');
  // `npm run dev`: Vite's dev server, its modules too.
  const dev = await serveDesigner({ dev: true, port: 0 });
  try {
    for (const path of ['', 'src/main.tsx', '@vite/client']) {
      const r = await request.get(`${dev.url}${path}`);
      expect(r.ok(), path).toBe(true);
      expect(r.headers()['referrer-policy'], path).toBe('no-referrer');
    }
  } finally {
    await dev.close();
  }
});

/** The pid of the `pipeloom agent --name NAME` that process `parent` started. */
function agentPid(parent: number, name: string): number {
  const children = execFileSync('pgrep', ['-P', String(parent)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map(Number);
  const pid = children.find((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0').join(' ').includes(` agent --name ${name} `);
    } catch {
      return false;
    }
  });
  if (!pid) throw new Error(`no agent ${name} among ${children.join(', ')}`);
  return pid;
}

test('`npm start`: an agent killed (SIGKILL) is restarted on its URL; the designer shows it reconnecting, then runs without a reload', async ({ page }) => {
  test.setTimeout(400_000);
  const started = await npmStart();
  try {
    const { url } = started;
    expect((await page.request.get(url)).headers()['referrer-policy']).toBe('no-referrer');
    await page.goto(url);
    await expect(page.getByTestId('app')).toBeVisible();
    await expect.poll(() => page.url()).not.toContain('token=');
    await pickExample(page, 'split-join.json');
    await page.getByTestId('tab-run').click();
    await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });

    process.kill(agentPid(started.pid, 'h0'), 'SIGKILL');
    await expect(page.getByTestId('run-connection')).toHaveText('reconnecting to h0…');
    await expect
      .poll(() => started.log(), { timeout: 60_000 })
      .toMatch(/\[agent h0\] agent restarted after it exited \(signal SIGKILL\): listening ws:\/\/127\.0\.0\.1:\d+ with the same token/);
    await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
    await runToCheck(page);
  } finally {
    await started.stop();
  }
});
