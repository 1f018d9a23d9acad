import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layeredDocument } from '@pipeloom/core/testing';
import { expect, test } from './fixtures.js';

// A document of several MB: read and compiled in the worker with its progress shown, the page
// answering clicks meanwhile; the views say they have no result for it until it has compiled
// (never the previous project's graph); and since it does not fit the browser's storage (about
// 5 MB), the page says a reload would not bring it back and offers Save.

test('a 6 MB project opens with progress, the page responsive, the views stale then ready, and a notice that it is too big to keep', async ({ page }) => {
  const doc = layeredDocument(5, { nodes: 2100, hosts: 16, gpus: 3 });
  doc.name = 'Big layered DFG';
  // The size is in the document's description: the graph compiles as large.spec.ts's does.
  doc.description = 'A large project. '.repeat(Math.ceil(6e6 / 17));
  const dir = mkdtempSync(join(tmpdir(), 'pipeloom-big-'));
  const path = join(dir, 'big.json');
  writeFileSync(path, JSON.stringify(doc));
  try {
    await page.goto('/');
    await page.getByTestId('tab-ig').click();
    await expect(page.getByTestId('ig-summary')).toContainText('buffer nodes');
    // What happens in the page, in order: the progress phases, the view switching, the progress gone.
    await page.evaluate(() => {
      const w = window as unknown as { events: string[] };
      w.events = [];
      let last = '';
      new MutationObserver(() => {
        const p = document.querySelector('[data-testid="load-progress"]')?.getAttribute('data-phase') ?? 'none';
        const view = document.querySelector('[data-testid="app"]')?.getAttribute('data-view') ?? '';
        const now = `${p} ${view}`;
        if (now !== last) w.events.push((last = now));
      }).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-phase', 'data-view'] });
    });

    await page.getByTestId('open-input').setInputFiles(path);
    const progress = page.getByTestId('load-progress');
    await expect(progress).toHaveAttribute('data-phase', 'compiling');
    await expect(progress).toContainText('Opening big.json');
    await expect(page.getByTestId('load-step-parsing')).toHaveClass(/done/);
    await expect(page.getByTestId('doc-name')).toHaveText('Big layered DFG');
    // Stale: the previous project's graph is gone, the problems not counted.
    await expect(page.getByTestId('ig-canvas')).toHaveAttribute('data-stale', 'true');
    await expect(page.getByTestId('ig-summary')).toHaveCount(0);
    await expect(page.getByTestId('problems')).toHaveAttribute('data-stale', 'true');
    await expect(page.getByTestId('problem-count')).toHaveText('not compiled yet');

    // The page answers a click while the worker compiles.
    await page.getByTestId('tab-arch').click();
    await expect(page.getByTestId('app')).toHaveAttribute('data-view', 'arch');
    await page.getByTestId('tab-ig').click();

    // Ready: the new project's graph and problems.
    await expect(page.getByTestId('ig-summary')).toContainText('buffer nodes', { timeout: 90_000 });
    await expect(page.getByTestId('ig-canvas')).not.toHaveAttribute('data-stale', /.*/);
    await expect(page.getByTestId('problems')).not.toHaveAttribute('data-stale', /.*/);
    await expect(page.getByTestId('problem-count')).toHaveText('0 errors, 0 warnings');
    await expect(progress).toHaveCount(0);
    const events = await page.evaluate(() => (window as unknown as { events: string[] }).events);
    // The switch to Architecture was handled while the progress still said compiling.
    expect(events).toContain('compiling arch');

    // Too big for the browser's storage: said, with Save.
    const notice = page.getByTestId('storage-notice');
    await expect(notice).toContainText('"Big layered DFG"');
    await expect(notice).toContainText("too big to keep in this browser's storage");
    const download = page.waitForEvent('download');
    await notice.getByTestId('storage-save').click();
    expect((await download).suggestedFilename()).toBe('Big-layered-DFG.json');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
