import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// The Run view against real agents: results tied to the
// document revision they ran, measured against predicted per cycle and lane, Calibrate on the
// connected agents, the estimate before Start, the outcome at the top at 1280x720; the
// timeline's flow arrows and range statistics; one strategy, the document's, never recompiled
// to flip.

test.use({ viewport: { width: 1280, height: 720 } });

/** examples/piic.json at 64x64, nb_loop 5, 10 iterations: a run of a few seconds on llvmpipe. */
function smallPiic(name = 'P-I-I-C small'): Buffer {
  const doc = JSON.parse(readFileSync(new URL('../../examples/piic.json', import.meta.url), 'utf8'));
  doc.name = name;
  doc.params.W.value = 64;
  doc.params.H.value = 64;
  doc.params.N.value = 5;
  doc.app.nodes.find((n: { id: string }) => n.id === 'C').params.increments = '5,5';
  doc.options.iterations = 10;
  return Buffer.from(JSON.stringify(doc));
}

async function open(page: Page, name: string) {
  await page.getByTestId('open-input').setInputFiles({ name: `${name}.json`, mimeType: 'application/json', buffer: smallPiic(name) });
  await expect(page.getByTestId('doc-name')).toHaveText(name);
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
}

async function toRun(page: Page) {
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
}

async function runOnce(page: Page) {
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 90_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
}

test.beforeEach(async ({ page, agents }) => {
  // Opening a project over a modified one may ask first: yes.
  page.on('dialog', (d) => void d.accept());
  await page.goto(`/${agents.query}`);
  await expect(page.getByTestId('app')).toBeVisible();
});

test('Calibrate measures the agents; the estimate, measured/predicted per cycle and lane, and the outcome at the top; flows and range statistics on the timeline', async ({
  page,
}) => {
  await open(page, 'piic-calibrate');
  await toRun(page);

  // Before Start: how long the run should take, from the cost hints.
  const estimate = page.getByTestId('run-estimate');
  await expect(estimate).toContainText('for 10 iterations (cost hints)');
  expect(Number(await estimate.getAttribute('data-seconds'))).toBeGreaterThan(0);

  // Calibrate: both strategies run on the agents; the plan is then drawn from their times.
  await page.getByTestId('run-calibrate').click();
  await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-state', 'calibrating');
  await expect(page.getByTestId('run-calibrated')).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId('run-predicted-source')).toHaveValue('calibration');
  await expect(estimate).toContainText('(calibrated)');
  await expect(page.getByTestId('run-calibrate-error')).toHaveCount(0);

  await runOnce(page);
  // The outcome stays at the top of a 1280x720 window, not below the fold.
  const outcome = page.getByTestId('run-outcome');
  await expect(outcome).toHaveAttribute('data-state', 'passed');
  await expect(outcome.getByTestId('run-check')).toContainText('Checks passed');
  const box = (await outcome.boundingBox())!;
  expect(box.y + box.height).toBeLessThan(720 / 2);

  // Measured against predicted: the cycle and every lane that ran, each with its ratio.
  const cycle = page.getByTestId('run-compare-cycle');
  await expect(cycle).toBeVisible();
  expect(Number(await cycle.getAttribute('data-ratio'))).toBeGreaterThan(0);
  const lanes = page.getByTestId('run-compare-lane');
  const keys = await lanes.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-lane')));
  for (const k of ['h0/cpu@h0/main', 'h0/gpu0@h0/main', 'h1/gpu0@h1/main', 'h1/cpu@h1/main']) expect(keys).toContain(k);
  const ratios = await lanes.evaluateAll((rows) =>
    rows
      .map((r) => r.getAttribute('data-ratio'))
      .filter((v) => v !== null)
      .map(Number),
  );
  expect(ratios.length).toBeGreaterThanOrEqual(4);
  for (const r of ratios) expect(r).toBeGreaterThan(0);
  await shot(page, 'run-view-1-compare');

  // Flow arrows: each visible transfer points at the firing that reads its data.
  const canvas = page.getByTestId('timeline-canvas');
  await page.getByTestId('timeline-flows').check();
  await expect.poll(async () => Number(await canvas.getAttribute('data-flows'))).toBeGreaterThan(0);

  // A range dragged on the ruler: busy share per lane, events, mean cycle.
  const c = (await canvas.boundingBox())!;
  await page.mouse.move(c.x + 196 + (c.width - 196) * 0.2, c.y + 10);
  await page.mouse.down();
  await page.mouse.move(c.x + 196 + (c.width - 196) * 0.5, c.y + 10, { steps: 4 });
  await page.mouse.move(c.x + 196 + (c.width - 196) * 0.8, c.y + 10, { steps: 4 });
  await page.mouse.up();
  const range = page.getByTestId('timeline-range');
  await expect(range).toBeVisible();
  expect(Number(await range.getAttribute('data-events'))).toBeGreaterThan(0);
  expect(Number(await range.getAttribute('data-cycles'))).toBeGreaterThan(1);
  await expect(page.getByTestId('timeline-range-cycle')).toContainText('mean cycle');
  const shares = await page.getByTestId('timeline-range-lane').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-share'))));
  expect(shares.length).toBeGreaterThanOrEqual(4);
  expect(shares.some((s) => s > 0)).toBe(true);
  for (const s of shares) expect(s).toBeLessThanOrEqual(1);
  // The counter kind is a switch of its own.
  await page.getByTestId('timeline-in-flight').check();
  await shot(page, 'run-view-2-timeline');
  await page.getByTestId('timeline-range-clear').click();
  await expect(range).toHaveCount(0);
});

