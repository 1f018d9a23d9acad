import type { Page } from '@playwright/test';
import { fileURLToPath } from 'node:url';
import { newProject, shot, tipAt } from './helpers.js';
import { expect, test } from './fixtures.js';

// A saved task-bag trace opened in the Run view (fixtures/taskbag-trace.json, written by hand
// in the Chrome trace format the Run view exports): the coordinator's bag depth and tasks in
// flight as counter tracks, task slices named node[share]@iteration (attempt), the requeued
// one hatched, the tooltip giving task, share and attempt. Then the mode switch and the
// mapping board's note.

const FIXTURE = fileURLToPath(new URL('../fixtures/taskbag-trace.json', import.meta.url));
const GUTTER = 196;
const RULER = 22;

/** Pixels of the canvas with this colour (r, g, b), per CSS row. */
async function rowsWith(page: Page, rgb: [number, number, number]): Promise<number[]> {
  return page.getByTestId('timeline-canvas').evaluate((el, [r, g, b]) => {
    const cv = el as HTMLCanvasElement;
    const d = cv.getContext('2d')!.getImageData(0, 0, cv.width, cv.height).data;
    const dpr = cv.width / cv.clientWidth;
    const rows = new Set<number>();
    for (let k = 0; k < d.length; k += 4) if (d[k] === r && d[k + 1] === g && d[k + 2] === b) rows.add(Math.floor(k / 4 / cv.width / dpr));
    return [...rows].sort((a, c) => a - c);
  }, rgb);
}

test('a saved task-bag trace: counter tracks with their values, task slices by name, a requeued attempt hatched and described', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('tab-run').click();
  await page.getByTestId('run-open-trace').setInputFiles(FIXTURE);
  await expect(page.getByTestId('run-opened-trace')).toContainText('taskbag-trace.json: 25 events (measured mlem, no-overlap, self-timed)');
  const canvas = page.getByTestId('timeline-canvas');
  await expect(canvas).toHaveAttribute('data-events', '25');
  const predicted = page.getByTestId('timeline-predicted');
  if (await predicted.count()) await predicted.uncheck();

  // The counters' teal step lines (#0d9488) and the requeue's hatching (#1e3a8a) are drawn.
  await expect.poll(async () => (await rowsWith(page, [13, 148, 136])).length).toBeGreaterThan(10);
  expect((await rowsWith(page, [30, 58, 138])).length).toBeGreaterThan(8);
  await shot(page, 'taskbag-trace');

  // Down the middle of the tracks: what each row says (the coordinator's host sorts first).
  const box = (await canvas.boundingBox())!;
  const mid = GUTTER + (box.width - GUTTER) * 0.5;
  const heads: { y: number; head: string }[] = [];
  for (let y = RULER + 4; y < RULER + 140; y += 4) {
    const [head] = await tipAt(page, box, mid, y);
    if (head) heads.push({ y, head });
  }
  const depth = heads.find((h) => h.head.startsWith('bag depth '));
  const flight = heads.find((h) => h.head.startsWith('in flight '));
  expect(depth, JSON.stringify(heads)).toBeDefined();
  expect(flight, JSON.stringify(heads)).toBeDefined();
  expect(depth!.y).toBeLessThan(flight!.y);
  expect(await tipAt(page, box, mid, depth!.y)).toEqual(expect.arrayContaining([expect.stringMatching(/^coordinator · bag at /), 'at most 3 in the run']));

  // Along h0's lane: every task's slice, the requeued one with its attempt.
  const lane = heads.find((h) => /^fire projbp\[\d\]@\d|^fire update@\d/.test(h.head));
  expect(lane, JSON.stringify(heads)).toBeDefined();
  const seen = new Map<string, string[]>();
  for (let x = GUTTER + 4; x < box.width - 4; x += 8) {
    const lines = await tipAt(page, box, x, lane!.y);
    if (lines[0]?.startsWith('fire ')) seen.set(lines[0].slice(5), lines);
  }
  expect([...seen.keys()]).toEqual([
    'projbp[0]@0',
    'projbp[3]@0',
    'projbp[2]@0 (2)',
    'update@0',
    'projbp[0]@1',
    'projbp[1]@1',
    'projbp[2]@1',
    'projbp[3]@1',
    'update@1',
  ]);
  expect(seen.get('projbp[2]@0 (2)')).toContain('task projbp[2]@0 · share 2 · attempt 2 (requeued)');
  expect(seen.get('update@1')).toContain('task update@1 · attempt 1');
});

test('the run options switch to task bag with window and prefetch, and the mapping board says it is not used', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('option-mode').selectOption('taskbag');
  await page.getByTestId('option-window').fill('4');
  await page.getByTestId('option-window').blur();
  await page.getByTestId('option-prefetch-unbounded').check();
  await expect(page.getByTestId('option-prefetch')).toHaveCount(0);
  await page.getByTestId('tab-mapping').click();
  await expect(page.getByTestId('mapping-unused')).toContainText('Not used in task-bag mode');
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('option-prefetch')).toHaveValue('2');
});
