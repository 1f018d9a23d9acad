// 3D binary morphology with the 6-neighbour cross as structuring element (the voxel and its
// face neighbours). n successive erosions (dilations) by the cross are one erosion (dilation)
// by the L1 ball of radius n, the octahedron: a ball of radius r survives the opening of size
// n exactly when n <= r, so the predominant size reads directly as a radius. Outside the
// volume counts as background.

export interface Dims {
  depth: number;
  height: number;
  width: number;
}

/** One erosion (op 0) or dilation (op 1) by the cross, from src[srcOff..] to dst[dstOff..]. */
export function morph(op: 0 | 1, src: Uint32Array, srcOff: number, dst: Uint32Array, dstOff: number, { depth: d, height: h, width: w }: Dims): void {
  const plane = w * h;
  for (let z = 0; z < d; z++)
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const i = (z * h + y) * w + x;
        const s = srcOff + i;
        let v = src[s] !== 0;
        if (op === 0) {
          v = v && x > 0 && x < w - 1 && y > 0 && y < h - 1 && z > 0 && z < d - 1;
          v = v && src[s - 1] !== 0 && src[s + 1] !== 0 && src[s - w] !== 0 && src[s + w] !== 0 && src[s - plane] !== 0 && src[s + plane] !== 0;
        } else if (!v) {
          v =
            (x > 0 && src[s - 1] !== 0) ||
            (x < w - 1 && src[s + 1] !== 0) ||
            (y > 0 && src[s - w] !== 0) ||
            (y < h - 1 && src[s + w] !== 0) ||
            (z > 0 && src[s - plane] !== 0) ||
            (z < d - 1 && src[s + plane] !== 0);
        }
        dst[dstOff + i] = v ? 1 : 0;
      }
}

export function countOnes(a: Uint32Array, off: number, n: number): number {
  let c = 0;
  for (let i = 0; i < n; i++) if (a[off + i] !== 0) c++;
  return c;
}

/**
 * Openings first..last on a granulometry state: [levels counts][volume eroded first-1 times].
 * Keeps the chain of erosions (opening n = n dilations of the n-th erosion), writes count[n]
 * after each opening, and leaves the last erosion in the state for the next stage.
 */
export function openings(state: Uint32Array, levels: number, first: number, last: number, dims: Dims): void {
  const n = dims.depth * dims.height * dims.width;
  let a = new Uint32Array(n);
  let b = new Uint32Array(n);
  for (let k = first; k <= last; k++) {
    morph(0, state, levels, a, 0, dims);
    state.set(a, levels);
    let src = a;
    let dst = b;
    for (let j = 0; j < k; j++) {
      morph(1, src, 0, dst, 0, dims);
      [src, dst] = [dst, src];
    }
    state[k] = countOnes(src, 0, n);
    if (src !== a) [a, b] = [b, a]; // keep `a` as scratch either way
  }
}

/** The pattern spectrum: ps[n] = count[n] - count[n+1], the volume of objects of size exactly n. */
export function patternSpectrum(counts: ArrayLike<number>): number[] {
  return Array.from({ length: counts.length }, (_, n) => (n + 1 < counts.length ? counts[n] - counts[n + 1] : counts[n]));
}

/** The abscissa of the pattern spectrum's peak (the first one on ties). */
export function predominantSize(spectrum: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < spectrum.length; i++) if (spectrum[i] > spectrum[best]) best = i;
  return best;
}
