import type { Page } from '@playwright/test';
import { connect, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Feedback in the designer, on examples/accumulator.json: an adder reading its own output one
// iteration late (A -> A) and a loop across the hosts (L -> R -> L) with D initial tokens. A
// connection that closes a loop gets a delay; the edge inspector edits the delay and its
// values; the compiler's minimum delay shows as a problem on the edge; the run checks the sums.

async function openAccumulator(page: Page, query = '') {
  await page.goto(`/${query}`);
  await page.getByTestId('examples').click();
  await page.getByTestId('example-accumulator.json').click();
  await expect(page.getByTestId('dfg-node-L')).toBeVisible();
}

const noErrors = (page: Page) => expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
const edgeLabel = (page: Page, text: string) => page.locator('.react-flow__edge-text').filter({ hasText: text });

test('a connection closing a loop gets a delay; the edge inspector sets it, the problem names the delay the loop needs, undo restores it', async ({ page }) => {
  await openAccumulator(page);
  await noErrors(page);
  await expect(edgeLabel(page, 'delay 1')).toHaveCount(1);
  await expect(edgeLabel(page, 'delay D')).toHaveCount(1);

  // Remove the loop's delayed edge R -> L and draw it again: it closes a loop, so it comes with one initial token.
  await edgeLabel(page, 'delay D').click({ force: true });
  await expect(page.getByTestId('edge-delay')).toHaveValue('D');
  await page.getByRole('button', { name: 'Delete edge' }).click();
  await expect(edgeLabel(page, 'delay D')).toHaveCount(0);
  await connect(page, 'R.out', 'L.b');
  await expect(page.getByTestId('toast-info').last()).toContainText('R -> L closes a loop');
  await expect(edgeLabel(page, 'delay 1')).toHaveCount(2);

  // One token is too few for a loop across hosts with overlap: the problem says how many it needs.
  const problem = page.getByTestId('problem').filter({ hasText: 'the loop L -> R -> L carries 1 iteration of initial tokens' });
  await expect(problem).toContainText('raise the delay to 8');
  await problem.click();
  await expect(page.getByTestId('edge-delay')).toHaveValue('1');
  await shot(page, 'delays-problem');

  // Eight: it compiles. The values may come from a source node of the graph instead of a constant.
  await page.getByTestId('edge-delay').fill('8');
  await noErrors(page);
  await expect(page.getByTestId('edge-init-value')).toHaveValue('0');
  await page.getByTestId('edge-init-source').selectOption('P');
  await expect(page.getByTestId('edge-init-value')).toHaveCount(0);
  // The inspector offers P (a kernel with no inputs), but P feeds A and L, and an init's node
  // runs before the run only: the compiler refuses each of its edges, saying how to fix it.
  const initEdges = page.getByTestId('problem').filter({ hasText: "gives an init's values, so it runs before the run and never in it" });
  await expect(initEdges).toHaveCount(2);
  await expect(initEdges.first()).toContainText('give the init another source node');
  await expect(page.getByTestId('problem-count')).toHaveText('2 errors, 0 warnings');

  // Undo steps back through the init, the delay and the connection.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('edge-init-value')).toHaveValue('0');
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('edge-delay')).toHaveValue('1');
});

test('the accumulator runs on real agents: every sum checked, both loops', async ({ page, agents }) => {
  await openAccumulator(page, agents.query);
  await noErrors(page);
  // The example's hosts are h0 and h1, as the agents.
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('run-iterations').fill('30');
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
  await shot(page, 'delays-run');
});
