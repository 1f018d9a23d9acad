import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode as decodePng } from 'fast-png';
import { afterAll, describe, expect, it } from 'vitest';
import { backproject, project, shareAngles, trigTable } from '@pipeloom/kernels/mlem/index';
import { driftWalk, scaledFrame } from '@pipeloom/kernels/reg2d/series';
import { CLIP, MLEM, mlemArrays, writeExampleData } from '../../../scripts/data/examples.js';
import { agentsForSuite } from './testing/suite.js';
import { pipeloomInProcess, root } from './testing/fixtures.js';

// The data examples on a real agent serving their files (--data data=DIR): each reads what
// scripts/data/examples.ts makes, runs, and writes its results into the same root, checked
// here against what they should hold.

const data = realpathSync(mkdtempSync(join(tmpdir(), 'pipeloom-data-examples-')));
writeExampleData(data);
afterAll(() => rmSync(data, { recursive: true, force: true }));

const agentsOf = agentsForSuite(['h0'], { args: ['--data', `data=${data}`] });
const run = (example: string, ...flags: string[]) =>
  pipeloomInProcess('run', join(root, 'examples', example), '--agents', agentsOf().agents[0].url, '--token', agentsOf().token, ...flags);

/** The f32 values of a .npy (version 1.0: the header's length at byte 8). */
function npyFloats(file: string): Float32Array {
  const b = readFileSync(file);
  const start = 10 + b.readUInt16LE(8);
  return new Float32Array(new Uint8Array(b.subarray(start)).buffer);
}

describe('the data examples on an agent serving their files', () => {
  it('saliency-y4m: one PNG saliency map per frame of the clip, its brightest spot following the moving disc', async () => {
    const r = await run('saliency-y4m.json', '--data', `data=${data}`);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const files = readdirSync(join(data, 'saliency')).sort();
    expect(files).toEqual(Array.from({ length: CLIP.frames }, (_, k) => `${String(k).padStart(5, '0')}.png`));
    const peaks = files.map((f) => {
      const png = decodePng(readFileSync(join(data, 'saliency', f)));
      expect([png.width, png.height, png.channels]).toEqual([CLIP.width, CLIP.height, 1]);
      const px = png.data as Uint8Array;
      let at = 0;
      for (let i = 1; i < px.length; i++) if (px[i] > px[at]) at = i;
      return at % png.width;
    });
    // Frame k's disc is centred at x = 10 + 5k (scripts/data/examples.ts); frame 0's sits in the
    // Hanning window's fall-off at the edge, so the maps are followed from frame 1.
    for (let k = 1; k < CLIP.frames; k++) {
      expect(Math.abs(peaks[k] - (10 + 5 * k)), `frame ${k}: peak at x ${peaks[k]}`).toBeLessThanOrEqual(6);
      if (k > 1) expect(peaks[k]).toBeGreaterThan(peaks[k - 1]);
    }
  });

  it("mlem-files: the estimate written after 10 MLEM steps is the projector's own MLEM of the sinogram, and near the phantom", async () => {
    const r = await run('mlem-files.json', '--data', `data=${data}`);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const estimate = npyFloats(join(data, 'mlem', 'estimate.npy'));
    const { sinogram, sensitivity, phantom } = mlemArrays();
    // The known answer's way: 10 steps from the flat start, by the kernels' CPU projector.
    const n = MLEM.size;
    const trig = trigTable(MLEM.angles, shareAngles(MLEM.angles, 1, 0));
    let lambda = new Float32Array(n ** 3).fill(1);
    for (let step = 0; step < 10; step++) {
      const p = new Float32Array(MLEM.angles * n * n);
      project(n, trig, lambda, p);
      for (let d = 0; d < p.length; d++) p[d] = p[d] > 0 ? sinogram.data[d] / p[d] : 0;
      const bp = new Float32Array(n ** 3);
      backproject(n, trig, p, bp);
      lambda = lambda.map((v, i) => (sensitivity.data[i] > 0 ? (v / sensitivity.data[i]) * bp[i] : 0));
    }
    const norm = (a: ArrayLike<number>) => Math.sqrt(Array.from(a).reduce((s, x) => s + x * x, 0));
    const diff = (a: ArrayLike<number>, b: ArrayLike<number>) => norm(Array.from(a, (x, i) => x - b[i]));
    expect(estimate).toHaveLength(n ** 3);
    expect(diff(estimate, lambda) / norm(lambda)).toBeLessThan(1e-3);
    // And it is a reconstruction: nearer the phantom than a flat image at its mean activity.
    const mean = phantom.data.reduce((s, x) => s + x, 0) / phantom.data.length;
    const flat = diff(new Float32Array(phantom.data.length).fill(mean), phantom.data);
    expect(diff(estimate, phantom.data)).toBeLessThan(0.5 * flat);
  });

  it('reg2d-frames-png then scan-reg2d-png: the series written as PNG files frame by frame, read back, and registered by the scan within 0.5 px of its known drift', async () => {
    const w = await run('reg2d-frames-png.json', '--data', `data=${data}`);
    expect(w.status, w.stdout + w.stderr).toBe(0);
    const series = { width: 64, height: 64, seed: 1, drift: 0.4, rotation: 0.003, noise: 0.1, lowContrast: 0 };
    const frames = 9;
    expect(readdirSync(join(data, 'frames')).sort()).toEqual(Array.from({ length: frames }, (_, k) => `${String(k).padStart(5, '0')}.png`));
    const drift = driftWalk(series, frames);
    for (let k = 0; k < frames; k++) {
      const png = decodePng(readFileSync(join(data, 'frames', `${String(k).padStart(5, '0')}.png`)));
      expect([png.width, png.height, png.channels, png.depth]).toEqual([64, 64, 1, 8]);
      // Frame k of the series, in [0, 1] as 0..255.
      expect(Array.from(png.data as Uint8Array)).toEqual(Array.from(scaledFrame(series, k, drift[k]), (x) => Math.round(x * 255)));
    }
    const r = await run('scan-reg2d-png.json', '--data', `data=${data}`, '--format', 'json');
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { reports: { node: string; values: Record<string, number> }[] };
    const check = summary.reports.find((x) => x.node === 'check')!;
    expect(check.values.maxShift).toBeLessThan(0.5);
  });
});
