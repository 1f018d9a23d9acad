/**
 * Successor lists of a graph of `count` vertices as two flat arrays (CSR): the successors of
 * v are succ[start[v] .. start[v + 1]), in edge order. One allocation per array, no list per
 * vertex.
 */
export function successorLists(count: number, from: ArrayLike<number>, to: ArrayLike<number>): { start: Int32Array; succ: Int32Array } {
  const start = new Int32Array(count + 1);
  for (let e = 0; e < from.length; e++) start[from[e] + 1]++;
  for (let i = 0; i < count; i++) start[i + 1] += start[i];
  const fill = start.slice(0, count);
  const succ = new Int32Array(from.length);
  for (let e = 0; e < from.length; e++) succ[fill[from[e]]++] = to[e];
  return { start, succ };
}
