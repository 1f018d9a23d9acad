import { newProject, selectNode, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Every kernel's description and every parameter's description, unit and
// range are shown in the palette (tooltip and a help panel) and in the inspector; the palette
// works from the keyboard (Tab to the items, arrow keys between them, Enter adds).

test("the palette's tooltip and help panel show each kernel's description and its params' description, unit, range and default", async ({ page }) => {
  await newProject(page);
  const inc = page.getByTestId('palette-matrix.increment');
  await expect(inc).toHaveAttribute('title', /The Fig 13 kernel/);
  await expect(inc).toHaveAttribute('title', /nb_loop: Length of the series; sets the compute load \(loops · 0 … 100000, whole number · default 5\)/);
  await expect(inc).toHaveAttribute('title', /width: Matrix width \(elements · 1 … 16384, whole number · default 1024\)/);

  // Keyboard: from the filter, Tab reaches the first item; arrows move; the help panel follows the focus.
  await page.getByTestId('palette-filter').focus();
  await page.keyboard.press('Tab');
  await expect(page.getByTestId('palette-matrix.produce')).toBeFocused();
  const help = page.getByTestId('palette-help');
  await expect(help).toContainText('Produce matrix');
  await expect(help).toContainText('Fills a width x height f32 matrix with the iteration number');
  await page.keyboard.press('ArrowDown');
  await expect(inc).toBeFocused();
  await expect(help).toContainText('Increment matrix');
  await expect(page.getByTestId('palette-help-param-nb_loop')).toContainText('loops · 0 … 100000, whole number · default 5');
  await expect(page.getByTestId('palette-help-param-nb_loop')).toContainText('Length of the series; sets the compute load');
  await expect(help).toContainText('in in');
  await expect(help).toContainText('out out');
  await shot(page, 'palette-help');

  // Enter adds the focused kernel; the arrows and Enter add another; ArrowUp from the top returns to the filter.
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('dfg-node-increment')).toBeVisible();
  await expect(inc).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('palette-matrix.consume')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('dfg-node-consume')).toBeVisible();
  await page.keyboard.press('Home');
  await expect(page.getByTestId('palette-matrix.produce')).toBeFocused();
  await page.keyboard.press('ArrowUp');
  await expect(page.getByTestId('palette-filter')).toBeFocused();
  // The filter then ArrowDown: the first match.
  await page.keyboard.type('sphere');
  await page.keyboard.press('ArrowDown');
  await expect(page.locator('.palette-item:focus')).toContainText('Sphere volume');

  // Hovering another item moves the open help panel to it.
  await page.getByTestId('palette-filter').fill('');
  await page.getByTestId('palette-matrix.add').hover();
  await expect(help).toContainText('Element-wise sum of two matrices');
  await page.getByTestId('palette-help-close').click();
  await expect(help).toHaveCount(0);
});

test("the inspector writes each param's description, unit, range and default under its field", async ({ page }) => {
  await newProject(page);
  await page.getByTestId('palette-matrix.increment').click();
  await selectNode(page, 'increment');
  await expect(page.getByTestId('param-nb_loop-doc')).toHaveText('Length of the series; sets the compute load (loops · 0 … 100000, whole number · default 5)');
  await expect(page.getByTestId('param-width-doc')).toHaveText('Matrix width (elements · 1 … 16384, whole number · default 1024)');
  await expect(page.getByTestId('param-nb_loop-doc')).toBeVisible();
  await shot(page, 'palette-inspector-docs');
});
