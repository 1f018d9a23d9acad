import type { Page } from '@playwright/test';
import { startAgents, type LocalAgents } from './agents.js';
import { addPiicNodes, connect, connectPiic, newProject, selectNode, setField, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// The first pipeline anyone builds passes its check with default settings.
// The consumer's expectation is derived from the graph upstream (shown in the inspector with
// each param's description), and a join (matrix.add) is checked exactly.

let agents: LocalAgents;
test.beforeAll(async () => {
  agents = await startAgents(['h0']);
});
test.afterAll(async () => {
  await agents?.stop();
});

/** h0 from its agent, then every node of `mapping` onto its PE. */
async function mapOnAgent(page: Page, mapping: Record<string, string>) {
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h0:', { timeout: 20_000 });
  await page.getByTestId('tab-mapping').click();
  for (const [node, pe] of Object.entries(mapping)) await page.getByTestId(`map-pick-${node}`).selectOption(pe);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
}

async function runAndPass(page: Page, iterations: string) {
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('run-iterations').fill(iterations);
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
}

test('P-I-I-C from the palette with every param at its default passes its check on the first run', async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await page.getByTestId('tab-dfg').click();
  await addPiicNodes(page);
  await connectPiic(page);

  // Nothing typed into the consumer: its expectation params are empty, each described in place.
  await selectNode(page, 'consume');
  await expect(page.getByTestId('param-increments')).toHaveValue('');
  await expect(page.getByTestId('param-increments')).toHaveAttribute('placeholder', 'derived from the graph');
  await expect(page.getByTestId('param-expected_offset')).toHaveValue('');
  await expect(page.getByTestId('param-increments-doc')).toContainText('Comma-separated nb_loop of each incrementer upstream');
  await expect(page.getByTestId('inspector-expectation')).toContainText('derived when the document compiles');

  await mapOnAgent(page, { produce: 'cpu@h0', increment: 'gpu0@h0', increment2: 'gpu0@h0', consume: 'cpu@h0' });
  // Compiled: it expects what the two incrementers (nb_loop 5: +1 each) make.
  await page.getByTestId('tab-dfg').click();
  await selectNode(page, 'consume');
  await expect(page.getByTestId('inspector-expectation')).toContainText('expected_offset = 2, scale = 1');
  await expect(page.getByTestId('inspector-expectation')).toContainText('derived from the graph upstream');
  await shot(page, 'first-run-derived');
  await runAndPass(page, '5');
  await expect(page.getByTestId('run-check')).toContainText('passed');
});

test('a join (matrix.add of two incremented streams) is checked exactly: scale 2 derived for the consumer', async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await page.getByTestId('tab-dfg').click();
  for (const k of ['matrix.produce', 'matrix.increment', 'matrix.produce', 'matrix.add', 'matrix.consume']) await page.getByTestId(`palette-${k}`).click();
  await page.locator('.react-flow__controls-fitview').click();
  for (const id of ['produce', 'increment', 'produce2', 'add', 'consume']) {
    await selectNode(page, id);
    await setField(page, 'param-width', '64');
    await setField(page, 'param-height', '64');
  }
  await connect(page, 'produce.out', 'increment.in');
  await connect(page, 'increment.out', 'add.a');
  await connect(page, 'produce2.out', 'add.b');
  await connect(page, 'add.out', 'consume.in');
  await expect(page.locator('.react-flow__edge')).toHaveCount(4);
  await mapOnAgent(page, { produce: 'cpu@h0', increment: 'gpu0@h0', produce2: 'cpu@h0', add: 'gpu0@h0', consume: 'cpu@h0' });
  await page.getByTestId('tab-dfg').click();
  await selectNode(page, 'consume');
  // (iteration + 1) + iteration: scale 2, offset 1.
  await expect(page.getByTestId('inspector-expectation')).toContainText('expected_offset = 1, scale = 2');
  await runAndPass(page, '10');
});
