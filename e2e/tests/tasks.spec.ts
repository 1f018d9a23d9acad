import { readFileSync } from 'node:fs';
import { selectNode, setField, shot, pageProblems } from './helpers.js';
import { expect, test } from './fixtures.js';

// In the designer: a node with tasks (examples/mlem.json's projbp, "tasks": "K") mapped
// onto a list of PEs. Its tasks and both PEs show on the canvas, the Tasks field is checked as
// typed in core's words, the mapping board ticks one more PE, and Undo brings the list back,
// with no problem, console error or page error on the way; Save keeps the list as written.

test('MLEM from the Examples menu: projbp with its tasks and two PEs, tasks changed, one more PE ticked, undone', async ({ page }) => {
  const messages = pageProblems(page);
  await page.goto('/');
  await expect(page.locator('[data-testid^="dfg-node-"]').first()).toBeVisible();
  await page.getByTestId('examples').click();
  await page.getByTestId('example-mlem.json').click();
  await expect(page.getByTestId('doc-name')).toHaveText('MLEM reconstruction');

  // The canvas: K = 4 tasks, on gpu0@h0 and one more, the list in the badge's title.
  await expect(page.getByTestId('tasks-projbp')).toHaveText('4 tasks');
  await expect(page.getByTestId('pe-badge-projbp')).toHaveText('gpu0@h0 +1');
  await expect(page.getByTestId('pe-badge-projbp')).toHaveAttribute('title', /shares on gpu0@h0, cpu@h0 in turn/);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // The IG: projbp's four shares and their sum, in the two PEs' lanes (which lane: ig/layout.test.ts).
  await page.getByTestId('tab-ig').click();
  for (const pe of ['gpu0@h0', 'cpu@h0']) await expect(page.getByTestId(`ig-pe-${pe}`)).toBeVisible();
  for (const id of ['projbp[0]', 'projbp[1]', 'projbp[2]', 'projbp[3]', 'projbp']) await expect(page.getByTestId(`ig-node-${id}`)).toBeVisible();
  await page.getByTestId('tab-dfg').click();

  // The inspector: the Tasks field in core's words; 6 applied.
  await selectNode(page, 'projbp');
  await expect(page.getByTestId('inspector-tasks')).toHaveValue('K');
  await expect(page.getByTestId('inspector-pes-gpu0@h0')).toBeChecked();
  await expect(page.getByTestId('inspector-pes-cpu@h0')).toBeChecked();
  await page.getByTestId('inspector-tasks').fill('200');
  await expect(page.getByTestId('inspector-tasks-error')).toHaveText(
    'tasks 200 > angles 36: each share needs at least one of its angles (lower tasks to 36 or fewer, or raise angles)',
  );
  await setField(page, 'inspector-tasks', '6');
  await expect(page.getByTestId('tasks-projbp')).toHaveText('6 tasks');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // One more PE: a second GPU on h0, ticked on the mapping board.
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('arch-host-h0').click({ position: { x: 30, y: 10 } });
  await page.getByTestId('add-gpu').click();
  await expect(page.getByTestId('arch-pe-gpu1@h0')).toBeVisible();
  await page.getByTestId('tab-mapping').click();
  await page.getByTestId('map-pes-projbp-gpu1@h0').check();
  await expect(page.getByTestId('pe-badge-projbp')).toHaveText('gpu0@h0 +2');
  await expect(page.getByTestId('map-zone-gpu1@h0').getByTestId('map-chip-projbp')).toBeVisible();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  await page.getByTestId('tab-ig').click();
  // Shares 2 and 5 of 6 go to the list's third PE.
  await expect(page.getByTestId('ig-pe-gpu1@h0')).toBeVisible();
  await shot(page, 'tasks-three-pes-ig');

  // Undo: the list is two PEs again; then the GPU goes; tasks stay 6.
  await page.getByTestId('undo').click();
  await page.getByTestId('tab-mapping').click();
  await expect(page.getByTestId('pe-badge-projbp')).toHaveText('gpu0@h0 +1');
  await expect(page.getByTestId('map-pes-projbp-gpu1@h0')).not.toBeChecked();
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('map-zone-gpu1@h0')).toHaveCount(0);
  await expect(page.getByTestId('tasks-projbp')).toHaveText('6 tasks');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  await shot(page, 'tasks-mapping-board');

  // Save writes the list as it is in the document.
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('save').click()]);
  const saved = JSON.parse(readFileSync((await download.path())!, 'utf8'));
  expect(saved.mapping.projbp).toEqual(['gpu0@h0', 'cpu@h0']);
  expect(saved.app.nodes.find((n: { id: string }) => n.id === 'projbp').tasks).toBe(6);
  expect(messages).toEqual([]);
});
