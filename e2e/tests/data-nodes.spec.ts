import { pickExample, selectNode, setField, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// Source and sink nodes (io.read, io.write) show the file their path names, as written, and
// its shape, on the canvas and in the inspector; a path without a data root is a problem on
// the node, with the fix. The designer reads no agent's disk: all of it is the document's.

test('MLEM from files: each source and the sink show their file and shape; a path without a root is a problem naming the node', async ({ page }) => {
  await page.goto('/');
  await pickExample(page, 'mlem-files.json');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  for (const [node, path, shape] of [
    ['sinogram', 'data:mlem/sinogram.npy', '36x16x16'],
    ['sensitivity', 'data:mlem/sensitivity.npy', '16x16x16'],
    ['phantom', 'data:mlem/phantom.npy', '16x16x16'],
    ['estimate', 'data:mlem/estimate.npy', '16x16x16'],
  ]) {
    await expect(page.getByTestId(`io-file-${node}`)).toContainText(path);
    await expect(page.getByTestId(`io-shape-${node}`)).toHaveText(shape);
  }
  await shot(page, 'data-nodes-mlem');

  await selectNode(page, 'sinogram');
  await expect(page.getByTestId('inspector-io-file')).toHaveText('Reads data:mlem/sinogram.npy');
  await expect(page.getByTestId('inspector-io-shape')).toHaveText('Shape 36x16x16');

  await setField(page, 'param-path', 'mlem/sinogram.npy');
  await expect(page.getByTestId('io-file-sinogram')).toContainText('mlem/sinogram.npy');
  await expect(page.getByTestId('problem-count')).toHaveText('1 error, 0 warnings');
  await expect(page.getByTestId('problem')).toContainText('source sinogram: path "mlem/sinogram.npy" names no data root');
  await expect(page.getByTestId('problem')).toContainText('write root:relative/path');
});
