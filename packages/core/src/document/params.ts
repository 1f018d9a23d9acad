import { findKernel, type ParamValue } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import { nearestName } from '../util/nearest.js';
import { evaluateParsed, parseExpression, type ExprNode } from './expr.js';
import type { AppEdge, AppNode, CompositeDef, DocumentParams, Expr, ParamDef, ProjectDocument, WrittenDocument } from './types.js';

// Parameters: the document's `params` (and each composite instance's) evaluated in dependency
// order into a scope, and the expressions of node params, rates and edge delays replaced by
// their values. Scopes nest lexically: a composite's inner graph reads the composite's params
// first, then the document's (an inline graph also those of the graph around it). The flatten
// step (flatten.ts) builds one scope per composite instance and substitutes every node and edge
// with the scope it was written in.

/** Evaluated params of one scope, with the scope it falls back to. */
export interface ParamScope {
  values: Map<string, number>;
  /** Params that could not be evaluated (already reported): what reads them is not reported again. */
  failed: Set<string>;
  parent?: ParamScope;
}

/** One param to evaluate: where its expression is written, the scope it is read in, and its bounds. */
interface Entry {
  name: string;
  written: unknown;
  /** Path of the expression (`params.N`, `params.N.value`, `app.nodes[2].params.K`). */
  path: string;
  /** Path bound problems are reported at. */
  at: string;
  /** The scope the expression reads (an instance's override reads the scope around the instance); undefined: the scope being built. */
  readsIn?: ParamScope;
  bounds?: ParamDef;
  /** The value already known (an override). */
  given?: number;
  /** Malformed (already reported): it fails, and what reads it is not reported again. */
  broken?: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function lookup(scope: ParamScope | undefined, name: string): number | 'failed' | undefined {
  for (let s = scope; s; s = s.parent) {
    if (s.failed.has(name)) return 'failed';
    const v = s.values.get(name);
    if (v !== undefined) return v;
  }
  return undefined;
}

function visibleNames(scope: ParamScope | undefined): string[] {
  const names: string[] = [];
  for (let s = scope; s; s = s.parent) names.push(...s.values.keys(), ...s.failed);
  return names;
}

/**
 * Evaluates one expression as written (a number passes through) in `scope`; undefined after a
 * diagnostic, or silently when it reads a param that already failed. `what` names the element
 * (`node "seg/open" param "nb_loop"`).
 */
export function evaluateIn(
  written: Expr,
  scope: ParamScope | undefined,
  path: string,
  what: string,
  out: Diagnostic[],
  parsed?: { expr: ExprNode; names: string[] },
): number | undefined {
  if (typeof written === 'number') {
    if (Number.isFinite(written)) return written;
    out.push(error(path, `${what} must be a finite number, not ${written}`, 'write a number or an expression such as "2 * N"'));
    return undefined;
  }
  if (typeof written !== 'string') {
    out.push(
      error(
        path,
        `${what} must be a number or an expression, not ${written === null ? 'null' : Array.isArray(written) ? 'an array' : typeof written}`,
        'write a number or an expression such as "2 * N"',
      ),
    );
    return undefined;
  }
  const p = parsed ?? parseExpression(written);
  if ('error' in p) {
    out.push(error(path, `${what}: ${p.error.message}`, 'write numbers and parameter names joined by + - * / %, with parentheses, min(...) and max(...)'));
    return undefined;
  }
  for (const name of p.names) {
    const v = lookup(scope, name);
    if (v === 'failed') return undefined;
    if (v === undefined) {
      // Not a name the expression already reads: "B * Q" with B defined suggests something else for Q.
      const near = nearestName(
        name,
        [...visibleNames(scope)].filter((n) => !p.names.includes(n)),
      );
      // Only this name unknown (the others read as 1), so the message names it and its column.
      const r = evaluateParsed(written, p.expr, (n) => (n === name ? undefined : 1));
      const message = !r.ok && r.error.unknown === name ? r.error.message : `expression ${JSON.stringify(written)}: unknown parameter "${name}"`;
      out.push(
        error(
          path,
          `${what}: ${message}`,
          near ? `did you mean "${near}"? Otherwise declare "${name}" in params` : `declare "${name}" in the document's params`,
        ),
      );
      return undefined;
    }
  }
  const r = evaluateParsed(written, p.expr, (n) => {
    const v = lookup(scope, n);
    return typeof v === 'number' ? v : undefined;
  });
  if (!r.ok) {
    out.push(
      error(
        path,
        `${what}: ${r.error.message}`,
        r.error.message.includes('by zero') ? 'change the parameters so the divisor is not 0' : 'keep the values within finite numbers',
      ),
    );
    return undefined;
  }
  return r.value;
}

/** Evaluates `entries` into a new scope under `parent`, in dependency order; cycles and bounds are reported. */
function evaluateScope(entries: Entry[], parent: ParamScope | undefined, label: string, out: Diagnostic[]): ParamScope {
  const scope: ParamScope = { values: new Map(), failed: new Set(), parent };
  const byName = new Map(entries.map((e) => [e.name, e]));
  const what = (name: string) => `parameter "${name}"${label}`;
  // Parse once; the names each reads inside this scope are its dependencies.
  const parsed = new Map<string, { expr: ExprNode; names: string[] } | undefined>();
  const deps = new Map<string, string[]>();
  for (const e of entries) {
    if (e.given !== undefined || typeof e.written !== 'string') continue;
    const p = parseExpression(e.written);
    if (!p.ok) continue; // evaluateIn reports it
    parsed.set(e.name, p);
    deps.set(e.name, e.readsIn ? [] : p.names.filter((n) => byName.has(n) && n !== undefined));
  }
  // Depth-first, iteratively (a long chain of params must not exhaust the stack): post-order is
  // dependency order; a name met again while on the stack closes a cycle.
  const state = new Map<string, 1 | 2>();
  const order: string[] = [];
  for (const root of entries) {
    if (state.has(root.name)) continue;
    const stack: { name: string; next: number }[] = [{ name: root.name, next: 0 }];
    state.set(root.name, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const ds = deps.get(top.name) ?? [];
      if (top.next >= ds.length) {
        state.set(top.name, 2);
        order.push(top.name);
        stack.pop();
        continue;
      }
      const d = ds[top.next++];
      const s = state.get(d);
      if (s === undefined) {
        state.set(d, 1);
        stack.push({ name: d, next: 0 });
      } else if (s === 1) {
        const from = stack.findIndex((x) => x.name === d);
        const cycle = [...stack.slice(from).map((x) => x.name), d];
        // Reported once, at its first member; every member fails (the others are not reported again).
        if (!cycle.slice(0, -1).some((n) => scope.failed.has(n))) {
          const first = byName.get(cycle[0])!;
          out.push(
            error(first.path, `parameter cycle ${cycle.join(' -> ')}${label}`, 'give one of these parameters a value that does not depend on the others'),
          );
        }
        for (const n of cycle) scope.failed.add(n);
      }
    }
  }
  for (const name of order) {
    const e = byName.get(name)!;
    if (e.broken) scope.failed.add(name);
    if (scope.failed.has(name)) continue;
    // Own params shadow the parent's: lookups for this one see the scope as filled so far.
    const value = e.given ?? evaluateIn(e.written as Expr, e.readsIn ?? scope, e.path, what(name), out, parsed.get(name));
    if (value === undefined) {
      scope.failed.add(name);
      continue;
    }
    const b = e.bounds;
    const bad =
      b?.integer && !Number.isInteger(value)
        ? `is ${value}, not an integer`
        : b?.min !== undefined && value < b.min
          ? `is ${value}, below its minimum ${b.min}`
          : b?.max !== undefined && value > b.max
            ? `is ${value}, above its maximum ${b.max}`
            : undefined;
    if (bad) {
      out.push(
        error(
          e.at,
          `${what(name)} ${bad}`,
          `use a ${b?.integer ? 'whole number' : 'value'}${b?.min !== undefined || b?.max !== undefined ? ` in ${b?.min ?? '-inf'} .. ${b?.max ?? 'inf'}` : ''}`,
        ),
      );
      scope.failed.add(name);
      continue;
    }
    scope.values.set(name, value);
  }
  return scope;
}

/** The entries of a `params` object as written at `path`; malformed definitions are reported. */
function entriesOf(params: unknown, path: string, out: Diagnostic[]): Entry[] {
  if (params === undefined) return [];
  if (!isObject(params)) {
    out.push(error(path, 'params must be an object of name -> value or expression', 'write { "N": 4, "W": "2 * N" }'));
    return [];
  }
  const entries: Entry[] = [];
  for (const name of Object.keys(params)) {
    const v = params[name];
    const at = `${path}.${name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name === 'min' || name === 'max') {
      out.push(error(at, `parameter name "${name}" is not an identifier`, 'use letters, digits and _, starting with a letter or _ (not min or max)'));
      continue;
    }
    if (isObject(v)) {
      const bad = (['min', 'max'] as const).find((k) => v[k] !== undefined && (typeof v[k] !== 'number' || !Number.isFinite(v[k])));
      if (bad) {
        out.push(error(`${at}.${bad}`, `parameter "${name}": ${bad} must be a number`, `write a number or leave ${bad} out`));
        entries.push({ name, written: undefined, path: at, at, broken: true });
        continue;
      }
      if (v.integer !== undefined && typeof v.integer !== 'boolean') {
        out.push(error(`${at}.integer`, `parameter "${name}": integer must be true or false`));
        entries.push({ name, written: undefined, path: at, at, broken: true });
        continue;
      }
      entries.push({ name, written: v.value, path: `${at}.value`, at, bounds: v as unknown as ParamDef });
    } else entries.push({ name, written: v, path: at, at });
  }
  return entries;
}

/** The document's params evaluated, `overrides` (`--param N=4`) replacing values; an override naming no param is reported. */
export function documentScope(doc: WrittenDocument, overrides: Record<string, number>, out: Diagnostic[]): ParamScope {
  const entries = entriesOf(doc.params, 'params', out);
  const byName = new Map(entries.map((e) => [e.name, e]));
  for (const [name, value] of Object.entries(overrides)) {
    const e = byName.get(name);
    if (!e) {
      const near = nearestName(name, byName.keys());
      out.push(
        error(
          'params',
          `the override ${name}=${value} names no parameter of the document`,
          near ? `did you mean "${near}"?` : 'the document declares no params',
        ),
      );
      continue;
    }
    e.given = value;
  }
  return evaluateScope(entries, undefined, '', out);
}

/**
 * The scope of one composite instance: the def's params (read in `lexical`, the scope the def is
 * written in), each overridden by the instance node's value (read in `around`, the scope the
 * instance is written in). `label` names the instance in messages.
 */
export function compositeScope(
  def: CompositeDef,
  defPath: string,
  instance: AppNode,
  instancePath: string,
  lexical: ParamScope,
  around: ParamScope,
  label: string,
  out: Diagnostic[],
): ParamScope {
  const entries = entriesOf(def.params, `${defPath}.params`, out);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const given = instance.params;
  if (given !== undefined && isObject(given)) {
    for (const name of Object.keys(given)) {
      const e = byName.get(name);
      const at = `${instancePath}.params.${name}`;
      if (!e) {
        const near = nearestName(name, byName.keys());
        out.push(
          error(
            at,
            `composite node "${label}" has no param "${name}"`,
            near ? `did you mean "${near}"? Params: ${[...byName.keys()].join(', ')}` : `declare it in ${defPath}.params`,
          ),
        );
        continue;
      }
      e.written = given[name];
      e.path = at;
      e.at = at;
      e.readsIn = around;
    }
  }
  return evaluateScope(entries, lexical, ` of composite node "${label}"`, out);
}

/**
 * A kernel node with its expressions replaced by values: numeric params (int and float in the
 * kernel's spec), rates and tasks. A node of an unknown kernel is returned as it is (validation reports
 * the kernel). `id` names it in messages (the flattened id).
 */
export function substituteNode(n: AppNode, path: string, scope: ParamScope | undefined, out: Diagnostic[]): AppNode {
  let params = n.params;
  // A scan node's numeric params are its operator's.
  const id =
    typeof n.kernel === 'string' ? n.kernel : n.type === 'scan' && isObject(n.params) && typeof n.params.operator === 'string' ? n.params.operator : undefined;
  const kernel = id === undefined ? undefined : findKernel(id);
  if (kernel && isObject(n.params)) {
    for (const name in n.params) {
      if (!Object.hasOwn(n.params, name)) continue;
      const v = n.params[name];
      const spec = kernel.params[name];
      if (typeof v !== 'string' || !spec || (spec.type !== 'int' && spec.type !== 'float')) continue;
      const value = evaluateIn(v, scope, `${path}.params.${name}`, `node "${n.id}" param "${name}"`, out);
      if (params === n.params) params = { ...n.params };
      (params as Record<string, ParamValue>)[name] = value ?? v;
    }
  }
  let rates = n.rates;
  if (isObject(n.rates)) {
    for (const port of Object.keys(n.rates)) {
      const v = n.rates[port];
      if (typeof v !== 'string') continue;
      const value = evaluateIn(v, scope, `${path}.rates.${port}`, `node "${n.id}" rate of "${port}"`, out);
      if (rates === n.rates) rates = { ...n.rates };
      rates![port] = value ?? v;
    }
  }
  const tasks = typeof n.tasks === 'string' ? (evaluateIn(n.tasks, scope, `${path}.tasks`, `node "${n.id}" tasks`, out) ?? n.tasks) : n.tasks;
  return params === n.params && rates === n.rates && tasks === n.tasks ? n : { ...n, params, rates, ...(tasks !== undefined ? { tasks } : {}) };
}

/** An edge with its delay expression replaced by its value. */
export function substituteEdge(e: AppEdge, path: string, scope: ParamScope | undefined, out: Diagnostic[]): AppEdge {
  if (typeof e.delay !== 'string') return e;
  const value = evaluateIn(e.delay, scope, `${path}.delay`, `the delay of the edge ${e.from?.node}.${e.from?.port} -> ${e.to?.node}.${e.to?.port}`, out);
  return { ...e, delay: value ?? e.delay };
}

/** A row of the designer's parameter panel. */
export interface ParamRow {
  name: string;
  /** The value or expression as written. */
  written: Expr;
  /** The evaluated value (the override's where one is given); absent when it fails. */
  value?: number;
  /** Why it has no value. */
  error?: string;
  min?: number;
  max?: number;
}

/** The document's params as the designer's panel shows them: as written, evaluated (with `overrides`), or the problem. */
export function paramTable(doc: ProjectDocument, overrides: Record<string, number> = {}): ParamRow[] {
  const diagnostics: Diagnostic[] = [];
  const scope = documentScope(doc, overrides, diagnostics);
  const params = isObject(doc.params) ? (doc.params as DocumentParams) : {};
  return Object.keys(params).map((name) => {
    const v = params[name];
    const def = isObject(v) ? (v as ParamDef) : undefined;
    const row: ParamRow = { name, written: def ? def.value : (v as Expr) };
    if (def?.min !== undefined) row.min = def.min;
    if (def?.max !== undefined) row.max = def.max;
    const value = scope.values.get(name);
    if (value !== undefined) row.value = value;
    else {
      const d = diagnostics.find((x) => x.path === `params.${name}` || x.path.startsWith(`params.${name}.`));
      row.error = d ? d.message : `parameter "${name}" has no value`;
    }
    return row;
  });
}

/**
 * The document with its params' values replaced by `overrides` (`--param N=4`): definitions keep
 * their bounds, checked when the document is compiled. An override naming no param is reported.
 * For callers that hand the document on whole (predict, runs, calibration); compile and analyze
 * take the overrides directly (`params` option).
 */
export function overrideParams(doc: ProjectDocument, overrides: Record<string, number>): { doc: ProjectDocument; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const names = Object.keys(overrides);
  if (names.length === 0) return { doc, diagnostics };
  const params: DocumentParams = isObject(doc.params) ? { ...(doc.params as DocumentParams) } : {};
  for (const name of names) {
    if (!Object.hasOwn(params, name)) {
      const near = nearestName(name, Object.keys(params));
      diagnostics.push(
        error(
          'params',
          `the override ${name}=${overrides[name]} names no parameter of the document`,
          near ? `did you mean "${near}"?` : 'the document declares no params',
        ),
      );
      continue;
    }
    const v = params[name];
    // defineProperty, not assignment: a param named __proto__ is a plain key.
    Object.defineProperty(params, name, {
      value: isObject(v) ? { ...(v as ParamDef), value: overrides[name] } : overrides[name],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { doc: { ...doc, params }, diagnostics };
}
