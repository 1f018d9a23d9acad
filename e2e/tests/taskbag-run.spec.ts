import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { shot, tipAt } from './helpers.js';
import { expect, test } from './fixtures.js';

// A task-bag run started from the designer on two real agents: examples/mlem.json in
// task-bag mode at 8^3 and 12 angles, 6 iterations. The Run view says the mapping is not used
// and the overlap switch does not apply; Deploy checks the pool; Start hands the tasks out and
// the bag's numbers move while it runs; at the end every task is committed, each PE's tasks
// are listed, and the timeline has the bag's counter tracks and a slice per task.

const GUTTER = 196;
const RULER = 22;
const ITERATIONS = 6;

function smallMlem(): Buffer {
  const doc = JSON.parse(readFileSync(new URL('../../examples/mlem.json', import.meta.url), 'utf8'));
  doc.name = 'MLEM task bag';
  doc.params.N.value = 8;
  doc.params.A.value = 12;
  // One MLEM step per iteration (the bag has no cycles to wait out), projbp in 4 shares.
  doc.params.D.value = 1;
  doc.params.K.value = 4;
  doc.options = { ...doc.options, mode: 'taskbag', iterations: ITERATIONS, window: 2, prefetch: 2 };
  return Buffer.from(JSON.stringify(doc));
}

const COUNTER: [number, number, number] = [13, 148, 136];
const FIRE: [number, number, number] = [59, 130, 246];

/** Up to 24 points (CSS px over the canvas, inside the tracks) drawn in this colour, one per CSS row at most, spread over all the rows that have it (every track gets its share). */
async function pixelsOf(page: Page, rgb: [number, number, number]): Promise<[number, number][]> {
  return page.getByTestId('timeline-canvas').evaluate(
    (el, [[r, g, b], gutter, ruler]) => {
      const cv = el as HTMLCanvasElement;
      const d = cv.getContext('2d')!.getImageData(0, 0, cv.width, cv.height).data;
      const dpr = cv.width / cv.clientWidth;
      const rows = new Map<number, number>();
      for (let k = 0; k < d.length; k += 4) {
        if (d[k] !== r || d[k + 1] !== g || d[k + 2] !== b) continue;
        const x = (k / 4) % cv.width;
        const y = Math.floor(k / 4 / cv.width / dpr);
        if (x / dpr > gutter + 2 && y > ruler + 2 && !rows.has(y)) rows.set(y, x / dpr);
      }
      const all = [...rows].map(([y, x]) => [x, y] as [number, number]);
      const step = Math.max(1, all.length / 24);
      return Array.from({ length: Math.min(24, all.length) }, (_, i) => all[Math.floor(i * step)]);
    },
    [rgb, GUTTER, RULER] as const,
  );
}

test('MLEM in task-bag mode from the Run view: checked, started, the bag live, every task committed, counter tracks and task slices', async ({
  page,
  agents,
}) => {
  page.on('dialog', (d) => void d.accept());
  await page.goto(`/${agents.query}`);
  await expect(page.getByTestId('app')).toBeVisible();
  await page.getByTestId('open-input').setInputFiles({ name: 'mlem-taskbag.json', mimeType: 'application/json', buffer: smallMlem() });
  await expect(page.getByTestId('doc-name')).toHaveText('MLEM task bag');

  await page.getByTestId('tab-run').click();
  await expect(page.getByTestId('run-connection')).toHaveAttribute('data-status', 'connected', { timeout: 20_000 });
  await expect(page.getByTestId('run-mode')).toContainText('Task-bag mode');
  await expect(page.getByTestId('run-mode')).toContainText('(window 2, prefetch 2); the mapping is not used');
  await expect(page.getByTestId('run-overlap')).toBeDisabled();
  expect(await page.locator('label:has([data-testid="run-overlap"])').getAttribute('title')).toContain('Not used in task-bag mode');
  // The static plan's estimate is not this run's.
  await expect(page.getByTestId('run-estimate')).toHaveCount(0);

  // Deploy checks the pool (core checkBag).
  await page.getByTestId('run-deploy').click();
  await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-state', 'checked');
  await expect(page.getByTestId('run-outcome')).toContainText('for every node some PE of the connected agents has its kernel');

  // What the bag table says while the run goes: recorded by the page as the DOM changes.
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { __bagSeen: number[] }).__bagSeen = seen;
    new MutationObserver(() => {
      const status = document.querySelector('[data-testid="run-status"]')?.getAttribute('data-status');
      const committed = document.querySelector('[data-testid="run-bag-committed"]')?.getAttribute('data-value');
      if (status === 'running' && committed != null && seen[seen.length - 1] !== Number(committed)) seen.push(Number(committed));
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.getByTestId('run-start').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('run-outcome')).toHaveAttribute('data-state', 'passed');
  // phantom, projbp's 4 shares and their sum, update, error: 8 tasks per iteration.
  const tasks = ITERATIONS * 8;
  await expect(page.getByTestId('run-check')).toContainText(`${tasks} tasks, ${ITERATIONS} iterations in task-bag mode`);
  const seen = await page.evaluate(() => (window as unknown as { __bagSeen: number[] }).__bagSeen);
  // Shown from the start of the run (none committed), never going back.
  expect(seen[0]).toBe(0);
  for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1]);

  await expect(page.getByTestId('run-bag-committed')).toHaveText(`${tasks} / ${tasks} committed`);
  for (const k of ['requeued', 'discarded', 'recomputed', 'depth', 'in-flight'])
    await expect(page.getByTestId(`run-bag-${k}`)).toHaveAttribute('data-value', '0');
  const perPe = await page
    .getByTestId('run-bag-per-pe')
    .locator('tr')
    .evaluateAll((rows) => rows.map((r) => ({ pe: r.getAttribute('data-pe')!, n: Number(r.getAttribute('data-value')) })));
  expect(perPe.reduce((s, r) => s + r.n, 0)).toBe(tasks);
  // The agents' PEs: their cores (cpu0@h0 ...) and GPUs.
  for (const r of perPe) expect(r.pe).toMatch(/^(cpu\d+|gpu0)@h[01]$/);
  await shot(page, 'taskbag-run');

  // The timeline: the coordinator's counter tracks and the tasks' slices.
  const canvas = page.getByTestId('timeline-canvas');
  expect(Number(await canvas.getAttribute('data-events'))).toBeGreaterThan(tasks);
  const box = (await canvas.boundingBox())!;
  // Where the counters' teal lines and the fires' blue slices are drawn: hover there.
  const heads = new Set<string>();
  for (const rgb of [COUNTER, FIRE]) for (const [x, y] of await pixelsOf(page, rgb)) heads.add((await tipAt(page, box, x, y))[0] ?? '');
  const all = [...heads];
  // The counters (a bag that stays empty draws its line along the track's floor, where a hover may
  // miss it: either counter's read-out will do; taskbag-trace.spec.ts checks both on a fixed trace).
  expect(
    all.some((h) => /^(bag depth|in flight) /.test(h)),
    all.join('\n'),
  ).toBe(true);
  // Task slices: whole nodes (node@iteration) and shares (node[share]@iteration).
  expect(
    all.some((h) => /^fire (phantom|projbp|update|error)@\d+$/.test(h)),
    all.join('\n'),
  ).toBe(true);
});
