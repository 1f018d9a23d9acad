import { buildPiicFromPalette, mouseDrag, newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// The whole path a user takes: P-I-I-C drawn from the palette, two hosts filled from their
// real agents, the paper's mapping (P on h0's CPU, an incrementer on each host's GPU, C on
// h1's CPU), the implementation graph, then 50 iterations on the agents with the live
// timeline and the consumer's check.

test('design P-I-I-C on two hosts, run 50 iterations on real agents, every lane gets events and the check passes', async ({ page, agents }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await buildPiicFromPalette(page);

  // Architecture: fill h0 and h1 from their agents, then link the two CPUs.
  await page.getByTestId('tab-arch').click();
  for (const url of agents.urls) {
    await page.getByTestId('agent-url').fill(url);
    await page.getByTestId('agent-add').click();
    await expect(page.getByTestId('agent-status')).toContainText('PE(s) reported', { timeout: 20_000 });
    await expect(page.getByTestId('agent-status')).toContainText(url === agents.urls[0] ? 'h0:' : 'h1:');
  }
  await expect(page.getByTestId('arch-pe-gpu0@h1')).toBeVisible();
  await page.locator('.react-flow__controls-fitview').click();
  await mouseDrag(
    page,
    page.getByTestId('arch-pe-cpu@h0').locator('.react-flow__handle-right'),
    page.getByTestId('arch-pe-cpu0@h1').locator('.react-flow__handle-left'),
  );
  await expect(page.getByTestId('inspector-link-kind')).toHaveValue('ethernet');
  await shot(page, 'run-1-arch');

  // Mapping: the paper's Fig 12 placement.
  await page.getByTestId('tab-mapping').click();
  // h0's CPU is the new project's cpu@h0 (the agent's first core); h1's the agent's cpu0@h1.
  const mapping: Record<string, string> = { produce: 'cpu@h0', increment: 'gpu0@h0', increment2: 'gpu0@h1', consume: 'cpu0@h1' };
  for (const [node, pe] of Object.entries(mapping)) await page.getByTestId(`map-pick-${node}`).selectOption(pe);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // Implementation graph.
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-node-consume')).toContainText('consume (3,');
  await expect(page.getByTestId('ig-pe-gpu0@h1')).toBeVisible();
  await shot(page, 'run-2-ig');

  // Run: the agents from the page's query string are prefilled and connected.
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-urls')).toHaveValue(agents.urls.join(', '));
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await expect(page.getByTestId('run-agent-h0')).toBeVisible();
  await expect(page.getByTestId('run-agent-h1')).toBeVisible();
  await page.getByTestId('run-iterations').fill('50');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
  // Every lane that ran measured events: each mapped PE's thread and the transfer lanes of
  // both hosts (the utilisation table lists the measured lanes with their busy fraction).
  const rows = await page.getByTestId('run-utilisation').locator('tr').allInnerTexts();
  const keys = rows.map((r) => r.split(/\s+/)[0]);
  for (const [, pe] of Object.entries(mapping)) expect(keys).toContain(`${pe.split('@')[1]}/${pe}/main`);
  for (const host of ['h0', 'h1']) expect(keys.some((k) => k.startsWith(`${host}/`) && /\/(send|recv):/.test(k))).toBe(true);
  const lanes = page.getByTestId('timeline-lanes');
  expect(Number(await lanes.getAttribute('data-lanes-with-events'))).toBe(keys.length);
  expect(Number(await page.getByTestId('timeline-canvas').getAttribute('data-events'))).toBeGreaterThan(50);
  await shot(page, 'run-3-done');
});
