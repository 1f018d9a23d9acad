import { BUILTIN_VERSION, KernelDefinitionError, defineKernelSpec, type KernelProblem } from './definition.js';
import { applications, BINARY_MODES, binaryPorts, MAX_COUNT, MAX_WORDS, type BinaryMode } from './binary-modes.js';
import type { CostHint, KernelBinary, KernelSpec, ParamSpec, Params, PortSpec } from './types.js';

// A binary operator (+) : T x T -> T as ONE kernel with a `mode` param: what the scan
// macro-node's expansion fires (apply one pair, scan / reduce / propagate a worker's block,
// exclusive output). This file is the spec side (reachable from the specs entry: no WGSL, no
// twin); define-binary.ts joins a spec to the operator's CPU and WGSL applications;
// binary-modes.ts holds the token format and each mode's ports.

/** What a user writes for an operator, less its applications (spec side; `defineBinaryKernel` adds `apply`). */
export interface BinaryOperatorSpec {
  /** Namespaced id, the kernel's (`acme.compose`). */
  id: string;
  title?: string;
  category?: string;
  description: string;
  version: string;
  package?: string;
  /** The operator's own params (e.g. k); `mode` and `count` are added and reserved. */
  params?: Record<string, ParamSpec>;
  /** Payload words W of one element for these params (0 .. MAX_WORDS). */
  words: (params: Params) => number;
  binary: {
    /** exact: any bracketing gives the same bits; approximate: within `tolerance` of the serial result; none: serial only. */
    associativity: 'exact' | 'approximate' | 'none';
    commutative: boolean;
    /** The identity's payload (W words). Needed by mode `exclusive` only. */
    identity?: (params: Params) => number[];
    /** approximate only: largest difference from the serial result, in the operator's own measure (its description says which). */
    tolerance?: number;
    /** Extra inputs every application reads (e.g. frames), bound after the mode's inputs. */
    context?: PortSpec[];
    /**
     * What the payload words are: 'u32' (default; unchecked) or 'f32' bit patterns, whose every
     * application's result is checked on the CPU twin and in the WGSL: a NaN or an infinity
     * fails the firing, naming the operands' ranges (the run stops there and keeps its trace).
     */
    payload?: 'u32' | 'f32';
  };
  /** Cost of ONE application; a firing costs applications x this. */
  cost: (params: Params) => CostHint;
  deterministic?: boolean;
}

/** What binaryKernelSpec keeps of an operator for define-binary.ts: its words, identity and context. */
export interface BinaryOperatorData {
  words: (params: Params) => number;
  identity?: (params: Params) => number[];
  context: PortSpec[];
  /** Results checked finite (binary.payload 'f32'). */
  finite: boolean;
}
const operators = new WeakMap<KernelSpec, BinaryOperatorData>();

/** The operator behind a spec made by binaryKernelSpec (undefined for any other spec). */
export function binaryOperatorOf(spec: KernelSpec): BinaryOperatorData | undefined {
  return operators.get(spec);
}

const RESERVED_PARAMS = ['mode', 'count'];
const MODE_PORTS = ['a', 'b', 'in', 'out', 'total', 'prefix', 'block'];

