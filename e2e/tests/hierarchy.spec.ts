import type { Page } from '@playwright/test';
import { shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Parameters, repetition counts and composites in the designer, on the examples written with
// them: piic.json (W, H, N), split-join.json (P's out at rate 8), composite.json (defs.stage twice).

async function openExample(page: Page, file: string, first: string) {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId(`example-${file}`).click();
  await expect(page.getByTestId(`dfg-node-${first}`)).toBeVisible();
}

const noErrors = (page: Page) => expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

test('the parameter panel edits N and W: the compiled output follows, a bad expression is a problem naming the param, kept as typed', async ({ page }) => {
  await openExample(page, 'piic.json', 'P');
  await noErrors(page);
  // The implementation graph's memory at W = 2048, to see the recompile after each change.
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('memory-panel')).toContainText('MiB');
  const at2048 = await page.getByTestId('memory-panel').innerText();
  await page.getByTestId('tab-dfg').click();
  await expect(page.getByTestId('param-eval-W')).toHaveText(/= 2048/);
  await expect(page.getByTestId('param-row-W')).toContainText('matrix width');
  // The nodes read W: their ports show the evaluated type.
  await expect(page.locator('.react-flow__edge-text').first()).toHaveText('f32 2048×2048');

  // W -> 1024: the edges' types and the implementation graph's buffers follow.
  await page.getByTestId('param-value-W').fill('1024');
  await page.getByTestId('param-value-W').press('Enter');
  await expect(page.getByTestId('param-eval-W')).toHaveText(/= 1024/);
  await expect(page.locator('.react-flow__edge-text').first()).toHaveText('f32 2048×1024');
  await noErrors(page);
  await page.getByTestId('tab-ig').click();
  // The worker's recompile lands after the edit: wait for the memory to change from W = 2048's.
  await expect.poll(() => page.getByTestId('memory-panel').innerText()).not.toBe(at2048);
  await page.getByTestId('tab-dfg').click();

  // N as an expression of W; then a typo: the problem names N and the text stays.
  await page.getByTestId('param-value-N').fill('W / 16');
  await page.getByTestId('param-value-N').press('Enter');
  await expect(page.getByTestId('param-eval-N')).toHaveText(/= 64/);
  await noErrors(page);
  await page.getByTestId('param-value-N').fill('2 * Q');
  await page.getByTestId('param-value-N').press('Enter');
  const problem = page.getByTestId('problem').filter({ hasText: 'unknown parameter "Q"' }).first();
  // In the designer's words (the document path is the tooltip).
  await expect(problem).toContainText('parameter N (Parameters)');
  await expect(problem).toHaveAttribute('title', /params\.N/);
  await expect(page.getByTestId('param-value-N')).toHaveValue('2 * Q');
  await expect(page.getByTestId('param-eval-N')).toContainText('unknown parameter "Q"');
  await problem.click();
  await expect(page.getByTestId('param-row-N')).toHaveClass(/selected/);
  await shot(page, 'params-problem');
  // Undo: one step per edit.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('param-value-N')).toHaveValue('W / 16');
  await noErrors(page);
  await page.getByTestId('undo').click();
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('param-eval-W')).toHaveText(/= 2048/);
  await page.getByTestId('tab-ig').click();
  await expect.poll(() => page.getByTestId('memory-panel').innerText()).toBe(at2048);
  await page.getByTestId('tab-dfg').click();

  // Add and remove a parameter.
  await page.getByTestId('param-add-name').fill('K');
  await page.getByTestId('param-add').click();
  await expect(page.getByTestId('param-eval-K')).toHaveText(/= 1/);
  await page.getByTestId('param-remove-K').click();
  await expect(page.getByTestId('param-row-K')).toHaveCount(0);
  await noErrors(page);
});

test('split-join: S shows x8, its rates are in the inspector, and the expanded graph draws S#0..S#7', async ({ page }) => {
  await openExample(page, 'split-join.json', 'S');
  await noErrors(page);
  await expect(page.getByTestId('reps-S')).toHaveText('×8');
  await expect(page.getByTestId('reps-P')).toHaveCount(0);
  await page.getByTestId('dfg-node-P').locator('.kn-head').click();
  await expect(page.getByTestId('rate-out')).toHaveValue('8');
  await page.getByTestId('dfg-node-S').locator('.kn-head').click();
  await expect(page.getByTestId('inspector-repetitions')).toContainText('×8');

  // P's out at rate 4: S fires 4 times, C's input (8) no longer matches: a problem, then undo.
  await page.getByTestId('dfg-node-P').locator('.kn-head').click();
  await page.getByTestId('rate-out').fill('4');
  await page.getByTestId('rate-out').blur();
  await expect(page.getByTestId('problem').first()).toBeVisible();
  await page.getByTestId('undo').click();
  await noErrors(page);
  await expect(page.getByTestId('reps-S')).toHaveText('×8');

  await page.getByTestId('show-expanded').check();
  for (let i = 0; i < 8; i++) await expect(page.getByTestId(`firing-S#${i}`)).toBeVisible();
  await expect(page.getByTestId('firing-S#7')).toContainText('firing 8 of 8');
  await expect(page.getByTestId('expanded-summary')).toContainText('10 nodes, 16 edges');
  await expect(page.locator('.react-flow__edge')).toHaveCount(16);
  // Laid out: the producer left of every firing, the consumer right of them.
  const x = async (id: string) => (await page.getByTestId(`firing-${id}`).boundingBox())!.x;
  expect(await x('P')).toBeLessThan(await x('S#0'));
  expect(await x('S#7')).toBeLessThan(await x('C'));
  await shot(page, 'split-join-expanded');
  await page.getByTestId('show-expanded').uncheck();
  await expect(page.getByTestId('dfg-node-S')).toBeVisible();
});

