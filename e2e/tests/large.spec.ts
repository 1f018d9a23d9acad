import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layeredDocument } from '@pipeloom/core/testing';
import { expect, test } from './fixtures.js';

// A design far larger than a user draws by hand: it must open, compile and show its
// implementation graph (a 2,100-node DFG is 8,600 IG elements: laid out by layering, not ELK,
// and drawn only where in view, without a minimap, with a PE's colours cut to 24 chips); its
// DFG is drawn only where in view from the first frame.

test('a 2,100-node design opens, compiles and draws its implementation graph', async ({ page }) => {
  const doc = layeredDocument(5, { nodes: 2100, hosts: 16, gpus: 3 });
  const path = join(tmpdir(), `pipeloom-large-${process.pid}.json`);
  writeFileSync(path, JSON.stringify(doc));
  await page.goto('/');
  // The most DFG nodes ever in the page while the file opens: nodes state their size and
  // handles until measured, so React Flow draws those in view, not all of them once to measure.
  await page.evaluate(() => {
    const w = window as unknown as { mostKernelNodes: number };
    w.mostKernelNodes = 0;
    new MutationObserver(() => {
      w.mostKernelNodes = Math.max(w.mostKernelNodes, document.querySelectorAll('.react-flow__node-kernel').length);
    }).observe(document.body, { childList: true, subtree: true });
  });
  await page.getByTestId('open-input').setInputFiles(path);
  await expect(page.getByTestId('doc-name')).toHaveText(doc.name);
  await expect(page.getByText(/compiled both strategies in/)).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  // Only the nodes in view are in the DOM, and never were more.
  const drawn = await page.locator('.react-flow__node').count();
  expect(drawn).toBeGreaterThan(0);
  expect(drawn).toBeLessThan(2100);
  expect(await page.evaluate(() => (window as unknown as { mostKernelNodes: number }).mostKernelNodes)).toBeLessThan(500);
  // Edges between drawn nodes are drawn.
  expect(await page.locator('.react-flow__edge').count()).toBeGreaterThan(0);
  await expect(page.locator('.react-flow__minimap')).toHaveCount(0);
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-summary')).toContainText('buffer nodes', { timeout: 60_000 });
  await expect(page.locator('[data-testid^="ig-pe-"]').first()).toBeVisible();
  expect(await page.locator('.react-flow__node').count()).toBeLessThan(8000);
  // A relay CPU holds hundreds of colours: 24 chips and a count of the rest.
  await expect(page.locator('[data-testid^="mem-more-"]').first()).toBeVisible();
  const chips = await page.locator('[data-testid="memory-panel"] .colors').evaluateAll((rows) => rows.map((r) => r.querySelectorAll('.color-chip').length));
  expect(Math.max(...chips)).toBe(24);
});

test('a small design keeps its minimap', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  await expect(page.locator('.react-flow__minimap')).toHaveCount(1);
});
