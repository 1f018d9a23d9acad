import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmStart, pickExample, selectNode, shot, pageProblems } from './helpers.js';
import { expect, test } from './fixtures.js';

// A project is never lost by loading another; `npm start`
// serves the production build; the designer loads every example without a console warning
// and credits React Flow.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = readdirSync(join(ROOT, 'examples'))
  .filter((f) => f.endsWith('.json'))
  .sort();

test('loading an example is one undo step; the project it replaced comes back by Undo and, after a reload, from Recent', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('dfg-node-I1')).toBeVisible();
  // An edit that exists nowhere but in this tab: I1 removed from P-I-I-C.
  await selectNode(page, 'I1');
  await page.keyboard.press('Delete');
  await expect(page.getByTestId('dfg-node-I1')).toHaveCount(0);

  await pickExample(page, 'sobel.json');
  await expect(page.getByTestId('toast-info').filter({ hasText: 'Undo (Ctrl+Z) brings back "P-I-I-C on two hosts"' })).toBeVisible();
  await expect(page.getByTestId('undo')).toBeEnabled();
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('doc-name')).toHaveText('P-I-I-C on two hosts');
  await expect(page.getByTestId('dfg-node-I2')).toBeVisible();
  await expect(page.getByTestId('dfg-node-I1')).toHaveCount(0);
  // The edit before the load is still one more undo away.
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('dfg-node-I1')).toBeVisible();
  await page.getByTestId('redo').click();
  await page.getByTestId('redo').click();
  await expect(page.getByTestId('doc-name')).toHaveText('Sobel on two hosts');

  // Undo does not survive a reload; Recent does (the autosave now holds Sobel).
  await page.reload();
  await expect(page.getByTestId('doc-name')).toHaveText('Sobel on two hosts');
  await expect(page.getByTestId('undo')).toBeDisabled();
  await page.getByTestId('recent').click();
  const entry = page.getByTestId('recent-0');
  await expect(entry).toContainText('P-I-I-C on two hosts');
  await expect(entry).toContainText('3 nodes');
  await shot(page, 'recent-menu');
  await entry.click();
  await expect(page.getByTestId('doc-name')).toHaveText('P-I-I-C on two hosts');
  await expect(page.getByTestId('dfg-node-I2')).toBeVisible();
  await expect(page.getByTestId('dfg-node-I1')).toHaveCount(0);

  // New asks, says what is true, and is undone like any load.
  const dialog = new Promise<string>((resolve) =>
    page.once('dialog', (d) => {
      resolve(d.message());
      void d.accept();
    }),
  );
  await page.getByTestId('new').click();
  expect(await dialog).toMatch(/Undo \(Ctrl\+Z\) brings this one back, and Recent keeps it after a reload/);
  await expect(page.locator('[data-testid^="dfg-node-"]')).toHaveCount(0);
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('dfg-node-I2')).toBeVisible();
});

test('Open… is one undo step too, and a file that is not a project leaves the project and the history alone', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('dfg-node-P')).toBeVisible();
  const sobel = readFileSync(join(ROOT, 'examples/sobel.json'));
  await page.getByTestId('open-input').setInputFiles({ name: 'sobel.json', mimeType: 'application/json', buffer: sobel });
  await expect(page.getByTestId('doc-name')).toHaveText('Sobel on two hosts');
  await page.getByTestId('open-input').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "pipeloom/v9"}') });
  await expect(page.getByTestId('toast-error').filter({ hasText: 'Cannot open bad.json' })).toBeVisible();
  await expect(page.getByTestId('undo')).toHaveAttribute('title', /open sobel\.json/);
  await page.getByTestId('undo').click();
  await expect(page.getByTestId('doc-name')).toHaveText('P-I-I-C on two hosts');
});

test('every example loads without a console warning or error, on every view, and React Flow is credited', async ({ page }) => {
  const messages = pageProblems(page);
  await page.goto('/');
  await expect(page.locator('[data-testid^="dfg-node-"]').first()).toBeVisible();
  expect(EXAMPLES.length).toBeGreaterThan(5);
  for (const file of EXAMPLES) {
    await pickExample(page, file);
    await expect(page.locator('[data-testid^="dfg-node-"]').first()).toBeVisible();
    await page.getByTestId('tab-arch').click();
    await expect(page.locator('[data-testid^="arch-pe-"]').first()).toBeVisible();
    await page.getByTestId('tab-mapping').click();
    await expect(page.locator('[data-testid^="dfg-node-"]').first()).toBeVisible();
    await page.getByTestId('tab-ig').click();
    // Sobel's kernels come from a package an agent loads: without one the IG view says why.
    await expect(
      page
        .locator('[data-testid^="ig-pe-"]')
        .first()
        .or(page.getByText(/fix them to see the implementation graph/)),
    ).toBeVisible();
    // React Flow's own check (dev builds warn when it fails): an attribution visible in the page.
    await expect(page.locator('.react-flow__attribution')).toBeVisible();
    await page.getByTestId('tab-run').click();
    await expect(page.getByTestId('run-view')).toBeVisible();
    await page.getByTestId('tab-dfg').click();
    expect(messages, `after ${file}`).toEqual([]);
  }
  await expect(page.getByTestId('attribution')).toHaveAttribute('href', 'https://reactflow.dev');
  // The licences of the bundled libraries travel with the build.
  const licences = await page.request.get((await page.getByTestId('licenses').getAttribute('href')) ?? '');
  expect(licences.ok()).toBe(true);
  expect(await licences.text()).toContain('@xyflow/react');
});

test('`npm start` serves the production build: a handful of requests, no dev server, the first node without a reload', async ({ page }) => {
  const started = await npmStart();
  try {
    const { url } = started;
    expect(started.log()).toContain('as a production build');
    const requests: string[] = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    // Documents loaded: the page taking the token out of its address (history.replaceState) is no load.
    let navigations = 0;
    page.on('domcontentloaded', () => navigations++);
    await page.goto(url);
    await expect(page.locator('[data-testid^="dfg-node-"]').first()).toBeVisible();
    await expect(page.getByTestId('problem-count')).toBeVisible();
    // The dev server's marks: its client, modules by source path, the optimised deps.
    expect(requests.filter((p) => /^\/(@vite|@fs|@react-refresh|src|node_modules)\b/.test(p))).toEqual([]);
    expect(requests.length).toBeLessThan(20);
    expect(navigations).toBe(1);
    // The printed URL hands the local agents to the Run view.
    await page.getByTestId('tab-run').click();
    await expect(page.getByTestId('run-urls')).toHaveValue(/^ws:\/\/127\.0\.0\.1:\d+, ?ws:\/\/127\.0\.0\.1:\d+$/);
  } finally {
    await started.stop();
  }
});
