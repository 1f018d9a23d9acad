import { newProject, shot, pageProblems } from './helpers.js';
import { expect, test } from './fixtures.js';

// In the designer: a scan node from the palette, its eight workers ticked in order, its
// network switched from Kogge-Stone to Blelloch with the model following (figures 3.1-3.5's
// counts at p = 8), Expand drawing the DAG on a canvas, the speedup chart; no console error.

test('a scan node: eight workers, Kogge-Stone vs Blelloch in the model, Expand draws the DAG', async ({ page }) => {
  const messages = pageProblems(page);
  await newProject(page);

  // Eight PEs: seven more hosts, each with its CPU.
  await page.getByTestId('tab-arch').click();
  for (let i = 0; i < 7; i++) await page.getByTestId('add-host').click();
  await page.getByTestId('tab-dfg').click();

  // The palette's Scan entry: its defaults on the canvas, the node selected.
  await page.getByTestId('palette-scan').click();
  await expect(page.getByTestId('scan-label-scan')).toHaveText('Scan · kogge-stone · mat.mulmod');
  await expect(page.getByTestId('inspector-id')).toHaveValue('scan');
  await expect(page.getByTestId('scan-operator')).toHaveValue('mat.mulmod');
  await expect(page.getByTestId('param-k')).toHaveValue('3');

  // Its workers, ticked in order in the inspector (each tick one step; ticked PEs listed first).
  const pes = page.getByTestId('inspector-pes');
  for (let i = 0; i < 8; i++) {
    await pes.locator('input[type=checkbox]:not(:checked)').first().check();
    await expect(page.getByTestId('scan-p')).toContainText(`p = ${i + 1}`);
  }
  await expect(page.getByTestId('pe-badge-scan')).toHaveText('cpu@h0 +7');

  // Nothing feeds in yet: the model at its own N = 64. Kogge-Stone on 8 block totals: 17 applications in 3 levels.
  await expect(page.getByTestId('scan-model-n')).toHaveValue('64');
  await expect(page.getByTestId('scan-network-part')).toContainText('17 applications (17 fired) in 3 levels');
  const ks = await page.getByTestId('scan-model').textContent();
  await expect(page.getByTestId('scan-chart-current')).toBeVisible();

  // Blelloch: 14 applications, 11 fired (3 with an identity operand), 6 levels; the numbers change.
  await page.getByTestId('scan-network').selectOption('blelloch');
  await expect(page.getByTestId('scan-label-scan')).toHaveText('Scan · blelloch · mat.mulmod');
  await expect(page.getByTestId('scan-network-part')).toContainText('14 applications (11 fired) in 6 levels');
  expect(await page.getByTestId('scan-model').textContent()).not.toEqual(ks);
  await shot(page, 'scan-inspector');

  // Expand: the DAG on a canvas, labelled with what it holds, with pixels in each stage's colour.
  await page.getByTestId('scan-expand-open').click();
  const canvas = page.getByTestId('scan-figure');
  await expect(canvas).toBeVisible();
  await expect(canvas).toHaveAttribute('aria-label', /blelloch scan of 64 elements on 8 workers.*network 6 levels, \d+ applications fired, 3 free/);
  const colors = await canvas.evaluate((c: HTMLCanvasElement) => {
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const seen = { local: 0, network: 0, prop: 0, lines: 0 };
    for (let i = 0; i < d.length; i += 4) {
      const rgb = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      if (rgb === 0x2563eb) seen.local++;
      else if (rgb === 0x059669) seen.network++;
      else if (rgb === 0xd97706) seen.prop++;
      else if (rgb === 0x6b7280) seen.lines++;
    }
    return seen;
  });
  expect(colors.local).toBeGreaterThan(100);
  expect(colors.network).toBeGreaterThan(100);
  expect(colors.prop).toBeGreaterThan(100);
  expect(colors.lines).toBeGreaterThan(20);
  await shot(page, 'scan-expand');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('scan-expand')).toHaveCount(0);

  // Undo brings Kogge-Stone back, in the model and on the canvas.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('scan-label-scan')).toHaveText('Scan · kogge-stone · mat.mulmod');
  await expect(page.getByTestId('scan-network-part')).toContainText('17 applications (17 fired) in 3 levels');
  // The Problems list names what the scan still lacks: what feeds its input.
  await expect(page.getByTestId('problems')).toContainText('scan');
  expect(messages).toEqual([]);
});
