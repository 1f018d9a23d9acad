// What the kernels compute, in plain TypeScript: the CPU twins use it, and image.display uses
// it to recompute what it should receive. Values are multiples of 1/256 and the Sobel sums of
// them are exact in f32, so WGSL and twin agree exactly up to the magnitude's square root.

export const chroma = (n: number) => Math.ceil(n / 2);

/** Luma at (x, y) of iteration `it`: an integer pattern / 256 (exact in f32 on both sides). */
export const luma = (x: number, y: number, it: number) => (((x * 7 + y * 13 + it * 3) & 255) + ((x * y) & 15)) / 256;
/** Chroma planes at half resolution (x, y are chroma coordinates). */
export const cb = (x: number, y: number, it: number) => ((x + 2 * y + it) & 63) / 256;
export const cr = (x: number, y: number, it: number) => ((3 * x + y + 5 * it) & 63) / 256;

export function readPlanes(width: number, height: number, it: number): { y: Float32Array; u: Float32Array; v: Float32Array } {
  const y = new Float32Array(width * height);
  for (let j = 0; j < height; j++) for (let i = 0; i < width; i++) y[j * width + i] = luma(i, j, it);
  const cw = chroma(width);
  const ch = chroma(height);
  const u = new Float32Array(cw * ch);
  const v = new Float32Array(cw * ch);
  for (let j = 0; j < ch; j++)
    for (let i = 0; i < cw; i++) {
      u[j * cw + i] = cb(i, j, it);
      v[j * cw + i] = cr(i, j, it);
    }
  return { y, u, v };
}

/** 3x3 Sobel with the border clamped (edge pixels repeat), into gx and gy. */
export function sobel(src: Float32Array, width: number, height: number, gx: Float32Array, gy: Float32Array): void {
  const at = (i: number, j: number) => src[Math.min(height - 1, Math.max(0, j)) * width + Math.min(width - 1, Math.max(0, i))];
  for (let j = 0; j < height; j++)
    for (let i = 0; i < width; i++) {
      // Summed in the WGSL's order, each step rounded to f32 as there.
      const f = Math.fround;
      const x = f(f(f(f(f(at(i + 1, j - 1) - at(i - 1, j - 1)) + f(2 * f(at(i + 1, j) - at(i - 1, j)))) + f(at(i + 1, j + 1) - at(i - 1, j + 1)))));
      const y = f(f(f(f(at(i - 1, j + 1) - at(i - 1, j - 1)) + f(2 * f(at(i, j + 1) - at(i, j - 1)))) + f(at(i + 1, j + 1) - at(i + 1, j - 1))));
      gx[j * width + i] = x;
      gy[j * width + i] = y;
    }
}

export function magnitude(gx: Float32Array, gy: Float32Array, out: Float32Array): void {
  for (let i = 0; i < out.length; i++) out[i] = Math.sqrt(gx[i] * gx[i] + gy[i] * gy[i]);
}
