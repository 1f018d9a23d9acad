import { editDistance } from '@pipeloom/kernels/specs';

// "Did you mean": the candidate nearest to a misspelt name, for diagnostics.

/**
 * The candidate nearest to `name`; among equally near ones, one that contains it or is contained
 * in it (`N` for `NN`), then the first listed. Undefined when there are none.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  // Long names are compared by their first 64 characters: the distance is quadratic.
  const short = name.slice(0, 64);
  for (const c of candidates) {
    const cut = c.slice(0, 64);
    // Half a point for not sharing a substring: it only breaks ties.
    const d = editDistance(short, cut) + (cut.includes(short) || short.includes(cut) ? 0 : 0.5);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
