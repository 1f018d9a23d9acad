import { KernelError } from '../types.js';

// Grey-level images from PGM (P2, P5) or PNG bytes, for the image source's scene 'file'.
// Web-standard APIs only (DecompressionStream for PNG's zlib data): the browser and Node both
// have them. A host (agent, editor) reads the file and calls registerImageFile before the
// first firing; the kernel then finds the pixels by the `file` param.

export interface GreyImage {
  width: number;
  height: number;
  /** Row-major luminance in [0, 1]. */
  data: Float32Array;
}

const KERNEL = 'saliency.image';

export function decodePgm(bytes: Uint8Array): GreyImage {
  const magic = String.fromCharCode(bytes[0], bytes[1]);
  if (magic !== 'P2' && magic !== 'P5') throw new KernelError(KERNEL, 'not a PGM file (expected P2 or P5)');
  let pos = 2;
  const token = (): number => {
    for (;;) {
      while (pos < bytes.length && /\s/.test(String.fromCharCode(bytes[pos]))) pos++;
      if (bytes[pos] === 0x23)
        while (pos < bytes.length && bytes[pos] !== 0x0a) pos++; // comment
      else break;
    }
    let s = '';
    while (pos < bytes.length && !/\s/.test(String.fromCharCode(bytes[pos]))) s += String.fromCharCode(bytes[pos++]);
    const v = Number(s);
    if (s === '' || !Number.isInteger(v)) throw new KernelError(KERNEL, `PGM: bad header or sample "${s}"`);
    return v;
  };
  const width = token();
  const height = token();
  const maxval = token();
  const data = new Float32Array(width * height);
  if (magic === 'P2') {
    for (let i = 0; i < data.length; i++) data[i] = token() / maxval;
    return { width, height, data };
  }
  pos++; // the single whitespace after maxval
  const wide = maxval > 255;
  if (bytes.length - pos < data.length * (wide ? 2 : 1)) throw new KernelError(KERNEL, `PGM: ${width}x${height} needs more pixel data than the file has`);
  for (let i = 0; i < data.length; i++) data[i] = (wide ? (bytes[pos + 2 * i] << 8) | bytes[pos + 2 * i + 1] : bytes[pos + i]) / maxval;
  return { width, height, data };
}

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** PNG: every colour type, bit depths 1-16, no interlacing; colour becomes Rec. 601 luma, alpha is ignored. */
export async function decodePng(bytes: Uint8Array): Promise<GreyImage> {
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  if (!sig.every((b, i) => bytes[i] === b)) throw new KernelError(KERNEL, 'not a PNG file');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  let width = 0,
    height = 0,
    depth = 0,
    ctype = 0;
  let palette: Uint8Array | undefined;
  const idat: Uint8Array[] = [];
  while (pos + 8 <= bytes.length) {
    const len = dv.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const body = bytes.subarray(pos + 8, pos + 8 + len);
    if (type === 'IHDR') {
      width = dv.getUint32(pos + 8);
      height = dv.getUint32(pos + 12);
      depth = body[8];
      ctype = body[9];
      if (body[12] !== 0) throw new KernelError(KERNEL, 'PNG: interlaced images are not supported; save it without interlacing');
    } else if (type === 'PLTE') palette = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[ctype];
  if (!channels || !width || !height) throw new KernelError(KERNEL, `PNG: unsupported colour type ${ctype} or missing header`);
  if (ctype === 3 && !palette) throw new KernelError(KERNEL, 'PNG: palette image without PLTE');
  const joined = new Uint8Array(idat.reduce((s, c) => s + c.length, 0));
  idat.reduce((o, c) => (joined.set(c, o), o + c.length), 0);
  const raw = await inflate(joined);
  const bpp = Math.max(1, (channels * depth) >> 3); // bytes per pixel for filtering
  const stride = Math.ceil((width * channels * depth) / 8);
  if (raw.length < height * (stride + 1)) throw new KernelError(KERNEL, 'PNG: image data is truncated');
  const cur = new Uint8Array(stride);
  let prev = new Uint8Array(stride);
  const data = new Float32Array(width * height);
  const max = 2 ** depth - 1;
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0;
      const b = prev[i];
      const c = i >= bpp ? prev[i - bpp] : 0;
      let p = 0;
      if (f === 1) p = a;
      else if (f === 2) p = b;
      else if (f === 3) p = (a + b) >> 1;
      else if (f === 4) {
        const pa = Math.abs(b - c),
          pb = Math.abs(a - c),
          pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      } else if (f !== 0) throw new KernelError(KERNEL, `PNG: bad filter type ${f} on row ${y}`);
      cur[i] = (line[i] + p) & 0xff;
    }
    const sample = (x: number, ch: number) => {
      const idx = x * channels + ch;
      if (depth === 16) return (cur[2 * idx] << 8) | cur[2 * idx + 1];
      if (depth === 8) return cur[idx];
      const bit = idx * depth;
      return (cur[bit >> 3] >> (8 - depth - (bit & 7))) & max;
    };
    for (let x = 0; x < width; x++) {
      let v: number;
      if (ctype === 3) {
        const k = sample(x, 0) * 3;
        v = (0.299 * palette![k] + 0.587 * palette![k + 1] + 0.114 * palette![k + 2]) / 255;
      } else if (channels >= 3) v = (0.299 * sample(x, 0) + 0.587 * sample(x, 1) + 0.114 * sample(x, 2)) / max;
      else v = sample(x, 0) / max;
      data[y * width + x] = v;
    }
    prev = Uint8Array.from(cur);
  }
  return { width, height, data };
}

