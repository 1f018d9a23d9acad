import { mulberry32 } from '../random.js';

// The seeded synthetic volume: non-overlapping balls of one known radius, so the predominant
// size of a granulometry over it is known in advance (the radius).

export interface Ball {
  x: number;
  y: number;
  z: number;
}

/** The seeded generator synthetic inputs use (kept under this name for the volume's callers). */
export const seededRandom = mulberry32;

/**
 * Centers of up to `count` balls of `radius` inside a depth x height x width box, at least one
 * voxel from the faces and two voxels apart from each other (so openings never merge them).
 */
export function placeBalls(depth: number, height: number, width: number, radius: number, count: number, seed: number): Ball[] {
  const rnd = seededRandom(seed);
  const balls: Ball[] = [];
  const m = radius + 1;
  if (2 * m >= Math.min(depth, height, width)) return balls;
  const pick = (size: number) => m + Math.floor(rnd() * (size - 2 * m));
  const minDist2 = (2 * radius + 3) ** 2;
  for (let attempt = 0; attempt < 200 * count && balls.length < count; attempt++) {
    const b = { x: pick(width), y: pick(height), z: pick(depth) };
    if (balls.every((o) => (o.x - b.x) ** 2 + (o.y - b.y) ** 2 + (o.z - b.z) ** 2 >= minDist2)) balls.push(b);
  }
  return balls;
}

/** Voxel (x, y, z) is inside a ball when its squared distance to the center is <= radius^2. */
export function fillBalls(out: Uint32Array, depth: number, height: number, width: number, radius: number, balls: Ball[]): void {
  out.fill(0);
  const r2 = radius * radius;
  for (const b of balls) {
    for (let z = Math.max(0, b.z - radius); z <= Math.min(depth - 1, b.z + radius); z++)
      for (let y = Math.max(0, b.y - radius); y <= Math.min(height - 1, b.y + radius); y++)
        for (let x = Math.max(0, b.x - radius); x <= Math.min(width - 1, b.x + radius); x++)
          if ((x - b.x) ** 2 + (y - b.y) ** 2 + (z - b.z) ** 2 <= r2) out[(z * height + y) * width + x] = 1;
  }
}