/** The params a definition is probed with: the defaults, then each bounded numeric param at its min and max. */
function probeParams(params: Record<string, ParamSpec>): Params[] {
  const base: Params = {};
  for (const [name, p] of Object.entries(params)) base[name] = p?.default;
  const out = [base];
  for (const [name, p] of Object.entries(params)) {
    if (p?.type !== 'int' && p?.type !== 'float') continue;
    for (const v of [p.min, p.max]) if (v !== undefined && v !== p.default) out.push({ ...base, [name]: v });
  }
  return out;
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Every problem of an operator's spec side (the fields defineKernelSpec does not know): words, binary, reserved names. */
export function binaryProblems(def: BinaryOperatorSpec): KernelProblem[] {
  const id = typeof def?.id === 'string' && def.id ? def.id : '(no id)';
  const out: KernelProblem[] = [];
  const bad = (path: string, message: string, hint?: string) => out.push({ kernel: id, path, message, hint });
  if (typeof def !== 'object' || def === null)
    return [{ kernel: id, path: '', message: 'is not an object', hint: 'pass defineBinaryKernel({ id, version, words, binary, apply, cost, ... })' }];
  const params = def.params ?? {};
  for (const name of RESERVED_PARAMS)
    if (name in params)
      bad(`params.${name}`, `"${name}" is reserved: the kernel adds it (mode and count of every firing)`, "name the operator's param otherwise");
  const b = def.binary;
  if (typeof b !== 'object' || b === null) {
    bad('binary', 'is missing', 'give binary: { associativity: "exact" | "approximate" | "none", commutative: false, identity?: (params) => [...] }');
  } else {
    if (!['exact', 'approximate', 'none'].includes(b.associativity))
      bad(
        'binary.associativity',
        `${JSON.stringify(b.associativity)} is not exact, approximate or none`,
        'exact: every bracketing gives the same bits; approximate: within binary.tolerance of serial; none: only the serial network may run it',
      );
    if (typeof b.commutative !== 'boolean')
      bad(
        'binary.commutative',
        `${JSON.stringify(b.commutative)} is not true or false`,
        'say whether a (+) b = b (+) a (networks never swap operands either way)',
      );
    if (b.associativity === 'approximate') {
      if (typeof b.tolerance !== 'number' || !Number.isFinite(b.tolerance) || b.tolerance <= 0)
        bad(
          'binary.tolerance',
          `${JSON.stringify(b.tolerance)} is not a positive number`,
          'an approximate operator states how far from the serial result a re-bracketed one may be, in its own measure',
        );
    } else if (b.tolerance !== undefined) {
      bad(
        'binary.tolerance',
        `is given, but associativity is ${JSON.stringify(b.associativity)}`,
        b.associativity === 'none'
          ? 'a non-associative operator runs serially only: drop the tolerance, or declare associativity "approximate"'
          : 'an exact operator has no tolerance: drop it, or declare associativity "approximate"',
      );
    }
    if (b.payload !== undefined && b.payload !== 'u32' && b.payload !== 'f32')
      bad(
        'binary.payload',
        `${JSON.stringify(b.payload)} is not "u32" or "f32"`,
        'say what the payload words are: "f32" bit patterns have every result checked finite',
      );
    if (b.identity !== undefined && typeof b.identity !== 'function')
      bad('binary.identity', 'is not a function', "give identity: (params) => the identity's W payload words");
    if (b.context !== undefined) {
      if (!Array.isArray(b.context)) bad('binary.context', 'is not a list of ports', 'give context: [{ name, type: (params) => ({ kind, element, shape }) }]');
      else
        b.context.forEach((p, i) => {
          const name = String(p?.name);
          if (MODE_PORTS.includes(name) || /^(pl|op)_/i.test(name))
            bad(
              `binary.context[${i}].name`,
              `"${name}" is reserved (mode ports ${MODE_PORTS.join(', ')}; WGSL names pl_*, op_*)`,
              'name the context port otherwise',
            );
          if (p?.repeat !== undefined) bad(`binary.context[${i}].repeat`, 'a context port cannot repeat', 'declare each context port once');
          if (p?.rate !== undefined) bad(`binary.context[${i}].rate`, 'a context port has no rate', 'every firing reads the whole context: drop the rate');
        });
    }
  }
  if (typeof def.cost !== 'function') bad('cost', 'is not a function', 'give cost: (params) => ({ flops, bytes }) of one application');
  if (typeof def.words !== 'function') {
    bad('words', 'is not a function', 'give words: (params) => W, the payload words of one element (0 .. 1000)');
    return out;
  }
  for (const probe of probeParams(params)) {
    let w: number;
    try {
      w = def.words(probe);
    } catch (e) {
      bad('words', `throws for params ${JSON.stringify(probe)}: ${messageOf(e)}`);
      break;
    }
    if (!Number.isInteger(w) || w < 0 || w > MAX_WORDS) {
      bad(
        'words',
        `gives ${JSON.stringify(w)} for params ${JSON.stringify(probe)}, not an integer 0 .. ${MAX_WORDS}`,
        `return the payload words of one element; at most ${MAX_WORDS} (four copies fit a workgroup's 16 KiB)`,
      );
      break;
    }
    if (typeof b?.identity !== 'function') continue;
    let idw: number[];
    try {
      idw = b.identity(probe);
    } catch (e) {
      bad('binary.identity', `throws for params ${JSON.stringify(probe)}: ${messageOf(e)}`);
      break;
    }
    if (!Array.isArray(idw) || idw.length !== w || !idw.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff)) {
      bad(
        'binary.identity',
        `gives ${Array.isArray(idw) ? `${idw.length} values` : JSON.stringify(idw)} for params ${JSON.stringify(probe)}; needs ${w} u32 words (words(params))`,
        "return the identity's payload: W integers 0 .. 2^32 - 1",
      );
      break;
    }
  }
  return out;
}

