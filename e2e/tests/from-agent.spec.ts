import { startAgents, type LocalAgents } from './agents.js';
import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// "Add from agent" keeps one PE per GPU the agent reports, under the agent's
// ids: three emulated GPUs sharing adapter 0 are gpu0, gpu1 and gpu2, not one gpu0. A PE not
// added says why.

let agents: LocalAgents;
test.beforeAll(async () => {
  // One core: the host's CPU PE is the agent's cpu0@h1 (e2e/tests/from-agent-cores.spec.ts has several).
  agents = await startAgents(['h1'], undefined, ['--emulate-gpus', '3', '--cpus', '1']);
});
test.afterAll(async () => {
  await agents?.stop();
});

test('an agent with three emulated GPUs on one adapter fills its host with three GPUs, each linked by PCIe; asking again says why nothing is added', async ({
  page,
}) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h1: 4 PE(s) reported, 4 added', { timeout: 20_000 });
  await expect(page.getByTestId('agent-skipped')).toHaveCount(0);
  for (const pe of ['cpu0@h1', 'gpu0@h1', 'gpu1@h1', 'gpu2@h1']) await expect(page.getByTestId(`arch-pe-${pe}`)).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await expect(page.locator('.react-flow__edge-text')).toHaveText(Array(3).fill(/^pcie/));
  await shot(page, 'from-agent-emulated');

  // Asked again: every PE is there already (kept as edited), and the list says so.
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h1: 4 PE(s) reported, 0 added', { timeout: 20_000 });
  const skipped = page.getByTestId('agent-skipped');
  for (const pe of ['cpu0@h1', 'gpu0@h1', 'gpu1@h1', 'gpu2@h1'])
    await expect(skipped).toContainText(`Not added: ${pe}: already in the architecture (kept as it is)`);
});
