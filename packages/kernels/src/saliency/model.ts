import { seededRandom } from '../granulometry/volume.js';

// The static pathway's pieces (paper section 5.3, Algorithm 1), as plain functions on typed
// arrays. Maps are stored orientation-major: map m = i * frequencies + j.

/** The Hanning weight of sample n of N: 0.5 (1 - cos(2 pi n / (N - 1))). */
export function hanning(n: number, N: number): number {
  return N < 2 ? 1 : 0.5 * (1 - Math.cos((2 * Math.PI * n) / (N - 1)));
}

/**
 * The bank's centre frequencies and widths, in cycles per pixel: f_j = f_max / 2^j (one octave
 * apart, f_max = 0.25) and sigma_ij = f_j / 2.5 for every orientation (one octave of radial
 * bandwidth at half power). Orientations theta_i = i pi / orientations.
 */
export function bank(orientations: number, frequencies: number): { theta: number[]; f: number[]; sigma: number[] } {
  const f = Array.from({ length: frequencies }, (_, j) => 0.25 / 2 ** j);
  return { theta: Array.from({ length: orientations }, (_, i) => (i * Math.PI) / orientations), f, sigma: f.map((x) => x / 2.5) };
}

/** G_ij(u, v) = exp(-((u' - f_j)^2 + v'^2) / (2 sigma_ij^2)), u' = u cos + v sin, v' = v cos - u sin. */
export function gabor(u: number, v: number, theta: number, f: number, sigma: number): number {
  const up = u * Math.cos(theta) + v * Math.sin(theta);
  const vp = v * Math.cos(theta) - u * Math.sin(theta);
  return Math.exp(-((up - f) ** 2 + vp ** 2) / (2 * sigma * sigma));
}

/** Normalised frequency of FFT bin k of n (cycles per pixel, in [-0.5, 0.5)). */
export function binFrequency(k: number, n: number): number {
  return (k < (n + 1) / 2 ? k : k - n) / n;
}

/**
 * Short interactions between the partial maps at each pixel: a map is reinforced by the maps
 * of the same orientation at the neighbouring frequencies (weight `excite`) and inhibited by
 * the maps of the neighbouring orientations (circularly) at the same frequency (weight
 * `inhibit`); the input is each map's energy |c|^2, negative results are clipped to 0.
 */
export function interactionWeights(orientations: number, frequencies: number, excite: number, inhibit: number): Array<Array<[number, number]>> {
  const m = (i: number, j: number) => ((i + orientations) % orientations) * frequencies + j;
  const rows: Array<Array<[number, number]>> = [];
  for (let i = 0; i < orientations; i++)
    for (let j = 0; j < frequencies; j++) {
      const row: Array<[number, number]> = [[m(i, j), 1]];
      if (j > 0) row.push([m(i, j - 1), excite]);
      if (j < frequencies - 1) row.push([m(i, j + 1), excite]);
      if (orientations > 1) row.push([m(i - 1, j), -inhibit]);
      if (orientations > 2) row.push([m(i + 1, j), -inhibit]);
      rows.push(row);
    }
  return rows;
}

export interface MapStats {
  min: number;
  max: number;
  mean: number;
}

export function mapStats(a: Float32Array, off: number, n: number): MapStats {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (let i = off; i < off + n; i++) {
    const v = a[i];
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  return { min, max, mean: sum / n };
}

export type Scene = 'blob' | 'noise';

/** Where the odd blob of the synthetic scene lies (pixel centre) and its radius, for checks. */
export function sceneTarget(width: number, height: number, seed: number): { x: number; y: number; radius: number } {
  const cell = Math.max(6, Math.round(Math.min(width, height) / 8));
  const rnd = seededRandom(seed ^ 0x5a11);
  // keep the blob away from the borders, where the Hanning window fades everything
  const x = Math.floor(width * (0.25 + 0.5 * rnd()));
  const y = Math.floor(height * (0.25 + 0.5 * rnd()));
  return { x, y, radius: cell / 2 };
}

/**
 * Seeded synthetic scenes in [0, 1]. 'blob': low-contrast noise texture with small dim dots
 * scattered as distractors and one large bright disc (the odd blob, see sceneTarget);
 * 'noise': white noise.
 */
export function synthesize(out: Float32Array, width: number, height: number, scene: Scene, seed: number): void {
  const rnd = seededRandom(seed);
  for (let i = 0; i < out.length; i++) out[i] = (scene === 'noise' ? 1 : 0.2) * rnd();
  if (scene === 'noise') return;
  const t = sceneTarget(width, height, seed);
  const disc = (cx: number, cy: number, r: number, value: number) => {
    for (let y = Math.max(0, Math.floor(cy - r)); y <= Math.min(height - 1, Math.ceil(cy + r)); y++)
      for (let x = Math.max(0, Math.floor(cx - r)); x <= Math.min(width - 1, Math.ceil(cx + r)); x++)
        if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) out[y * width + x] = value;
  };
  const dots = Math.max(4, Math.round((width * height) / (t.radius * t.radius * 40)));
  for (let k = 0; k < dots; k++) {
    const x = rnd() * width;
    const y = rnd() * height;
    if ((x - t.x) ** 2 + (y - t.y) ** 2 > (3 * t.radius) ** 2) disc(x, y, Math.max(1, t.radius / 3), 0.5);
  }
  disc(t.x, t.y, t.radius, 1);
}