/**
 * The checked spec of an operator's kernel: its params plus `mode` and `count`, ports by mode
 * (binaryPorts), cost = applications x the operator's cost, `binary` as data. Throws a
 * KernelDefinitionError listing every problem.
 */
export function binaryKernelSpec(def: BinaryOperatorSpec): KernelSpec {
  const problems = binaryProblems(def);
  if (problems.length) {
    // The common fields' problems too, in one list.
    try {
      defineKernelSpec({
        id: def?.id,
        version: def?.version,
        description: def?.description,
        params: def?.params,
        cost: def?.cost ?? (() => ({ flops: 0, bytes: 0 })),
      } as KernelSpec);
    } catch (e) {
      if (e instanceof KernelDefinitionError) problems.unshift(...e.problems.filter((p) => p.path !== 'cost'));
    }
    throw new KernelDefinitionError(problems);
  }
  const { words, binary: b, cost, params: own = {}, ...rest } = def;
  const context = [...(b.context ?? [])];
  const hasIdentity = typeof b.identity === 'function';
  const data: KernelBinary = {
    associativity: b.associativity,
    commutative: b.commutative,
    identity: hasIdentity,
    ...(b.tolerance !== undefined ? { tolerance: b.tolerance } : {}),
    context: context.map((p) => p.name),
    ...(b.payload === 'f32' ? { payload: 'f32' as const } : {}),
  };
  const params: Record<string, ParamSpec> = {
    ...own,
    mode: {
      type: 'enum',
      default: 'scan',
      values: [...BINARY_MODES],
      description:
        "apply: a (+) b; scan: a block's inclusive scan and total; reduce: its total; propagate: prefix (+) each of a block; exclusive: identity, x0, x0 (+) x1, ... and total",
    },
    count: {
      type: 'int',
      default: 64,
      min: 1,
      max: MAX_COUNT,
      unit: 'elements',
      description: 'Elements m of a block (scan, reduce, propagate, exclusive; apply takes one and one)',
    },
  };
  const ports = (p: Params) => binaryPorts(def.id, String(p.mode ?? 'scan'), Number(p.count ?? 64), words(p), context, hasIdentity);
  const base: Params = Object.fromEntries(Object.entries(params).map(([n, s]) => [n, s.default]));
  const defaults = ports(base);
  const spec = defineKernelSpec({
    ...rest,
    version: def.version,
    category: def.category ?? 'Scan operators',
    params,
    inputs: defaults.inputs,
    outputs: defaults.outputs,
    ports,
    binary: data,
    cost: (p) => {
      const n = applications(String(p.mode ?? 'scan') as BinaryMode, Number(p.count ?? 64));
      const c = cost(p);
      return { flops: c.flops * n, bytes: c.bytes * n };
    },
  });
  operators.set(spec, { words, identity: b.identity, context, finite: b.payload === 'f32' });
  return spec;
}

/** The built-in operators' specs (version and package of the built-ins). */
export function builtinBinarySpecs(list: Omit<BinaryOperatorSpec, 'version'>[]): KernelSpec[] {
  return list.map((d) => binaryKernelSpec({ ...d, version: BUILTIN_VERSION, package: 'builtin' }));
}
