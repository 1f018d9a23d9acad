import { startAgents, type LocalAgents } from './agents.js';
import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// "Add from agent" against a real `pipeloom agent` on loopback.

let agents: LocalAgents;
test.beforeAll(async () => {
  agents = await startAgents(['h1']);
});
test.afterAll(async () => {
  await agents?.stop();
});

test('add from agent fills a host with the PEs the agent reports', async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await page.getByTestId('tab-arch').click();
  await expect(page.getByTestId('agent-url')).toHaveValue(agents.urls[0]);
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h1:', { timeout: 20_000 });
  await expect(page.getByTestId('arch-host-h1')).toContainText(agents.urls[0]);
  // The agent's first core (as many cpuK@h1 as it was given).
  await expect(page.getByTestId('arch-pe-cpu0@h1')).toBeVisible();
  await expect(page.locator('[data-testid^="arch-pe-gpu"][data-testid$="@h1"]').first()).toBeVisible();
  await page.locator('.react-flow__controls-fitview').click();
  await shot(page, 'agent-add-from-agent');
  // One undo removes everything the agent added.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('arch-host-h1')).toHaveCount(0);
});

test('a wrong token is reported with the agent named', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-url').fill(agents.urls[0]);
  await page.getByTestId('agent-token').fill('not-the-token');
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText(agents.urls[0], { timeout: 20_000 });
  await expect(page.getByTestId('agent-status')).toHaveClass(/field-error/);
});
