import { addPiicNodes, connect, connectPiic, mouseDrag, newProject, selectNode, setField, setPiicParams, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Builds P-I-I-C from the palette by UI actions, maps it onto two hosts and reads the
// implementation graph, the way a user does it.

test('build P-I-I-C from the palette, map it on two hosts, see the implementation graph', async ({ page }) => {
  await newProject(page);

  // Palette: drag the producer onto the canvas, click to add the others beside it; params are
  // edited in the inspector with units and ranges.
  await addPiicNodes(page, { x: 160, y: 200 });
  await setPiicParams(page);
  // Out of range: shown inline, not committed.
  await selectNode(page, 'increment');
  await page.getByTestId('param-width').fill('0');
  await expect(page.getByTestId('param-width-error')).toContainText('at least 1');
  await page.getByTestId('param-width').fill('64');
  await page.getByTestId('param-width').blur();
  await connectPiic(page);
  // Tidy lays the chain out left to right.
  await page.getByTestId('tidy').click();
  await expect(async () => {
    const xs = await Promise.all(
      ['produce', 'increment', 'increment2', 'consume'].map(async (id) => (await page.getByTestId(`dfg-node-${id}`).boundingBox())!.x),
    );
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
  }).toPass();

  // A connection whose types differ is refused with the reason.
  await page.getByTestId('palette-matrix.produce').click();
  // Added beside the tidied chain, maybe past the canvas's edge: fitted into view first.
  await page.locator('.react-flow__controls-fitview').click();
  await selectNode(page, 'produce2');
  await setField(page, 'param-width', '32');
  await page.getByTestId('palette-filter').click();
  await connect(page, 'produce2.out', 'consume.in');
  await expect(page.getByTestId('toast-error').filter({ hasText: 'already fed' })).toBeVisible();
  await page.getByTestId('palette-matrix.increment').click();
  await page.locator('.react-flow__controls-fitview').click();
  await connect(page, 'produce2.out', 'increment3.in');
  await expect(page.getByTestId('toast-error').filter({ hasText: 'type mismatch' })).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  // Undo the two extra nodes (and the param edit in between): one step each.
  await page.locator('.react-flow__pane').click();
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('dfg-node-produce2')).toHaveCount(0);
  await expect(page.getByTestId('dfg-node-increment3')).toHaveCount(0);
  await shot(page, 'design-1-dfg');

  // Architecture: a second host, a network link between the two CPUs.
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('add-host').click();
  await expect(page.getByTestId('arch-pe-cpu@h1')).toBeVisible();
  await page.locator('.react-flow__controls-fitview').click();
  await mouseDrag(
    page,
    page.getByTestId('arch-pe-cpu@h0').locator('.react-flow__handle-right'),
    page.getByTestId('arch-pe-cpu@h1').locator('.react-flow__handle-left'),
  );
  await expect(page.locator('.react-flow__edge')).toHaveCount(1);
  await expect(page.getByTestId('inspector-link-kind')).toHaveValue('ethernet');
  await page.getByTestId('inspector-link-kind').selectOption('infiniband');
  await setField(page, 'inspector-bandwidth', '2.6');
  await expect(page.locator('.react-flow__edge-text')).toContainText('infiniband · 2.60 GB/s');
  await shot(page, 'design-2-arch');

  // Mapping: drag a chip onto a PE, pick the rest on the nodes.
  await page.getByTestId('tab-mapping').click();
  await page.getByTestId('map-chip-produce').dragTo(page.getByTestId('map-zone-cpu@h0'));
  await expect(page.getByTestId('map-zone-cpu@h0').getByTestId('map-chip-produce')).toBeVisible();
  await page.getByTestId('map-pick-increment').selectOption('cpu@h0');
  await page.getByTestId('map-pick-increment2').selectOption('cpu@h1');
  // The last one left unmapped: the problem names it, and clicking it selects its mapping entry.
  const problem = page.getByTestId('problem').filter({ hasText: 'consume' }).first();
  await expect(problem).toContainText('not mapped');
  await page.getByTestId('tab-dfg').click();
  await problem.click();
  await expect(page.getByTestId('app')).toHaveAttribute('data-view', 'mapping');
  await page.getByTestId('inspector-pe').selectOption('cpu@h1');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  await expect(page.getByTestId('dfg-node-consume')).toHaveCSS('border-left-color', 'rgb(245, 158, 11)');
  await shot(page, 'design-3-mapping');

  // Implementation graph: computations labelled (schedule, latency), buffers with depth badges.
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-node-produce')).toContainText('produce (0, 0)');
  await expect(page.getByTestId('ig-node-consume')).toContainText(/consume \(3, \d+\)/);
  await expect(page.locator('[data-testid^="ig-buffer-"]').first()).toBeVisible();
  const doubles = await page.locator('.depth.double').count();
  expect(doubles).toBeGreaterThan(0);
  await expect(page.getByTestId('mem-cpu@h0')).toBeVisible();
  await page.locator('[data-testid^="ig-buffer-"]').first().click();
  await expect(page.getByTestId('buffer-details')).toContainText('matrix<f32>[64x64]');
  await shot(page, 'design-4-ig-overlap');
  // The toggle flips at once: both strategies are precomputed.
  await page.getByTestId('overlap-off').click();
  await expect(page.locator('.depth.double')).toHaveCount(0);
  await expect(page.getByTestId('ig-summary')).toContainText('without overlap');
  await shot(page, 'design-5-ig-no-overlap');
  await page.getByTestId('overlap-on').click();
  await expect(page.locator('.depth.double')).toHaveCount(doubles);

  // One history across graphs: the two overlap flips (options), then the mapping edit.
  for (let i = 0; i < 3; i++) await page.getByTestId('undo').click();
  await expect(page.getByTestId('problem').filter({ hasText: 'consume' }).first()).toContainText('not mapped');
  for (let i = 0; i < 3; i++) await page.getByTestId('redo').click();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // Autosave: a reload brings the project back (once the autosave holds the redone mapping).
  const autosaved = () => page.evaluate(() => JSON.parse(localStorage.getItem('pipeloom.autosave.v1') ?? '{}').mapping?.consume);
  await expect.poll(autosaved).toBe('cpu@h1');
  await page.reload();
  await expect(page.getByTestId('dfg-node-increment2')).toBeVisible();
  await page.getByTestId('tab-arch').click();
  await expect(page.getByTestId('arch-pe-cpu@h1')).toBeVisible();
});

