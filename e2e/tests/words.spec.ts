import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// The Problems list and the inspector speak the designer's words: the
// element and its view ("node produce (Application) is not mapped to a PE") and what to do in
// the designer, never a JSON path (`app.nodes[1]`) or a fix for the document's text
// (`add "produce": "<PE id>" to mapping`). The path stays as the tooltip.

test('problems name the element and its view, and the fix in the designer', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('palette-matrix.produce').click();
  await page.getByTestId('palette-matrix.consume').click();
  const unmapped = page.getByTestId('problem').filter({ hasText: 'node produce (Application) is not mapped to a PE' });
  await expect(unmapped).toContainText('drag produce onto a PE in the Mapping view, or pick its PE on the node or in the inspector');
  await expect(unmapped).toHaveAttribute('title', /In the document: mapping$/);
  await expect(page.getByTestId('problem').filter({ hasText: 'node consume (Application): input port "in" of node consume is not connected' })).toHaveCount(1);

  const texts = await page.getByTestId('problem').allInnerTexts();
  expect(texts.length).toBeGreaterThan(1);
  for (const t of texts) {
    expect(t).not.toMatch(/app\.(nodes|edges)\[|<PE id>|to mapping\b|arch\.pes/);
  }
  // Clicking selects the element; the inspector repeats its problems in the same words.
  await unmapped.click();
  await expect(page.getByTestId('app')).toHaveAttribute('data-view', 'mapping');
  await expect(page.locator('.insp-problems')).toContainText('node produce (Application) is not mapped to a PE');
  await shot(page, 'words-problems');
});
