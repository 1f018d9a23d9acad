import { selectNode } from './helpers.js';
import { expect, test } from './fixtures.js';

// A node's requirements in the designer: clauses checked as typed, suggested from what the
// connected agents report of their PEs, the PEs that meet them listed, and the compiler's
// verdict on the mapping in the Problems list.

test('requires: suggested from the agents, checked as typed, met by the PEs listed; a mapping that fails it is a problem; undo', async ({ page, agents }) => {
  await page.goto(`/${agents.query}`);
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  // The agents connect from the URL: the Run view lists them.
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('tab-dfg').click();

  await selectNode(page, 'I1');
  const field = page.getByTestId('inspector-requires');
  // Suggestions come from the PEs the agents report (llvmpipe: a software adapter on opengl).
  await expect(page.getByTestId('inspector-requires-suggestions')).toContainText('backend=opengl');
  await field.fill('knd=gpu');
  await expect(page.getByTestId('inspector-requires-error')).toContainText('unknown key "knd" (did you mean "kind"?)');
  await field.fill('kind=gpu');
  await expect(page.getByTestId('inspector-requires-matching')).toHaveText('Met by gpu0@h0, gpu0@h1');
  await field.blur();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // kind=cpu on a node mapped to a GPU: the compiler says so, naming the node and the PE.
  await field.fill('kind=cpu');
  // Each agent's cores (cpu0@h0 ..., as many as it was given).
  await expect(page.getByTestId('inspector-requires-matching')).toHaveText(/^Met by cpu0@h0(, cpu\d+@h0)*, cpu0@h1(, cpu\d+@h1)*$/);
  await field.blur();
  await expect(page.getByTestId('problem').filter({ hasText: 'requires kind=cpu' })).toContainText('gpu0@h0');
  await page.getByTestId('undo').click();
  await expect(field).toHaveValue('kind=gpu');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
});
