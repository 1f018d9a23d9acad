import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { layeredDocument } from '../../packages/core/src/testing/generate.js';

// A design far larger than a user draws by hand: it must open, compile and show its
// implementation graph (a 2,000-node DFG is 8,000 IG elements: laid out by layering, not ELK,
// and drawn only where in view).

test('a 2,000-node design opens, compiles and draws its implementation graph', async ({ page }) => {
  const doc = layeredDocument(5, { nodes: 2000, hosts: 16, gpus: 3 });
  const path = join(tmpdir(), `pipeloom-large-${process.pid}.json`);
  writeFileSync(path, JSON.stringify(doc));
  await page.goto('/');
  await page.getByTestId('open-input').setInputFiles(path);
  await expect(page.getByTestId('doc-name')).toHaveText(doc.name);
  await expect(page.getByText(/compiled both strategies in/)).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  // Only the nodes in view are in the DOM.
  const drawn = await page.locator('.react-flow__node').count();
  expect(drawn).toBeGreaterThan(0);
  expect(drawn).toBeLessThan(2000);
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-summary')).toContainText('buffer nodes', { timeout: 60_000 });
  await expect(page.locator('[data-testid^="ig-pe-"]').first()).toBeVisible();
  expect(await page.locator('.react-flow__node').count()).toBeLessThan(8000);
});
