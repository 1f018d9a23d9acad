import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encode, y4mFrame, y4mStreamHeader } from '@pipeloom/agent/io/formats';
import { phantomData } from '@pipeloom/kernels/mlem/index';

// The input files of the data examples (examples/*-files.json), made here rather than checked
// in: a short Y4M clip for saliency, and for MLEM the sinogram a scanner would measure with its
// known answer (the phantom). The tests write them into a data root at test time;
//   node --import tsx scripts/data/examples.ts DIR
// writes them under DIR (serve it with `pipeloom agent --data data=DIR`).

/** The clip: a few 64x48 frames (4:2:0). */
export const CLIP = { width: 64, height: 48, frames: 8 } as const;

/**
 * A moving pattern: a bright disc crossing a dim diagonal gradient one way, a dark square the
 * other, and a colour wash drifting under both: each frame differs, and each has a salient spot.
 */
export function clipPlanes(k: number, { width: w, height: h } = CLIP): { y: Uint8Array; u: Uint8Array; v: Uint8Array } {
  const y = new Uint8Array(w * h);
  const disc = { x: 10 + 5 * k, y: 12 + 2 * k, r: 6 };
  const square = { x: w - 18 - 4 * k, y: h - 16 - k, side: 8 };
  for (let r = 0; r < h; r++)
    for (let c = 0; c < w; c++) {
      let v = 40 + Math.round((60 * (r + c)) / (w + h));
      if (Math.hypot(c - disc.x, r - disc.y) <= disc.r) v = 235;
      if (c >= square.x && c < square.x + square.side && r >= square.y && r < square.y + square.side) v = 16;
      y[r * w + c] = v;
    }
  const cw = Math.ceil(w / 2);
  const ch = Math.ceil(h / 2);
  const u = new Uint8Array(cw * ch);
  const v = new Uint8Array(cw * ch);
  for (let r = 0; r < ch; r++)
    for (let c = 0; c < cw; c++) {
      u[r * cw + c] = 128 + Math.round(40 * Math.sin((c + 2 * k) / 5));
      v[r * cw + c] = 128 + Math.round(40 * Math.cos((r + k) / 4));
    }
  return { y, u, v };
}

/** The clip as a Y4M file (the agent's own encoder: the header line, then FRAME and three planes per frame). */
export function clipY4m(clip = CLIP): Uint8Array {
  const parts: Uint8Array[] = [y4mStreamHeader([clip.height, clip.width])];
  for (let k = 0; k < clip.frames; k++) parts.push(...y4mFrame(clipPlanes(k, clip), 'u8'));
  return Buffer.concat(parts);
}

/** The scanner: examples/mlem.json's phantom at a small size, noiseless. */
export const MLEM = { size: 16, angles: 36, spheres: 6, background: 1, counts: 0, seed: 1 } as const;

/**
 * MLEM's files, made by the projector the MLEM kernels use (mlem.phantom's own data): the
 * sinogram n = P lambda_true [angles][z][t], the sensitivity s = P^T 1 and the known answer
 * lambda_true [z][y][x], each f32 .npy.
 */
export function mlemArrays(p = MLEM) {
  const d = phantomData({ ...p });
  return {
    sinogram: { data: d.sinogram, shape: [p.angles, p.size, p.size] },
    sensitivity: { data: d.sensitivity, shape: [p.size, p.size, p.size] },
    phantom: { data: d.truth, shape: [p.size, p.size, p.size] },
  };
}

const npy = (a: { data: Float32Array; shape: number[] }) => Buffer.concat(encode('npy', a.data, 'f32', a.shape));

/** Every file, by its path under the data root. */
export function exampleFiles(): Record<string, Uint8Array> {
  const m = mlemArrays();
  return {
    'clip.y4m': clipY4m(),
    'mlem/sinogram.npy': npy(m.sinogram),
    'mlem/sensitivity.npy': npy(m.sensitivity),
    'mlem/phantom.npy': npy(m.phantom),
  };
}

/** Writes every file under `dir`; returns their paths. */
export function writeExampleData(dir: string): string[] {
  return Object.entries(exampleFiles()).map(([name, bytes]) => {
    const file = join(dir, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    return file;
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node --import tsx scripts/data/examples.ts DIR');
    process.exit(2);
  }
  for (const f of writeExampleData(dir)) console.log(f);
}
