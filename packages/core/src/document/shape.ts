import type * as z from 'zod';
import { editDistance } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import { guardOf } from './guard.js';
import { documentSchema } from './schema.js';

// The shape check: the document against its schema (schema.ts), every zod issue turned into
// a diagnostic naming the element as written and the fix. Runs on anything (a parsed file, a
// store snapshot) and never throws.

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

const guard = guardOf(documentSchema);

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return String(v);
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** Diagnostics for every key the format does not have and every field of the wrong type; empty when the shape is right. */
export function checkShape(doc: Record<string, unknown>): Diagnostic[] {
  // Most documents are right: the guard says so without zod's copy of the document.
  if (guard?.(doc)) return [];
  const result = documentSchema.safeParse(doc);
  if (result.success) return [];
  const out: Diagnostic[] = [];
  for (const issue of result.error.issues) mapIssue(issue, [], doc, out);
  return renamed(out);
}

/** A required key missing beside an unknown key near its name (`mappings`): the fix is a rename, said on both. */
function renamed(out: Diagnostic[]): Diagnostic[] {
  const unknown = new Map(out.filter((d) => d.message.startsWith('unknown key')).map((d) => [d.path, d]));
  for (const d of out) {
    if (d.message !== 'is missing') continue;
    const dot = d.path.lastIndexOf('.');
    const [parent, key] = dot < 0 ? ['', d.path] : [d.path.slice(0, dot), d.path.slice(dot + 1)];
    for (const [path, u] of unknown) {
      const written = path.slice(parent ? parent.length + 1 : 0);
      if ((parent ? path.startsWith(`${parent}.`) : !path.includes('.')) && !written.includes('.') && nearest(written, [key]) === key) {
        d.hint = `it is written "${written}": rename that to "${key}"`;
        u.hint = `rename it to "${key}"`;
      }
    }
  }
  return out;
}

/** `app.nodes[3].params.width` from ['app', 'nodes', 3, 'params', 'width']. */
export function formatPath(path: Path): string {
  let s = '';
  for (const k of path) s += typeof k === 'number' ? `[${k}]` : s ? `.${String(k)}` : String(k);
  return s;
}

