// Parameter expressions as text (core document/expr.ts parses and evaluates them): the names an
// expression reads, and the expression with names replaced, for ungrouping a composite whose
// params become the values written in its inner expressions.

// A number first, so the `e3` of `1e3` is never taken for a name.
const TOKEN = /(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)/g;
const FUNCTIONS = new Set(['min', 'max']);

/** The parameter names an expression reads (not `min`/`max`). */
export function expressionNames(expr: string): string[] {
  const out: string[] = [];
  for (const m of expr.matchAll(TOKEN)) if (m[2] && !FUNCTIONS.has(m[2]) && !out.includes(m[2])) out.push(m[2]);
  return out;
}

/** The expression with each name in `values` replaced by its text (already parenthesised where it needs to be). */
export function substituteNames(expr: string, values: ReadonlyMap<string, string>): string {
  return expr.replace(TOKEN, (all, num: string | undefined, name: string | undefined) => (name !== undefined && values.has(name) ? values.get(name)! : all));
}
