import type * as z from 'zod';

// A yes/no validator compiled from a zod schema's definition: true exactly when the schema
// accepts the value, without building the parsed copy or any issue. zod spends about 1 µs per
// object, 40 ms on a 10,000-node document; the guard answers in a few, and zod runs only on a
// document the guard refuses, to name each mistake. It reads the schema, so it cannot drift
// from it; schema.test.ts checks the two agree on random documents. It knows the kinds of
// schema the document schema uses and refuses to compile any other (guardOf gives undefined).

export type Guard = (v: unknown) => boolean;
type Def = z.core.$ZodTypeDef & Record<string, unknown>;
type Check = z.core.$ZodCheck & { _zod: { def: Record<string, unknown> } };

/**
 * The guard of `schema`, or undefined when it uses a kind of schema the guard does not know.
 * Generated as JavaScript source where the platform allows it (as zod and Ajv do: a field read
 * as `v.id` is several times faster than `v[name]` in a loop over names), else closures.
 */
export function guardOf(schema: z.core.$ZodType, opts: { generate?: boolean } = {}): Guard | undefined {
  try {
    if (opts.generate !== false) {
      const generated = generate(schema);
      if (generated) return generated;
    }
    return build(schema, new Map());
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

/**
 * The guard as one generated function per container schema. The source names only the
 * schema's own keys (quoted with JSON.stringify) and constants passed in `K`; no document text
 * reaches it. Undefined where the platform refuses generated code (a page's CSP).
 */
function generate(root: z.core.$ZodType): Guard | undefined {
  const names = new Map<z.core.$ZodType, string>();
  const functions: string[] = [];
  const K: unknown[] = [];
  const constant = (c: unknown) => `K[${K.push(c) - 1}]`;
  const named = (s: z.core.$ZodType): string => {
    let name = names.get(s);
    if (name) return name;
    name = `g${names.size}`;
    names.set(s, name);
    functions.push(`function ${name}(v) {\n${body(s)}\n}`);
    return name;
  };
  // A boolean expression: does `x` (an identifier) pass `s`?
  const test = (s: z.core.$ZodType, x: string): string => {
    const def = s._zod.def as Def;
    const checks = ((def.checks as Check[] | undefined) ?? []).map((c) => checkSource(c, x, constant));
    return [typeSource(def, s, x), ...checks].join(' && ');
  };
  const typeSource = (def: Def, s: z.core.$ZodType, x: string): string => {
    switch (def.type) {
      case 'string':
        return `typeof ${x} === "string"`;
      case 'number':
        return `typeof ${x} === "number" && Number.isFinite(${x})`;
      case 'boolean':
        return `typeof ${x} === "boolean"`;
      case 'never':
        return 'false';
      case 'literal':
      case 'enum': {
        const values = def.type === 'literal' ? (def.values as unknown[]) : Object.values(def.entries as Record<string, unknown>);
        if (!values.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) throw new Unsupported('literal');
        return `(${values.map((v) => `${x} === ${JSON.stringify(v)}`).join(' || ')})`;
      }
      case 'optional':
        return `(${x} === undefined || (${test(def.innerType as z.core.$ZodType, x)}))`;
      case 'union':
        return `(${(def.options as z.core.$ZodType[]).map((o) => `(${test(o, x)})`).join(' || ')})`;
      case 'array':
      case 'record':
      case 'object':
        return `${named(s)}(${x})`;
      case 'lazy':
        return test((def.getter as () => z.core.$ZodType)(), x);
      default:
        throw new Unsupported(String(def.type));
    }
  };
  const body = (s: z.core.$ZodType): string => {
    const def = s._zod.def as Def;
    const isObject = 'if (typeof v !== "object" || v === null || Array.isArray(v)) return false;';
    if (def.type === 'array')
      return `if (!Array.isArray(v)) return false;\nfor (let i = 0; i < v.length; i++) { const x = v[i]; if (!(${test(def.element as z.core.$ZodType, 'x')})) return false; }\nreturn true;`;
    if (def.type === 'record') {
      return `${isObject}\nfor (const k in v) { if (!Object.hasOwn(v, k)) continue; const x = v[k]; if (!(${test(def.keyType as z.core.$ZodType, 'k')}) || !(${test(def.valueType as z.core.$ZodType, 'x')})) return false; }\nreturn true;`;
    }
    const catchall = def.catchall as z.core.$ZodType | undefined;
    if (!catchall || (catchall._zod.def as Def).type !== 'never') throw new Unsupported('object without strict keys');
    const shape = def.shape as Record<string, z.core.$ZodType>;
    const keys = Object.keys(shape);
    const lines = [isObject, 'let n = 0;', 'let x;'];
    for (const k of keys) {
      const f = shape[k];
      lines.push(`x = v[${JSON.stringify(k)}];`);
      if ((f._zod.def as Def).type === 'optional')
        lines.push(`if (x !== undefined) { n++; if (!(${test((f._zod.def as Def).innerType as z.core.$ZodType, 'x')})) return false; }`);
      else lines.push(`if (x !== undefined) n++;`, `if (!(${test(f, 'x')})) return false;`);
    }
    // As many keys as fields present: no other key; else look (a key set to undefined counts as written).
    lines.push('let c = 0;', 'for (const k in v) c++;', `return c === n || ${constant(onlyKeys(keys))}(v);`);
    return lines.join('\n');
  };
  const rootName = named(root);
  let make: (K: unknown[]) => Guard;
  try {
    make = new Function('K', `"use strict";\n${functions.join('\n')}\nreturn ${rootName};`) as (K: unknown[]) => Guard;
  } catch {
    return undefined;
  }
  return make(K);
}

/** Whether every own key of an object is one of `keys`. */
function onlyKeys(keys: string[]): (v: Record<string, unknown>) => boolean {
  const known = new Set(keys);
  return (v) => Object.keys(v).every((k) => known.has(k));
}

function checkSource(c: Check, x: string, constant: (c: unknown) => string): string {
  const d = c._zod.def;
  switch (d.check) {
    case 'min_length':
      return `${x}.length >= ${Number(d.minimum)}`;
    case 'max_length':
      return `${x}.length <= ${Number(d.maximum)}`;
    case 'greater_than':
      return `${x} ${d.inclusive ? '>=' : '>'} ${Number(d.value)}`;
    case 'less_than':
      return `${x} ${d.inclusive ? '<=' : '<'} ${Number(d.value)}`;
    case 'number_format':
      if (d.format !== 'safeint') throw new Unsupported(`number format ${String(d.format)}`);
      return `Number.isSafeInteger(${x})`;
    case 'string_format':
      if (d.format !== 'regex') throw new Unsupported(`string format ${String(d.format)}`);
      return `${constant(d.pattern)}.test(${x})`;
    case 'custom': {
      const fn = d.fn as ((v: unknown) => unknown) | undefined;
      if (!fn || fn.length > 1) throw new Unsupported('custom check');
      return `${constant(fn)}(${x}) === true`;
    }
    default:
      throw new Unsupported(`check ${String(d.check)}`);
  }
}

class Unsupported extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function build(s: z.core.$ZodType, memo: Map<z.core.$ZodType, Guard>): Guard {
  const known = memo.get(s);
  if (known) return known;
  // A recursive schema (a node holding a composite holding nodes) reaches itself: the
  // forwarder stands in until the guard is built.
  let built: Guard | undefined;
  memo.set(s, (v) => built!(v));
  const def = s._zod.def as Def;
  const checks = ((def.checks as Check[] | undefined) ?? []).map(checkGuard);
  // The common leaf, a non-empty string (ids), in one closure: it is most of a document's values.
  if (def.type === 'string' && checks.length === 1 && checks[0].minLength !== undefined) {
    const min = checks[0].minLength;
    built = (v) => typeof v === 'string' && v.length >= min;
  } else built = all(typeGuard(def, memo), ...checks);
  memo.set(s, built);
  return built;
}

/** One guard true when every one of `guards` is (no array walk per value for the usual one or two). */
function all(first: Guard, ...rest: Guard[]): Guard {
  if (rest.length === 0) return first;
  if (rest.length === 1) {
    const [a] = rest;
    return (v) => first(v) && a(v);
  }
  const tail = all(rest[0], ...rest.slice(1));
  return (v) => first(v) && tail(v);
}

function typeGuard(def: Def, memo: Map<z.core.$ZodType, Guard>): Guard {
  const sub = (x: unknown) => build(x as z.core.$ZodType, memo);
  switch (def.type) {
    case 'string':
      return (v) => typeof v === 'string';
    case 'number':
      return (v) => typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return (v) => typeof v === 'boolean';
    case 'never':
      return () => false;
    case 'literal': {
      const values = def.values as unknown[];
      return (v) => values.includes(v);
    }
    case 'enum': {
      const values = Object.values(def.entries as Record<string, unknown>);
      return (v) => values.includes(v);
    }
    case 'optional': {
      const inner = sub(def.innerType);
      return (v) => v === undefined || inner(v);
    }
    case 'array': {
      const element = sub(def.element);
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
        return true;
      };
    }
    case 'record': {
      const key = sub(def.keyType);
      const value = sub(def.valueType);
      return (v) => {
        if (!isObject(v)) return false;
        const keys = Object.keys(v);
        for (let i = 0; i < keys.length; i++) if (!(key(keys[i]) && value(v[keys[i]]))) return false;
        return true;
      };
    }
    case 'union': {
      const options = (def.options as unknown[]).map(sub);
      return (v) => {
        for (const o of options) if (o(v)) return true;
        return false;
      };
    }
    case 'lazy': {
      let inner: Guard | undefined;
      return (v) => (inner ??= sub((def.getter as () => unknown)()))(v);
    }
    case 'object': {
      // The shape is read on first use: a getter in it (`graph`) may name a schema defined later.
      let byKey: Record<string, Guard> | undefined;
      let required: string[];
      const catchall = def.catchall as z.core.$ZodType | undefined;
      // Strict objects catch every other key with `never`; the document has no other kind.
      if (!catchall || (catchall._zod.def as Def).type !== 'never') throw new Unsupported('object without strict keys');
      return (v) => {
        if (!isObject(v)) return false;
        if (!byKey) {
          const shape = def.shape as Record<string, z.core.$ZodType>;
          // No prototype: a key such as "constructor" finds no guard.
          byKey = Object.create(null) as Record<string, Guard>;
          for (const k of Object.keys(shape)) byKey[k] = sub(shape[k]);
          required = Object.keys(shape).filter((k) => !(shape[k]._zod.def.type === 'optional'));
        }
        // The value's own keys, each to its field's guard: V8 reads `v[k]` in a for-in from its
        // key cache, where a loop over the schema's names made a slow keyed load per field.
        for (const k in v) {
          const g = byKey[k];
          if (g === undefined) {
            if (Object.hasOwn(v, k)) return false;
            continue;
          }
          if (!g(v[k])) return false;
        }
        for (let i = 0; i < required.length; i++) if (!(required[i] in v)) return false;
        return true;
      };
    }
    default:
      throw new Unsupported(String(def.type));
  }
}

function checkGuard(c: Check): Guard & { minLength?: number } {
  const d = c._zod.def;
  switch (d.check) {
    case 'min_length': {
      const min = d.minimum as number;
      return Object.assign((v: unknown) => (v as { length: number }).length >= min, { minLength: min });
    }
    case 'max_length': {
      const max = d.maximum as number;
      return (v) => (v as { length: number }).length <= max;
    }
    case 'greater_than': {
      const min = d.value as number;
      return d.inclusive ? (v) => (v as number) >= min : (v) => (v as number) > min;
    }
    case 'less_than': {
      const max = d.value as number;
      return d.inclusive ? (v) => (v as number) <= max : (v) => (v as number) < max;
    }
    case 'number_format':
      if (d.format !== 'safeint') throw new Unsupported(`number format ${String(d.format)}`);
      return (v) => Number.isSafeInteger(v);
    case 'string_format': {
      if (d.format !== 'regex') throw new Unsupported(`string format ${String(d.format)}`);
      const pattern = d.pattern as RegExp;
      return (v) => {
        pattern.lastIndex = 0;
        return pattern.test(v as string);
      };
    }
    case 'custom': {
      // A refinement: its predicate as is (`.refine(fn)`); any other custom check through
      // zod's own code, on a payload as a parse makes.
      const fn = d.fn as ((v: unknown) => unknown) | undefined;
      if (fn && fn.length <= 1) return (v) => fn(v) === true;
      return (v) => {
        const payload = { value: v, issues: [] as unknown[] };
        (c._zod.check as (p: unknown) => void)(payload);
        return payload.issues.length === 0;
      };
    }
    default:
      throw new Unsupported(`check ${String(d.check)}`);
  }
}
