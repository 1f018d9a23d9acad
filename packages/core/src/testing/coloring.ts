/**
 * The least cost over every colouring of `weights.length` items, a colour costing its heaviest
 * member and `conflict(i, j)` forbidding two items one colour: items in turn join a colour whose
 * members they conflict with none of, or start one. Exponential: for the memory tests' small PEs.
 */
export function optimalColoringCost(weights: readonly number[], conflict: (i: number, j: number) => boolean): number {
  const groups: number[][] = [];
  let best = Infinity;
  const walk = (i: number) => {
    if (i === weights.length) {
      best = Math.min(
        best,
        groups.reduce((s, g) => s + Math.max(...g.map((k) => weights[k])), 0),
      );
      return;
    }
    for (const g of groups) {
      if (g.some((k) => conflict(k, i))) continue;
      g.push(i);
      walk(i + 1);
      g.pop();
    }
    groups.push([i]);
    walk(i + 1);
    groups.pop();
  };
  walk(0);
  return best;
}
