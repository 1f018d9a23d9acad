import { startAgents, type LocalAgents } from './agents.js';
import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// "Add from agent" with an agent serving three CPU cores (`--cpus 3`) and one GPU: every core
// joins the host, each two by a memory link, the GPU by PCIe to the first core. A new project's
// host h0 has its `cpu@h0` already: that is the agent's first core, kept, not added twice.

let agents: LocalAgents;
test.beforeAll(async () => {
  agents = await startAgents(['h0'], undefined, ['--cpus', '3', '--emulate-gpus', '1']);
});
test.afterAll(async () => {
  await agents?.stop();
});

test("an agent with three cores fills the new project's h0: its cpu@h0 is the first core, the others join it by memory links", async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h0: 4 PE(s) reported, 3 added', { timeout: 20_000 });
  await expect(page.getByTestId('agent-skipped')).toContainText('Not added: cpu0@h0: cpu@h0 in the architecture is this core (kept as it is)');
  for (const pe of ['cpu@h0', 'cpu1@h0', 'cpu2@h0', 'gpu0@h0']) await expect(page.getByTestId(`arch-pe-${pe}`)).toBeVisible();
  await expect(page.locator('.react-flow__edge.link-memory')).toHaveCount(3);
  await expect(page.locator('.react-flow__edge.link-pcie')).toHaveCount(1);
  // Memory links say their numbers once selected: the ring's middle stays clear.
  await expect(page.locator('.react-flow__edge-text')).toHaveText([/^pcie/]);
  await page.locator('.react-flow__controls-fitview').click();
  await shot(page, 'from-agent-cores');
});