function valueAt(root: unknown, path: Path): unknown {
  let v = root;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

/** A custom text of schema.ts (`say`): message, newline, hint. */
function custom(issue: Issue): { message: string; hint?: string } | undefined {
  const at = issue.message.indexOf('\n');
  if (at < 0) return undefined;
  return { message: issue.message.slice(0, at), hint: issue.message.slice(at + 1) || undefined };
}

/** How a number field is named in a message (`bandwidth must be positive`). */
function what(path: Path): string {
  const key = String(path[path.length - 1] ?? 'value');
  if (key === 'cpuMemory' || key === 'gpuMemory') return 'memory';
  if (key === 'memoryBandwidth') return 'memory bandwidth';
  return typeof path[path.length - 1] === 'string' ? key : 'value';
}

function mapIssue(issue: Issue, prefix: Path, root: unknown, out: Diagnostic[]): void {
  const path = [...prefix, ...issue.path];
  const at = formatPath(path);
  const v = valueAt(root, path);
  const own = custom(issue);
  if (own && issue.code !== 'invalid_union') return void out.push(error(at, own.message, own.hint));
  switch (issue.code) {
    case 'unrecognized_keys':
      for (const key of issue.keys) out.push(unknownKey(path, key));
      return;
    case 'invalid_union': {
      // Report the alternative the value was meant to be: one whose own type it has (an
      // object for `{ node }`), else the union's own message.
      const fits = issue.errors.filter((branch) => !branch.some((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_union')));
      if (fits.length && typeof v === 'object' && v !== null) {
        const best = fits.reduce((a, b) => (b.length < a.length ? b : a));
        for (const i of best) mapIssue(i, path, root, out);
        return;
      }
      // NaN and Infinity are numbers to typeof but no JSON value: say so rather than list the alternatives.
      if (typeof v === 'number' && !Number.isFinite(v)) return void out.push(error(at, `must be a finite number, not ${v}`));
      return void out.push(error(at, own ? own.message : `must be ${expectedOf(issue)}, not ${describe(v)}`, own?.hint));
    }
    case 'invalid_type':
      if (v === undefined) return void out.push(error(at, 'is missing', issue.expected === 'array' ? 'write [] for none' : undefined));
      return void out.push(error(at, typeMessage(issue.expected, v)));
    case 'invalid_value':
      return void out.push(error(at, `must be one of ${issue.values.map(String).join(', ')}, not ${describe(v)}`));
    case 'too_small':
      if (issue.origin === 'string') return void out.push(error(at, `must be a non-empty string, not ${describe(v)}`));
      if (Number(issue.minimum) === 0 && !issue.inclusive)
        return void out.push(error(at, `${what(path)} must be positive, not ${describe(v)}`, 'use a value greater than 0'));
      return void out.push(error(at, `${what(path)} must be at least ${issue.minimum}, not ${describe(v)}`));
    case 'too_big':
      return void out.push(error(at, `${what(path)} must be at most ${issue.maximum}, not ${describe(v)}`));
    case 'invalid_format':
      if (issue.format === 'regex')
        return void out.push(error(at, `${describe(v)} is not a parameter name`, 'a name is a letter or _, then letters, digits or _'));
      return void out.push(error(at, `must be a ${issue.format}, not ${describe(v)}`));
    case 'invalid_key': {
      const key = String(issue.path.length ? path[path.length - 1] : '');
      return void out.push(error(at, `"${key}" is not a parameter name`, 'a name is a letter or _, then letters, digits or _'));
    }
    default:
      out.push(error(at, issue.message));
  }
}

function typeMessage(expected: string, v: unknown): string {
  switch (expected) {
    case 'object':
      return `must be an object, not ${describe(v)}`;
    case 'array':
      return `must be an array, not ${describe(v)}`;
    case 'string':
      return `must be a string, not ${describe(v)}`;
    case 'boolean':
      return `must be true or false, not ${describe(v)}`;
    case 'int':
      return typeof v === 'number' && Number.isFinite(v) ? `must be an integer, not ${v}` : `must be an integer, not ${describe(v)}`;
    case 'number':
      return `must be a finite number, not ${describe(v)}`;
    default:
      return `must be ${expected}, not ${describe(v)}`;
  }
}

function expectedOf(issue: Extract<Issue, { code: 'invalid_union' }>): string {
  const kinds = issue.errors.flatMap((b) => b.filter((i) => i.path.length === 0 && i.code === 'invalid_type').map((i) => (i as { expected: string }).expected));
  return [...new Set(kinds)].join(' or ') || 'something else';
}

function unknownKey(path: Path, key: string): Diagnostic {
  const at = formatPath([...path, key]);
  if (path[path.length - 1] === 'init')
    return error(at, `unknown key "${key}"`, 'an edge\'s init is a number (the value of every initial token) or { "node": "<id of a source node>" }');
  const valid = keysAt(path);
  const near = nearest(key, valid);
  return error(at, `unknown key "${key}"`, near ? `did you mean "${near}"?` : `keys here: ${valid.join(', ') || 'none'}`);
}

/** The keys the schema allows in the object at `path` (a document path, indices included). */
export function keysAt(path: Path): string[] {
  let at: z.core.$ZodType[] = [documentSchema];
  for (const k of path) at = at.flatMap((s) => step(s, k));
  return [...new Set(at.flatMap((s) => objectsOf(s).flatMap((o) => Object.keys(o._zod.def.shape))))];
}

/** The object schemas `s` may be (unwrapping optionals and unions). */
function objectsOf(s: z.core.$ZodType): z.core.$ZodObject[] {
  const def = s._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  if (def.type === 'object') return [s as z.core.$ZodObject];
  if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default') return objectsOf(def.innerType as z.core.$ZodType);
  if (def.type === 'union') return (def.options as z.core.$ZodType[]).flatMap(objectsOf);
  if (def.type === 'lazy') return objectsOf((def.getter as () => z.core.$ZodType)());
  return [];
}

function step(s: z.core.$ZodType, key: PropertyKey): z.core.$ZodType[] {
  const def = s._zod.def as z.core.$ZodTypeDef & Record<string, unknown>;
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return step(def.innerType as z.core.$ZodType, key);
    case 'lazy':
      return step((def.getter as () => z.core.$ZodType)(), key);
    case 'union':
      return (def.options as z.core.$ZodType[]).flatMap((o) => step(o, key));
    case 'object': {
      const shape = (s as z.core.$ZodObject)._zod.def.shape;
      return typeof key === 'string' && Object.hasOwn(shape, key) ? [shape[key]] : [];
    }
    case 'array':
      return typeof key === 'number' ? [def.element as z.core.$ZodType] : [];
    case 'record':
      return [def.valueType as z.core.$ZodType];
    default:
      return [];
  }
}

/** The valid key nearest `key` (edit distance, case ignored), when near enough to be a slip. */
export function nearest(key: string, valid: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of valid) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  // A slip: a few edits, fewer than half the word (`mappings` -> `mapping`, not `foo` -> `app`),
  // or the key spelt out (`maximum` -> `max`).
  if (best !== undefined && bestD <= Math.max(1, Math.min(3, Math.floor(best.length / 2)))) return best;
  return valid.find((k) => k.length >= 3 && key.toLowerCase().startsWith(k.toLowerCase()));
}
