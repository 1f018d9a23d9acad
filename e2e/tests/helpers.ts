import { expect, type Locator, type Page } from '@playwright/test';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
mkdirSync(ARTIFACTS, { recursive: true });

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png` });
}

/** The element's box once it stays put over two frames (a canvas fitting its view animates). */
async function settledBox(page: Page, el: Locator) {
  const frames = () => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  let box = await el.boundingBox();
  await expect(async () => {
    await frames();
    const now = await el.boundingBox();
    const same = JSON.stringify(now) === JSON.stringify(box);
    box = now;
    expect(same).toBe(true);
  }).toPass();
  return box!;
}

/** Drags with real mouse events from the centre of one element to the centre of another. */
export async function mouseDrag(page: Page, from: Locator, to: Locator) {
  await expect(from).toBeVisible();
  await expect(to).toBeVisible();
  const a = await settledBox(page, from);
  const b = await settledBox(page, to);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2 + 5, (a.y + b.y) / 2 + 5, { steps: 5 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
  await page.mouse.up();
}

/** Connects two DFG ports by dragging from the output handle to the input handle (the designer may refuse it). */
export async function connect(page: Page, from: string, to: string) {
  const [fn, fp] = from.split('.');
  const [tn, tp] = to.split('.');
  await mouseDrag(page, page.getByTestId(`handle-${fn}-out-${fp}`), page.getByTestId(`handle-${tn}-in-${tp}`));
}

/**
 * connect() for an edge the designer accepts: a drag that made no edge (the view still moving
 * under a loaded machine's late frames) is dragged again.
 */
export async function connectEdge(page: Page, from: string, to: string) {
  const edges = page.locator('.react-flow__edge');
  const before = await edges.count();
  await expect(async () => {
    if ((await edges.count()) > before) return;
    await connect(page, from, to);
    await expect(edges).toHaveCount(before + 1, { timeout: 5000 });
  }).toPass();
}

export async function selectNode(page: Page, id: string) {
  await page.getByTestId(`dfg-node-${id}`).locator('.kn-head').click();
  await expect(page.getByTestId('inspector-id')).toHaveValue(id);
}

export async function setField(page: Page, testid: string, value: string) {
  const f = page.getByTestId(testid);
  await f.fill(value);
  await f.blur();
}

/** Opens `examples/FILE` from the Examples menu. */
export async function pickExample(page: Page, file: string) {
  await page.getByTestId('examples').click();
  await page.getByTestId(`example-${file}`).click();
  const name = JSON.parse(readFileSync(new URL(`../../examples/${file}`, import.meta.url), 'utf8')).name as string;
  await expect(page.getByTestId('doc-name')).toHaveText(name);
}

/** A fresh designer with an empty project (first visit opens an example). */
export async function newProject(page: Page) {
  await page.goto('/');
  await expect(page.getByTestId('app')).toBeVisible();
  page.once('dialog', (d) => d.accept());
  await page.getByTestId('new').click();
  await expect(page.locator('[data-testid^="dfg-node-"]')).toHaveCount(0);
}

const PIIC = ['produce', 'increment', 'increment2', 'consume'];

/** The four P-I-I-C nodes from the palette: the producer dragged onto the canvas, the others clicked in beside it. */
export async function addPiicNodes(page: Page, at = { x: 120, y: 200 }) {
  await page.getByTestId('palette-matrix.produce').dragTo(page.getByTestId('dfg-canvas'), { targetPosition: at });
  await expect(page.getByTestId('dfg-node-produce')).toBeVisible();
  await page.getByTestId('palette-matrix.increment').click();
  await page.getByTestId('palette-matrix.increment').click();
  await page.getByTestId('palette-matrix.consume').click();
  await page.locator('.react-flow__controls-fitview').click();
  for (const id of PIIC) await expect(page.getByTestId(`dfg-node-${id}`)).toBeVisible();
}

/**
 * 64x64 matrices so a run is quick. The consumer's expectation is left to the designer: it is
 * derived from the graph upstream (the two incrementers' Fig 13 increments).
 */
export async function setPiicParams(page: Page) {
  for (const id of PIIC) {
    await selectNode(page, id);
    await setField(page, 'param-width', '64');
    await setField(page, 'param-height', '64');
  }
}

/** P -> I -> I -> C edges, by dragging from each output handle to the next input. */
export async function connectPiic(page: Page) {
  await connectEdge(page, 'produce.out', 'increment.in');
  await connectEdge(page, 'increment.out', 'increment2.in');
  await connectEdge(page, 'increment2.out', 'consume.in');
  await expect(page.locator('.react-flow__edge')).toHaveCount(3);
}

/** P -> I -> I -> C from the palette, 64x64 matrices, the consumer checking what it derives from the graph upstream. */
export async function buildPiicFromPalette(page: Page) {
  await page.getByTestId('tab-dfg').click();
  await addPiicNodes(page);
  await setPiicParams(page);
  await connectPiic(page);
}

/** The tooltip's lines at (x, y) over the canvas, after the frame that handles the move; [] where there is none. */
export async function tipAt(page: Page, box: { x: number; y: number }, x: number, y: number): Promise<string[]> {
  await page.mouse.move(box.x + x, box.y + y);
  // Read in the page after the frames: one round trip per point (a scan hovers hundreds).
  return page.evaluate(
    () =>
      new Promise<string[]>((r) =>
        requestAnimationFrame(() =>
          requestAnimationFrame(() => r([...document.querySelectorAll('[data-testid="timeline-tooltip"] div')].map((d) => d.textContent ?? ''))),
        ),
      ),
  );
}

/** Every console warning or error and page error of `page` from now on, as lines (a test expects none). */
export function pageProblems(page: Page): string[] {
  const messages: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning' || m.type() === 'error') messages.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => messages.push(`page error: ${e.message}`));
  return messages;
}

/** `npm start` as a newcomer runs it (its build into a folder of its own, any free port): the designer's URL once it serves, its output so far, and a stop that ends it and its agents. */
export async function npmStart(): Promise<{ url: string; pid: number; log: () => string; stop: () => Promise<void> }> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const out = mkdtempSync(join(tmpdir(), 'pipeloom-start-'));
  let log = '';
  const start = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--out', out], {
    cwd: root,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout.on('data', (b) => (log += b));
  start.stderr.on('data', (b) => (log += b));
  const exited = new Promise<void>((resolve) => start.once('exit', () => resolve()));
  const stop = async () => {
    start.kill('SIGTERM');
    await exited;
    rmSync(out, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const look = () => {
        const m = /Pipeloom designer\s+(\S+)/.exec(log);
        if (m && /Ctrl\+C/.test(log)) resolve(m[1]);
      };
      start.stdout.on('data', look);
      start.once('exit', (code) => reject(new Error(`npm start exited (${code}) before serving:\n${log}`)));
    });
    return { url, pid: start.pid!, log: () => log, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