test("results belong to the revision they ran: an edit marks them modified since deploy, opening another project clears them; the strategy is the document's and flipping it compiles nothing", async ({
  page,
}) => {
  await open(page, 'piic-revision');
  await toRun(page);
  await runOnce(page);
  const fresh = page.getByTestId('run-freshness');
  await expect(fresh).toHaveAttribute('data-state', 'current');

  // One strategy: the Run view's checkbox is the document's options.overlap. Flipping it swaps
  // the compiled pair: the compile result is of the new revision at once, with no compile run.
  const view = page.getByTestId('run-view');
  const compiles = await view.getAttribute('data-compiles');
  await page.getByTestId('run-overlap').uncheck();
  await expect(fresh).toHaveAttribute('data-state', 'modified');
  await expect(fresh).toContainText('modified since deploy');
  const revision = await view.getAttribute('data-revision');
  await expect(view).toHaveAttribute('data-compiled-revision', revision!);
  expect(await view.getAttribute('data-compiles')).toBe(compiles);
  // The results stay, dimmed, marked of the earlier revision.
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');
  await page.getByTestId('tab-ig').click();
  await expect(page.getByTestId('ig-summary')).toContainText('without overlap');
  await expect(page.getByTestId('overlap-off')).toHaveClass(/on/);
  await page.getByTestId('tab-dfg').click();
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('option-overlap')).not.toBeChecked();
  // An edit the compiler sees does compile (the control for the count above).
  await page.getByTestId('project-name').fill('piic-renamed');
  await page.getByTestId('project-name').blur();
  await page.getByTestId('tab-run').click();
  await expect.poll(async () => Number(await view.getAttribute('data-compiles'))).toBeGreaterThan(Number(compiles));
  await expect(page.getByTestId('run-overlap')).not.toBeChecked();
  await expect(fresh).toHaveAttribute('data-state', 'modified');

  // Deploy checks the document as it is: current again.
  await page.getByTestId('run-deploy').click();
  await expect(fresh).toHaveAttribute('data-state', 'current');
  await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-state', 'checked');
  await expect(page.getByTestId('run-check')).toHaveCount(0);
  await shot(page, 'run-view-3-modified');

  // Run again, then open another project: its results are not this one's.
  await runOnce(page);
  await page.getByTestId('tab-dfg').click();
  await open(page, 'piic-other');
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-state', 'none');
  await expect(page.getByTestId('run-check')).toHaveCount(0);
  await expect(fresh).toHaveCount(0);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'idle');
  await expect(page.getByTestId('timeline-canvas')).toHaveAttribute('data-events', '0');
  await expect(page.getByTestId('run-compare')).toHaveCount(0);
});

test('at 1280x720 the agent list folds away so Live stays in view; a deploy problem names the agent URLs field, not a CLI flag', async ({ page, agents }) => {
  await open(page, 'P-I-I-C small');
  await toRun(page);
  await expect(page.getByTestId('run-agent-h0')).toBeVisible();
  await page.getByTestId('run-agents').locator('summary').click();
  await expect(page.getByTestId('run-agent-h0')).toBeHidden();
  await expect(page.getByTestId('run-agents').locator('summary')).toHaveText('2 agents: h0, h1');
  // A host no connected agent serves: the problem says where to add its URL in the designer.
  await page.getByTestId('run-urls').fill(agents.urls[0]);
  await page.getByTestId('run-connect').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('run-deploy').click();
  const problems = page.getByTestId('run-problems');
  await expect(problems).toContainText('no agent serves host h1');
  await expect(problems).toContainText("the Run view's agent URLs field");
  await expect(problems).not.toContainText('--agents');
});
