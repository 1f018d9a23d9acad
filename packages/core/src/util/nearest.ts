// "Did you mean": the candidate nearest to a misspelt name, for diagnostics.

/** Levenshtein distance (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

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
