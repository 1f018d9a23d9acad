import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { startAgents, type LocalAgents } from './agents.js';
import { addPiicNodes, ARTIFACTS, connectPiic, newProject, selectNode } from './helpers.js';
import { expect, test } from './fixtures.js';

// The walkthrough of docs/web.md ("Your first pipeline"), as a user does it: P-I-I-C from the
// palette with every param at its default, one host filled from its agent, the mapping, the
// implementation graph, and a first Run that passes. Its screenshots are the guide's:
// `PIPELOOM_DOCS_SHOTS=1` writes them to docs/images/ (then commit them); otherwise they go to
// e2e/artifacts/ so a plain e2e run leaves the tree clean.

const DIR = process.env.PIPELOOM_DOCS_SHOTS ? fileURLToPath(new URL('../../docs/images/', import.meta.url)) : ARTIFACTS;
mkdirSync(DIR, { recursive: true });
const snap = (page: Page, name: string) => page.screenshot({ path: `${DIR}walkthrough-${name}.png` });

let agents: LocalAgents;
test.beforeAll(async () => {
  agents = await startAgents(['h0']);
});
test.afterAll(async () => {
  await agents?.stop();
});

test.use({ viewport: { width: 1280, height: 720 } });

test('walkthrough: a pipeline built from scratch passes on its first Run', async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);

  // 1. Kernels from the palette; the help panel, open since the clicks, follows the pointer.
  await page.getByTestId('tab-dfg').click();
  await addPiicNodes(page);
  await page.getByTestId('palette-matrix.increment').hover();
  await expect(page.getByTestId('palette-help')).toContainText('Increment matrix');
  await snap(page, '1-palette');

  // 2. Connected output to input; the consumer's expectation params stay empty.
  await connectPiic(page);
  await selectNode(page, 'consume');
  await expect(page.getByTestId('param-increments')).toHaveValue('');
  await snap(page, '2-connected');

  // 3. The host from its agent: its GPU joins the CPU a new project has, with a PCIe link.
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h0: 2 PE(s) reported, 1 added', { timeout: 20_000 });
  await page.locator('.react-flow__controls-fitview').click();
  await snap(page, '3-architecture');

  // 4. The mapping: the incrementers on the GPU, producer and consumer on the CPU.
  await page.getByTestId('tab-mapping').click();
  await page.getByTestId('map-chip-increment').dragTo(page.getByTestId('map-zone-gpu0@h0'));
  await expect(page.getByTestId('map-zone-gpu0@h0').getByTestId('map-chip-increment')).toBeVisible();
  for (const [node, pe] of [
    ['increment2', 'gpu0@h0'],
    ['produce', 'cpu@h0'],
    ['consume', 'cpu@h0'],
  ])
    await page.getByTestId(`map-pick-${node}`).selectOption(pe);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  await snap(page, '4-mapping');

  // 5. What the consumer will check, derived from the graph.
  await page.getByTestId('tab-dfg').click();
  await page.locator('.react-flow__controls-fitview').click();
  await selectNode(page, 'consume');
  await expect(page.getByTestId('inspector-expectation')).toContainText('expected_offset = 2, scale = 1');
  await snap(page, '5-expectation');

  // 6. The implementation graph.
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-node-consume')).toBeVisible();
  await snap(page, '6-implementation');

  // 7. Run: connected from the page's URL; ten iterations; the check passes.
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('run-iterations').fill('10');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
  await page.getByTestId('run-check').scrollIntoViewIfNeeded();
  await snap(page, '7-run');
});