test('composites: expand in place, collapse, enter with a breadcrumb, edit the def inside', async ({ page }) => {
  await openExample(page, 'composite.json', 's1');
  await noErrors(page);
  // Collapsed: one node with the composite's ports.
  await expect(page.getByTestId('handle-s1-in-in')).toBeVisible();
  await expect(page.getByTestId('handle-s1-out-out')).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);

  // Expand in place: a group holding inc and add; P's edge goes to both inner inputs the port is bound to.
  await page.getByTestId('expand-s1').click();
  await expect(page.getByTestId('dfg-group-s1')).toBeVisible();
  await expect(page.getByTestId('dfg-node-s1/inc')).toBeVisible();
  await expect(page.getByTestId('dfg-node-s1/add')).toBeVisible();
  // P -> inc.in, P -> add.b, inc -> add, add -> s2, s2 -> C.
  await expect(page.locator('.react-flow__edge')).toHaveCount(5);
  const group = (await page.getByTestId('dfg-group-s1').boundingBox())!;
  const inc = (await page.getByTestId('dfg-node-s1/inc').boundingBox())!;
  expect(inc.x).toBeGreaterThan(group.x);
  expect(inc.y).toBeGreaterThan(group.y);
  await shot(page, 'composite-expanded');
  await page.getByTestId('collapse-s1').click();
  await expect(page.getByTestId('dfg-node-s1/inc')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);

  // Enter s2 (double-click): its def's graph, the breadcrumb app > s2 (defs.stage).
  await page.getByTestId('dfg-node-s2').locator('.kn-head').dblclick();
  await expect(page.getByTestId('breadcrumb')).toContainText('app › s2');
  await expect(page.getByTestId('crumb-def')).toContainText('defs.stage');
  await expect(page.getByTestId('dfg-node-inc')).toBeVisible();
  await expect(page.getByTestId('dfg-node-add')).toBeVisible();
  // Inside s2, L is L0 + 1 = 3: the inspector shows the expression and its value.
  await page.getByTestId('dfg-node-inc').locator('.kn-head').click();
  await expect(page.getByTestId('param-nb_loop')).toHaveValue('L');
  await expect(page.getByTestId('param-nb_loop-value')).toHaveText(/= 3/);
  // An edit inside edits the def: rename add, and s1's instance follows (its mapping entry too).
  await page.getByTestId('dfg-node-add').locator('.kn-head').click();
  await page.getByTestId('inspector-id').fill('sum');
  await page.getByTestId('inspector-id').press('Enter');
  await expect(page.getByTestId('dfg-node-sum')).toBeVisible();
  await noErrors(page);
  await page.getByTestId('crumb-0').click();
  await expect(page.getByTestId('dfg-node-s1')).toBeVisible();
  await page.getByTestId('expand-s1').click();
  await expect(page.getByTestId('dfg-node-s1/sum')).toBeVisible();
  await page.getByTestId('tab-mapping').click();
  await expect(page.getByTestId('map-zone-cpu@h1').getByTestId('map-chip-s2/sum')).toBeVisible();
  await expect(page.getByTestId('map-zone-gpu0@h0').getByTestId('map-chip-s1/inc')).toBeVisible();
  await page.getByTestId('tab-dfg').click();
  // One undo each: the expansion, then the rename.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('dfg-node-s1/sum')).toHaveCount(0);
  await page.getByTestId('undo').click();
  await page.getByTestId('expand-s1').click();
  await expect(page.getByTestId('dfg-node-s1/add')).toBeVisible();
  await noErrors(page);
});

test('group two nodes, undo, redo, ungroup: one step each, the compile unchanged', async ({ page }) => {
  await openExample(page, 'piic.json', 'I1');
  await noErrors(page);
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('memory-panel')).toContainText('MiB');
  const memory = await page.getByTestId('memory-panel').innerText();
  await page.getByTestId('tab-dfg').click();

  await page.getByTestId('dfg-node-I1').locator('.kn-head').click();
  await page
    .getByTestId('dfg-node-I2')
    .locator('.kn-head')
    .click({ modifiers: ['Control'] });
  await expect(page.getByTestId('dfg-node-I1').locator('..')).toHaveClass(/selected/);
  await expect(page.getByTestId('dfg-node-I2').locator('..')).toHaveClass(/selected/);
  await page.getByTestId('group').click();
  await expect(page.getByTestId('dfg-node-group')).toBeVisible();
  await expect(page.getByTestId('dfg-node-I1')).toHaveCount(0);
  await expect(page.getByTestId('handle-group-in-in')).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(2);
  await noErrors(page);
  // The mapping kept each inner node where it was.
  await page.getByTestId('tab-mapping').click();
  await expect(page.getByTestId('map-zone-gpu0@h0').getByTestId('map-chip-group/I1')).toBeVisible();
  await page.getByTestId('tab-ig').click();
  await expect.poll(() => page.getByTestId('memory-panel').innerText()).toBe(memory);
  await page.getByTestId('tab-dfg').click();
  await shot(page, 'grouped');

  await page.getByTestId('undo').click();
  await expect(page.getByTestId('dfg-node-I1')).toBeVisible();
  await expect(page.getByTestId('dfg-node-group')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await page.getByTestId('redo').click();
  await expect(page.getByTestId('dfg-node-group')).toBeVisible();

  // Ungroup from the canvas: the nodes come back as they were.
  await page.getByTestId('dfg-node-group').locator('.kn-head').click();
  await page.getByTestId('ungroup').click();
  await expect(page.getByTestId('dfg-node-I1')).toBeVisible();
  await expect(page.getByTestId('dfg-node-I2')).toBeVisible();
  await expect(page.getByTestId('dfg-node-group')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await noErrors(page);
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('dfg-node-group')).toBeVisible();
});
