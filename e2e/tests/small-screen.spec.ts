import type { Locator, Page } from '@playwright/test';
import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// At 1280x720 the designer works: the Problems panel takes what
// its list needs, the minimap is left out where it would cover the graph, every canvas refits
// when the window is resized, the implementation graph opens fitted to its view, and cells
// cut short by an ellipsis carry their full text as a tooltip.

test.use({ viewport: { width: 1280, height: 720 } });

async function openPiic(page: Page) {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
}

/** Every element of `items` lies inside `box` (the canvas), whole. */
async function allInside(items: Locator, box: Locator) {
  const b = (await box.boundingBox())!;
  const n = await items.count();
  expect(n).toBeGreaterThan(0);
  for (let i = 0; i < n; i++) {
    const r = (await items.nth(i).boundingBox())!;
    expect(r.x, `${await items.nth(i).getAttribute('data-testid')} left`).toBeGreaterThanOrEqual(b.x - 1);
    expect(r.y, `${await items.nth(i).getAttribute('data-testid')} top`).toBeGreaterThanOrEqual(b.y - 1);
    expect(r.x + r.width, `${await items.nth(i).getAttribute('data-testid')} right`).toBeLessThanOrEqual(b.x + b.width + 1);
    expect(r.y + r.height, `${await items.nth(i).getAttribute('data-testid')} bottom`).toBeLessThanOrEqual(b.y + b.height + 1);
  }
}

test('1280x720: no minimap over the graph, Problems sized to its list, every node in view', async ({ page }) => {
  await openPiic(page);
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  await expect(page.locator('.react-flow__minimap')).toHaveCount(0);
  // No problems: the panel is its header and one line, not a fixed 150 px.
  const problemsHeight = (await page.getByTestId('problems').boundingBox())!.height;
  expect(problemsHeight).toBeLessThan(70);
  await allInside(page.locator('[data-testid^="dfg-node-"]'), page.getByTestId('dfg-canvas'));
  await shot(page, 'small-screen-dfg');

  // Many problems: the list scrolls inside a bounded panel; the canvas keeps most of the height.
  await newProject(page);
  for (let i = 0; i < 8; i++) await page.getByTestId('palette-matrix.increment').click();
  await expect(page.getByTestId('problem').nth(10)).toBeAttached();
  const h = (await page.getByTestId('problems').boundingBox())!.height;
  expect(h).toBeLessThanOrEqual(160);
  expect((await page.getByTestId('dfg-canvas').boundingBox())!.height).toBeGreaterThan(720 - 38 - 160 - 2);
});

test('canvases refit when the window is resized', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openPiic(page);
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  await page.setViewportSize({ width: 1024, height: 640 });
  // Refitted: the four nodes are in the smaller canvas, whole.
  await expect(async () => allInside(page.locator('[data-testid^="dfg-node-"]'), page.getByTestId('dfg-canvas'))).toPass({ timeout: 10_000 });
  await page.getByTestId('tab-arch').click();
  await expect(page.getByTestId('arch-pe-cpu@h0')).toBeVisible();
  await page.setViewportSize({ width: 1280, height: 720 });
  await expect(async () => allInside(page.locator('[data-testid^="arch-pe-"]'), page.getByTestId('arch-canvas'))).toPass({ timeout: 10_000 });
});

test('the implementation graph opens fitted to its view; truncated cells have tooltips', async ({ page }) => {
  await openPiic(page);
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-node-C')).toBeVisible();
  await allInside(page.locator('[data-testid^="ig-pe-"]'), page.getByTestId('ig-canvas'));
  await shot(page, 'small-screen-ig');
  // Kernel names in IG nodes and the prediction's bottleneck cells end in an ellipsis when long: their title has the whole text.
  // (A buffer node's whole box has its details as a tooltip.)
  for (const cell of await page.locator('.ig-node .ig-kernel').all()) expect(await cell.getAttribute('title')).toBe(await cell.textContent());
  const bottlenecks = page.getByTestId('phase-bottleneck');
  expect(await bottlenecks.count()).toBeGreaterThan(0);
  for (const cell of await bottlenecks.all()) expect(await cell.getAttribute('title')).toBe(await cell.textContent());
});
