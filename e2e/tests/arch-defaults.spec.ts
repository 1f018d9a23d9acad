import { mouseDrag, newProject, setField, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Adding a GPU to a host adds its PCIe link; switching a link's kind sets
// that kind's typical bandwidth and latency, except a value the user edited.

test('+ GPU adds the GPU with its PCIe link to the host CPU, one undo step', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('arch-host-h0').click({ position: { x: 30, y: 10 } });
  await page.getByTestId('add-gpu').click();
  await expect(page.getByTestId('arch-pe-gpu0@h0')).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(1);
  await expect(page.locator('.react-flow__edge-text')).toContainText('pcie · 12 GB/s · 10 µs');
  await shot(page, 'arch-defaults-gpu');
  await page.locator('.react-flow__pane').click();
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('arch-pe-gpu0@h0')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(0);
});

test("a link's new kind brings its typical bandwidth and latency, except a value the user edited", async ({ page }) => {
  await newProject(page);
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('add-host').click();
  await expect(page.getByTestId('arch-pe-cpu@h1')).toBeVisible();
  await page.locator('.react-flow__controls-fitview').click();
  await mouseDrag(
    page,
    page.getByTestId('arch-pe-cpu@h0').locator('.react-flow__handle-right'),
    page.getByTestId('arch-pe-cpu@h1').locator('.react-flow__handle-left'),
  );
  await expect(page.getByTestId('inspector-link-kind')).toHaveValue('ethernet');
  await expect(page.getByTestId('inspector-bandwidth')).toHaveValue('1.25');
  await expect(page.getByTestId('inspector-latency')).toHaveValue('50');
  // Not edited: both follow the kind.
  await page.getByTestId('inspector-link-kind').selectOption('infiniband');
  await expect(page.getByTestId('inspector-bandwidth')).toHaveValue('3.2');
  await expect(page.getByTestId('inspector-latency')).toHaveValue('5');
  // The bandwidth edited: it stays; the latency follows.
  await setField(page, 'inspector-bandwidth', '2.6');
  await page.getByTestId('inspector-link-kind').selectOption('ethernet');
  await expect(page.getByTestId('inspector-bandwidth')).toHaveValue('2.6');
  await expect(page.getByTestId('inspector-latency')).toHaveValue('50');
  await expect(page.locator('.react-flow__edge-text')).toContainText('ethernet · 2.60 GB/s');
});
