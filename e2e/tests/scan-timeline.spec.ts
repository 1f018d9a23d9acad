import { pageProblems, selectNode, shot } from './helpers.js';
import { expect, test } from './fixtures.js';

// The scan's predictor view in the designer: examples/scan-mulmod.json (64 3 x 3 matrices,
// Kogge-Stone on four workers over two hosts) run on two real agents from the Run view; the
// scan timeline, opened there and from the inspector, draws its three bands ((a) simulated at
// the cost calibrated from the run, (b) replaying the run's node times, (c) the measured fires)
// with a lane per worker; the speedup chart has the run's measured point at p = 4.

const BANDS = ['mean', 'replay', 'measured'];

test('scan-mulmod runs on real agents; the scan timeline shows three bands of four worker lanes, the chart the measured point', async ({ page, agents }) => {
  const messages = pageProblems(page);
  page.on('dialog', (d) => void d.accept());
  await page.goto(`/${agents.query}`);
  await page.getByTestId('examples').click();
  await page.getByTestId('example-scan-mulmod.json').click();
  await expect(page.getByTestId('doc-name')).toHaveText('Scan: matrix products mod 65521');
  await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');

  // Before a run: (a) alone, from the operator's cost hint, and what a run would add.
  await selectNode(page, 'scan1');
  await page.getByTestId('scan-timeline-open').click();
  await expect(page.getByTestId('scan-timeline')).toHaveAttribute('data-bands', '1');
  await expect(page.getByTestId('scan-band-mean')).toHaveAttribute('data-lanes', '4');
  await expect(page.getByTestId('scan-makespan-mean')).toContainText("the operator's cost hint");
  await expect(page.getByTestId('scan-timeline-note')).toContainText('No run of the document as it is yet');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('scan-timeline')).toHaveCount(0);
  await expect(page.getByTestId('scan-chart-measured')).toHaveCount(0);

  // The run: every prefix checked by scan.check.
  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-check')).toHaveAttribute('data-result', 'passed');

  // From the Run view: three bands on one axis, each with a lane per worker.
  await page.getByTestId('run-scan-timeline-scan1').click();
  const view = page.getByTestId('scan-timeline');
  await expect(view).toHaveAttribute('data-bands', '3');
  for (const b of BANDS) {
    await expect(page.getByTestId(`scan-band-${b}`)).toHaveAttribute('data-lanes', '4');
    for (let w = 0; w < 4; w++) await expect(page.getByTestId(`scan-lane-${b}-${w}`)).toHaveCount(1);
    expect(Number(await page.getByTestId(`scan-makespan-${b}`).getAttribute('data-seconds'))).toBeGreaterThan(0);
  }
  await expect(page.getByTestId('scan-makespan-mean')).toContainText('calibrated from the last run');
  // The simulations send values between the two hosts' PEs over the example's links (PCIe, Ethernet).
  await expect(page.getByTestId('scan-timeline-messages')).toHaveAttribute('data-element-bytes', '44');
  await expect(page.getByTestId('scan-timeline-messages')).toContainText('one element of 44 B');
  // Every worker's local scan measured on its own lane; the network's applications (Kogge-Stone: workers 1-3) and second stages too.
  for (let w = 0; w < 4; w++) await expect(page.getByTestId(`scan-lane-measured-${w}`).locator(`rect[data-node="local.w${w}"]`)).toHaveCount(1);
  await expect(page.getByTestId('scan-lane-measured-3').locator('rect[data-kind="network"]')).not.toHaveCount(0);
  await expect(page.getByTestId('scan-lane-measured-3').locator('rect[data-node="prop.w3"]')).toHaveCount(1);
  // The simulations outline their critical path, and it reaches the band's end (the makespan). Which
  // node ends it depends on the run: a GPU worker's fires of one batch count from when the one
  // before ended, so its second stage may take no time of its own and draw no rect.
  const ends = await page.getByTestId('scan-band-replay').evaluate((band) => {
    const right = (r: Element) => Number(r.getAttribute('x')) + Number(r.getAttribute('width'));
    const slices = [...band.querySelectorAll('rect[data-node]')];
    const critical = slices.filter((r) => r.hasAttribute('data-critical'));
    return { critical: critical.length, path: Math.max(...critical.map(right)), band: Math.max(...slices.map(right)) };
  });
  expect(ends.critical).toBeGreaterThan(0);
  // Within a pixel or so: slices are drawn with a minimum width.
  expect(Math.abs(ends.path - ends.band)).toBeLessThanOrEqual(1.5);
  await shot(page, 'scan-timeline');
  await page.getByTestId('scan-timeline-close').click();
  await expect(view).toHaveCount(0);

  // The inspector: the measured point at p = 4 on the chart, the same timeline behind its button.
  await page.getByTestId('tab-dfg').click();
  await selectNode(page, 'scan1');
  const point = page.getByTestId('scan-chart-measured');
  await expect(point).toHaveCount(1);
  await expect(point).toHaveAttribute('data-p', '4');
  await expect(page.getByTestId('scan-measured')).toContainText('at p = 4');
  await page.getByTestId('scan-timeline-open').click();
  await expect(page.getByTestId('scan-timeline')).toHaveAttribute('data-bands', '3');
  await shot(page, 'scan-timeline-inspector');
  await page.keyboard.press('Escape');
  expect(messages).toEqual([]);
});
