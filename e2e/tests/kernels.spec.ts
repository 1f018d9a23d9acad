import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startAgents, type LocalAgents } from './agents.js';
import { newProject, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// A kernel package in a temporary folder, loaded by a real `pipeloom agent --kernels`: its
// kernels reach the designer's palette (grouped under the package, with docs and the agent
// that has them) when the agent is added, and can be placed with the ports their params give.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir: string;
let pkg: string;
let agents: LocalAgents;

test.beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pipeloom-e2e-kernels-'));
  mkdirSync(join(dir, 'node_modules/@pipeloom'), { recursive: true });
  symlinkSync(join(ROOT, 'packages/kernels'), join(dir, 'node_modules/@pipeloom/kernels'));
  pkg = join(dir, 'image');
  cpSync(join(ROOT, 'examples/kernels/image'), pkg, { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
  agents = await startAgents(['h1'], undefined, ['--kernels', pkg]);
});
test.afterAll(async () => {
  await agents?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("an agent's kernel package shows in the palette, grouped by package with its docs, and its kernels can be placed", async ({ page }) => {
  await newProject(page);
  await page.goto(`/${agents.query}`);
  await expect(page.getByTestId(`palette-package-${pkg}`)).toHaveCount(0);
  await page.getByTestId('tab-arch').click();
  await page.getByTestId('agent-add').click();
  await expect(page.getByTestId('agent-status')).toContainText('h1:', { timeout: 20_000 });
  await page.getByTestId('tab-dfg').click();
  const group = page.getByTestId(`palette-package-${pkg}`);
  await expect(group).toContainText(`Package ${pkg}`);
  for (const id of ['image.read', 'image.sobel', 'image.magnitude', 'image.display']) await expect(group.getByTestId(`palette-${id}`)).toBeVisible();
  await expect(page.getByTestId('palette-doc-image.read')).toContainText('1.0.0 · on h1 1.0.0 · A synthetic YUV 4:2:0 video frame');
  await expect(page.getByTestId('palette-image.read')).toHaveAttribute('title', /out u: Chroma Cb/);
  // Built-ins stay in their categories.
  await expect(page.getByTestId('palette-matrix.add')).toBeVisible();
  // Placed from the palette: the reader's three outputs, the display's three variadic inputs.
  await page.getByTestId('palette-image.read').click();
  await page.getByTestId('palette-image.display').click();
  for (const port of ['y', 'u', 'v']) await expect(page.getByTestId(`handle-read-out-${port}`)).toBeAttached();
  for (const port of ['in0', 'in1', 'in2']) await expect(page.getByTestId(`handle-display-in-${port}`)).toBeAttached();
  await shot(page, 'kernels-agent-package');
});

test("a checker's expectation is derived from the graph upstream, shown in the inspector, and overridable", async ({ page }) => {
  await page.goto('/');
  await page.getByTestId('examples').click();
  await page.getByTestId('example-piic.json').click();
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
  await page.getByTestId('dfg-node-C').locator('.kn-head').click();
  // The example states its increments: the override.
  await expect(page.getByTestId('inspector-expectation')).toContainText(
    'Expects increments = "100,100", expected_offset = 0, scale = 1, running_sum = 0 (as set here)',
  );
  await page.getByTestId('inspector-derive').click();
  // P -> I1 (+1) -> I2 (+1) -> C: iteration + 2, derived.
  await expect(page.getByTestId('inspector-expectation')).toContainText(
    'Expects increments = "", expected_offset = 2, scale = 1, running_sum = 0 (derived from the graph upstream; set a param to override)',
  );
  // Setting one param overrides the derivation again.
  await page.getByTestId('param-expected_offset').fill('3');
  await page.getByTestId('param-expected_offset').blur();
  await expect(page.getByTestId('inspector-expectation')).toContainText('expected_offset = 3, scale = 1, running_sum = 0 (as set here)');
  await shot(page, 'kernels-derived-expectation');
});
