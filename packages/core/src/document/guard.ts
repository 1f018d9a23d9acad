import type * as z from 'zod';

// A yes/no validator compiled from a zod schema's definition: true exactly when the schema
// accepts the value, without building the parsed copy or any issue. zod spends about 1 µs per
// object, 40 ms on a 10,000-node document; the guard answers in a few, and zod runs only on a
// document the guard refuses, to name each mistake. It reads the schema, so it cannot drift
// from it; guard.test.ts checks the two agree on random documents. It knows the kinds of
// schema the document schema uses and refuses to compile any other (guardOf gives undefined).

export type Guard = (v: unknown) => boolean;
type Def = z.core.$ZodTypeDef & Record<string, unknown>;
type Check = z.core.$ZodCheck & { _zod: { def: Record<string, unknown> } };

/** The guard of `schema`, or undefined when it uses a kind of schema the guard does not know. */
export function guardOf(schema: z.core.$ZodType): Guard | undefined {
  try {
    return build(schema, new Map());
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
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
      let names: string[] | undefined;
      let guards: Guard[];
      let optional: boolean[];
      let known: Set<string>;
      const catchall = def.catchall as z.core.$ZodType | undefined;
      // Strict objects catch every other key with `never`; the document has no other kind.
      if (!catchall || (catchall._zod.def as Def).type !== 'never') throw new Unsupported('object without strict keys');
      return (v) => {
        if (!isObject(v)) return false;
        if (!names) {
          const shape = def.shape as Record<string, z.core.$ZodType>;
          names = Object.keys(shape);
          guards = names.map((k) => sub(shape[k]));
          optional = names.map((k) => shape[k]._zod.optin === 'optional' && shape[k]._zod.def.type === 'optional');
          known = new Set(names);
        }
        let present = 0;
        for (let i = 0; i < names.length; i++) {
          const x = v[names[i]];
          // An absent optional field needs no call (most of a node's fields are absent).
          if (x === undefined && optional[i]) continue;
          if (x !== undefined) present++;
          if (!guards[i](x)) return false;
        }
        // As many keys as fields present: no other key (a Set lookup per key was most of the time).
        let count = 0;
        for (const k in v) count++;
        if (count === present) return true;
        for (const k in v) if (!known.has(k) && Object.hasOwn(v, k)) return false;
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