export async function decodeImage(bytes: Uint8Array): Promise<GreyImage> {
  if (bytes[0] === 0x50 && (bytes[1] === 0x32 || bytes[1] === 0x35)) return decodePgm(bytes);
  if (bytes[0] === 137 && bytes[1] === 0x50) return decodePng(bytes);
  throw new KernelError(KERNEL, 'the file is neither PGM (P2/P5) nor PNG');
}

/**
 * Bilinear resampling to width x height (explicit scaling, never padding): the image node's
 * size is fixed by its params because every buffer downstream is sized from them.
 */
export function resample(img: GreyImage, width: number, height: number): Float32Array {
  if (img.width === width && img.height === height) return img.data.slice();
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(img.height - 1, Math.max(0, ((y + 0.5) * img.height) / height - 0.5));
    const y0 = Math.floor(sy),
      y1 = Math.min(img.height - 1, y0 + 1),
      fy = sy - y0;
    for (let x = 0; x < width; x++) {
      const sx = Math.min(img.width - 1, Math.max(0, ((x + 0.5) * img.width) / width - 0.5));
      const x0 = Math.floor(sx),
        x1 = Math.min(img.width - 1, x0 + 1),
        fx = sx - x0;
      const g = (xx: number, yy: number) => img.data[yy * img.width + xx];
      out[y * width + x] = (g(x0, y0) * (1 - fx) + g(x1, y0) * fx) * (1 - fy) + (g(x0, y1) * (1 - fx) + g(x1, y1) * fx) * fy;
    }
  }
  return out;
}

const files = new Map<string, GreyImage>();

/** Decodes `bytes` and keeps the image under `name` (the image node's `file` param). */
export async function registerImageFile(name: string, bytes: Uint8Array): Promise<GreyImage> {
  const img = await decodeImage(bytes);
  files.set(name, img);
  return img;
}

/** The registered image `name` at width x height; a KernelError tells the host what to do if missing. */
export function imageFile(name: string, width: number, height: number): Float32Array {
  const img = files.get(name);
  if (!img)
    throw new KernelError(KERNEL, `file "${name}" is not loaded; the host must read it and call registerImageFile("${name}", bytes) before the first firing`);
  return resample(img, width, height);
}