test('examples menu loads the paper pipelines and a problem click selects the element', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  // Make a type mismatch: the edge P -> I1 gets a problem; clicking it selects the edge.
  await selectNode(page, 'I1');
  await setField(page, 'param-width', '1000');
  const problem = page.getByTestId('problem').filter({ hasText: 'type mismatch' }).first();
  await expect(problem).toBeVisible();
  await page.getByTestId('tab-ig').click();
  await problem.click();
  await expect(page.getByTestId('app')).toHaveAttribute('data-view', 'dfg');
  await expect(page.getByTestId('inspector')).toContainText('DFG edge');
  await shot(page, 'examples-problem');
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
});

test('save downloads the project and open reads it back', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('save').click()]);
  expect(download.suggestedFilename()).toMatch(/\.json$/);
  const path = await download.path();
  // Start over, then open the saved file.
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('new').click();
  await expect(page.getByTestId('dfg-node-P')).toHaveCount(0);
  await page.getByTestId('open-input').setInputFiles(path);
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  await expect(page.getByTestId('doc-name')).toHaveText('P-I-I-C on two hosts');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  // A file that is not a project is refused with a reason, leaving the project alone.
  await page.getByTestId('open-input').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "pipeloom/v9"}') });
  await expect(page.getByTestId('toast-error').filter({ hasText: 'Cannot open bad.json' })).toBeVisible();
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
});

test('the Delete key removes a node with its edges, a host with its PEs and links; one undo each', async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await page.getByTestId('dfg-node-I1').locator('.kn-head').click();
  await page.keyboard.press('Delete');
  await expect(page.getByTestId('dfg-node-I1')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(1);
  await expect(page.getByTestId('toast-error')).toHaveCount(0);
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('dfg-node-I1')).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);

  await page.getByTestId('tab-arch').click();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await page.getByTestId('arch-host-h1').locator('.host-head').click();
  await page.keyboard.press('Delete');
  await expect(page.getByTestId('arch-host-h1')).toHaveCount(0);
  await expect(page.getByTestId('arch-pe-cpu@h1')).toHaveCount(0);
  await expect(page.locator('.react-flow__edge')).toHaveCount(1);
  await expect(page.getByTestId('toast-error')).toHaveCount(0);
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('arch-pe-gpu0@h1')).toBeVisible();
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
});
