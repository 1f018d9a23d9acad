import { ELEMENT_BYTES, type DataType, type KernelBinary, type KernelSpec, type KernelSplit, type ParamSpec, type Params, type PortSpec } from './types.js';
import { binaryPorts } from './binary-modes.js';

// What a kernel definition must satisfy, for built-ins and packages alike, and what is read
// from one without running it: the ports a node's params give (variadic ports expanded) and
// the manifest an agent reports (data, no code). Reachable from the specs entry: no WGSL
// compiler, no WebGPU here (the WGSL side of `defineKernel` is in define.ts).

/** One thing wrong with a kernel definition or a package: names the kernel, the element and the fix. */
export interface KernelProblem {
  kernel: string;
  /** The element of the definition, e.g. `inputs[1].type` or `params.width.default`. */
  path: string;
  message: string;
  hint?: string;
}

export function formatKernelProblem(p: KernelProblem): string {
  return `kernel "${p.kernel}"${p.path ? ` ${p.path}` : ''}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`;
}

/** Thrown by `defineKernel` for a bad definition: its problems are data (package loaders print them, never a stack). */
export class KernelDefinitionError extends Error {
  constructor(readonly problems: KernelProblem[]) {
    super(problems.map(formatKernelProblem).join('\n'));
    this.name = 'KernelDefinitionError';
  }
}

const ID = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const PORT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The major version of a semver string (NaN when it is not one). */
export function majorOf(version: string): number {
  return SEMVER.test(version) ? Number(version.split('.')[0]) : NaN;
}

/** Every problem of a spec: id, version, params, ports (type functions probed at the params' defaults and bounds), cost. */
export function checkKernelSpec(spec: KernelSpec): KernelProblem[] {
  const out: KernelProblem[] = [];
  const id = typeof spec?.id === 'string' && spec.id ? spec.id : '(no id)';
  const bad = (path: string, message: string, hint?: string) => out.push({ kernel: id, path, message, hint });
  if (typeof spec !== 'object' || spec === null)
    return [{ kernel: id, path: '', message: 'is not an object', hint: 'pass defineKernel({ id, version, ... })' }];
  if (!ID.test(String(spec.id))) bad('id', `"${String(spec.id)}" is not a namespaced id`, 'use <package>.<name> in lower case, e.g. "acme.sobel"');
  if (typeof spec.version !== 'string' || !SEMVER.test(spec.version))
    bad('version', `"${String(spec.version)}" is not a semver version`, 'use MAJOR.MINOR.PATCH, e.g. "1.0.0"');
  if (typeof spec.description !== 'string' || !spec.description.trim()) bad('description', 'is empty', 'say in a sentence what one firing computes');
  if (typeof spec.cost !== 'function') bad('cost', 'is not a function', 'give cost: (params) => ({ flops, bytes }) for one firing');
  const params = spec.params ?? {};
  for (const [name, p] of Object.entries(params)) checkParam(name, p, bad);
  for (const side of ['inputs', 'outputs'] as const) {
    const ports = spec[side];
    if (!Array.isArray(ports)) {
      bad(side, 'is not a list of ports', `give ${side}: [{ name, type: (params) => ({ kind, element, shape }) }]`);
      continue;
    }
    ports.forEach((port, i) => {
      const at = `${side}[${i}]`;
      if (!PORT.test(String(port?.name))) bad(`${at}.name`, `"${String(port?.name)}" is not a port name`, 'use letters, digits and _, starting with a letter');
      if (typeof port?.type !== 'function') bad(`${at}.type`, 'is not a function', 'give type: (params) => ({ kind, element, shape })');
      if (port?.repeat !== undefined) {
        const p = params[port.repeat];
        if (!p || p.type !== 'int')
          bad(
            `${at}.repeat`,
            `names "${port.repeat}", which is not an int param of this kernel`,
            'declare an int param (e.g. inputs: { type: "int", default: 2, min: 1, max: 16 }) and name it here',
          );
      }
      if (port?.rate !== undefined && typeof port.rate !== 'number' && typeof port.rate !== 'function')
        bad(`${at}.rate`, 'is neither a number nor a function', 'give rate: a positive integer, or (params) => a positive integer');
    });
  }
  const names = [...(spec.inputs ?? []), ...(spec.outputs ?? [])].map((p) => p?.name);
  for (const n of new Set(names.filter((n, i) => names.indexOf(n) !== i)))
    bad('inputs', `two ports are named "${n}"`, 'give every input and output its own name');
  if (spec.split !== undefined) checkSplit(spec, bad);
  if (out.length) return out;
  // A type function that throws or gives no valid type for some params the kernel accepts is
  // found here, not at a user's compile: probe the defaults and each numeric param's bounds.
  const all = probes(spec);
  const base = all[0];
  for (const probe of all) {
    let ports: { inputs: PortSpec[]; outputs: PortSpec[] };
    try {
      ports = portsFor(spec, probe);
    } catch (e) {
      bad('inputs', `its ports cannot be listed for params ${JSON.stringify(probe)}: ${messageOf(e)}`);
      break;
    }
    let failed = false;
    for (const side of ['inputs', 'outputs'] as const) {
      for (const port of ports[side]) {
        const problem = typeProblem(port, probe);
        if (problem) {
          bad(
            `${side}.${port.name}.type`,
            `${problem} for params ${JSON.stringify(probe)}`,
            "make the type function accept every value in the params' ranges, or narrow the ranges",
          );
          failed = true;
        }
        const wrongRate = rateProblem(port, probe);
        if (wrongRate) {
          bad(
            `${side}.${port.name}.rate`,
            `${wrongRate} for params ${JSON.stringify(probe)}`,
            "give a positive integer (tokens per firing) for every value in the params' ranges",
          );
          failed = true;
        }
      }
    }
    if (failed) break;
    // The cost is only probed at the defaults: params out of joint constraints (first > last)
    // may give nonsense costs; such nodes are refused by their types or checks before costing.
    if (probe !== base) continue;
    try {
      const c = spec.cost(probe);
      if (!Number.isFinite(c?.flops) || !Number.isFinite(c?.bytes) || c.flops < 0 || c.bytes < 0)
        bad('cost', `gives ${JSON.stringify(c)} for params ${JSON.stringify(probe)}`, 'return { flops, bytes }, finite and >= 0');
    } catch (e) {
      bad('cost', `throws for params ${JSON.stringify(probe)}: ${messageOf(e)}`);
    }
    if (out.length) break;
  }
  return out;
}

/** A split names three distinct int params and a combine rule; its kernel has one output, element f32 (what `generic.sum` adds). */
function checkSplit(spec: KernelSpec, bad: (path: string, message: string, hint?: string) => void): void {
  const split = spec.split;
  if (typeof split !== 'object' || split === null) return bad('split', 'is not an object', 'give split: { count, index, range, combine: "sum" }');
  const named = new Set<string>();
  for (const field of ['count', 'index', 'range'] as const) {
    const name = split[field];
    const p = typeof name === 'string' ? spec.params?.[name] : undefined;
    if (!p || p.type !== 'int')
      bad(
        `split.${field}`,
        `names ${JSON.stringify(name)}, which is not an int param of this kernel`,
        `declare an int param and name it here (${field === 'count' ? 'K, how many shares' : field === 'index' ? 'j < K, this share' : 'the bound on K'})`,
      );
    else if (named.has(name))
      bad(`split.${field}`, `names "${name}", already named by another split field`, 'count, index and range are three different params');
    named.add(name);
  }
  if (split.combine !== 'sum')
    bad('split.combine', `${JSON.stringify(split.combine)} is not a combine rule`, 'use "sum" (the shares\' outputs added in share order)');
  if (spec.ports !== undefined) bad('split', 'is declared on a kernel whose ports come from its params', 'a split kernel declares its one output in outputs');
  const outs = Array.isArray(spec.outputs) ? spec.outputs : [];
  if (outs.length !== 1 || outs[0]?.repeat !== undefined)
    return bad(
      'outputs',
      `a split kernel has exactly one output; this one has ${outs[0]?.repeat !== undefined ? 'a repeated output' : outs.length}`,
      "give it one output: the shares' outputs are summed into it",
    );
  try {
    const base: Params = {};
    for (const [name, p] of Object.entries(spec.params ?? {})) base[name] = p.default;
    const t = outs[0].type(base);
    if (t?.element !== 'f32')
      bad(
        `outputs.${outs[0].name}.type`,
        `a split kernel's output has element f32; this one has ${String(t?.element)}`,
        'sum shares in f32, or drop the split',
      );
  } catch {
    // The port probe below names a type function that throws.
  }
}

function checkParam(name: string, p: ParamSpec, bad: (path: string, message: string, hint?: string) => void): void {
  const at = `params.${name}`;
  if (!PORT.test(name)) bad(at, `"${name}" is not a param name`, 'use letters, digits and _, starting with a letter');
  if (!['int', 'float', 'bool', 'enum', 'string'].includes(p?.type))
    return bad(`${at}.type`, `"${String(p?.type)}" is not a param type`, 'use int, float, bool, enum or string');
  if (typeof p.description !== 'string' || !p.description.trim()) bad(`${at}.description`, 'is empty', 'say what the param sets (and its unit)');
  const d = p.default;
  if (p.type === 'int' || p.type === 'float') {
    if (typeof d !== 'number' || !Number.isFinite(d) || (p.type === 'int' && !Number.isInteger(d)))
      return bad(`${at}.default`, `${JSON.stringify(d)} is not ${p.type === 'int' ? 'an integer' : 'a number'}`);
    if (p.min !== undefined && p.max !== undefined && p.min > p.max) bad(`${at}.min`, `min ${p.min} is above max ${p.max}`);
    if ((p.min !== undefined && d < p.min) || (p.max !== undefined && d > p.max))
      bad(`${at}.default`, `${d} is outside its range ${p.min ?? '-inf'} .. ${p.max ?? 'inf'}`, 'pick a default within the range');
  } else if (p.type === 'bool') {
    if (typeof d !== 'boolean') bad(`${at}.default`, `${JSON.stringify(d)} is not true or false`);
  } else if (p.type === 'enum') {
    if (!Array.isArray(p.values) || !p.values.length) bad(`${at}.values`, 'lists no values', 'give values: ["a", "b"]');
    else if (!p.values.includes(String(d))) bad(`${at}.default`, `${JSON.stringify(d)} is not one of ${p.values.join(', ')}`);
  } else if (typeof d !== 'string') bad(`${at}.default`, `${JSON.stringify(d)} is not a string`);
}

/** The params a definition is probed with: the defaults, then each bounded numeric param at its min and at its max. */
function probes(spec: KernelSpec): Params[] {
  const base: Params = {};
  for (const [name, p] of Object.entries(spec.params)) base[name] = p.default;
  const out = [base];
  for (const [name, p] of Object.entries(spec.params)) {
    if (p.type !== 'int' && p.type !== 'float') continue;
    // A repeated port's count at its max would make thousands of ports: its min and one more do.
    const repeat = [...spec.inputs, ...spec.outputs].some((x) => x.repeat === name);
    for (const v of [p.min, repeat && p.min !== undefined ? Math.min(p.max ?? p.min + 1, p.min + 1) : p.max])
      if (v !== undefined && v !== p.default) out.push({ ...base, [name]: v });
  }
  return out;
}

function typeProblem(port: PortSpec, params: Params): string | undefined {
  let t: DataType;
  try {
    t = port.type(params, indexOf(port));
  } catch (e) {
    return `throws (${messageOf(e)})`;
  }
  if (!t || typeof t.kind !== 'string' || !(t.element in ELEMENT_BYTES) || !Array.isArray(t.shape))
    return `gives ${JSON.stringify(t)}, not a data type { kind, element: f32|u32|i32|u8, shape }`;
  if (!t.shape.every((d) => Number.isInteger(d) && d >= 1)) return `gives shape [${t.shape.join(', ')}], not positive integers`;
  return undefined;
}

function rateProblem(port: PortSpec, params: Params): string | undefined {
  let r: number;
  try {
    r = declaredRate(port, params);
  } catch (e) {
    return `throws (${messageOf(e)})`;
  }
  return Number.isInteger(r) && r >= 1 ? undefined : `gives ${JSON.stringify(r)}, not a positive integer`;
}

/** The tokens per firing a kernel's port declares for these params (1 when it declares none); may throw (a package's function). */
export function declaredRate(port: PortSpec, params: Params): number {
  return port.rate === undefined ? 1 : typeof port.rate === 'number' ? port.rate : port.rate(params);
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

// Expanded copies of a repeated port remember their index; the type function gets it.
const copyIndex = new WeakMap<PortSpec, number>();
const indexOf = (p: PortSpec) => copyIndex.get(p);

// Expansions made once per kernel and port counts (a 10,000-node graph of one variadic kernel
// shares a few port lists).
const expanded = new WeakMap<KernelSpec, Map<string, { inputs: PortSpec[]; outputs: PortSpec[] }>>();

/** How many copies a repeated port has for these params (an out-of-range count is the param's error, reported elsewhere: 0 here). */
function countOf(spec: KernelSpec, port: PortSpec, params: Params): number {
  const v = Number(params[port.repeat!] ?? spec.params[port.repeat!]?.default);
  return Number.isInteger(v) && v >= 0 && v <= 4096 ? v : 0;
}

/**
 * The ports a node with these params has, variadic ports expanded (`in` repeated 3 times:
 * `in0`, `in1`, `in2`); the spec's own lists when it has no repeated port.
 */
export function portsFor(spec: KernelSpec, params: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  if (spec.ports) return declaredPorts(spec, params);
  const repeated = spec.inputs.some((p) => p.repeat) || spec.outputs.some((p) => p.repeat);
  if (!repeated) return spec;
  const counts = [...spec.inputs, ...spec.outputs].filter((p) => p.repeat).map((p) => countOf(spec, p, params));
  const key = counts.join(',');
  let byKey = expanded.get(spec);
  if (!byKey) expanded.set(spec, (byKey = new Map()));
  let ports = byKey.get(key);
  if (!ports) {
    const expand = (list: PortSpec[]) =>
      list.flatMap((p) => {
        if (!p.repeat) return [p];
        return Array.from({ length: countOf(spec, p, params) }, (_, i) => {
          const copy: PortSpec = {
            name: `${p.name}${i}`,
            description: p.description,
            type: (q: Params) => p.type(q, i),
            ...(p.rate !== undefined ? { rate: p.rate } : {}),
          };
          copyIndex.set(copy, i);
          return copy;
        });
      });
    ports = { inputs: expand(spec.inputs), outputs: expand(spec.outputs) };
    byKey.set(key, ports);
  }
  return ports;
}

// Ports declared by params, made once per kernel and params (few nodes declare their own).
const declared = new WeakMap<KernelSpec, Map<string, { inputs: PortSpec[]; outputs: PortSpec[] }>>();
function declaredPorts(spec: KernelSpec, params: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  let byKey = declared.get(spec);
  if (!byKey) declared.set(spec, (byKey = new Map()));
  const key = JSON.stringify(params);
  let ports = byKey.get(key);
  if (!ports) {
    if (byKey.size > 256) byKey.clear();
    ports = spec.ports!(params);
    byKey.set(key, ports);
  }
  return ports;
}

/** The spec as one node with these params sees it: variadic ports expanded (the spec itself when it has none). */
export function specFor(spec: KernelSpec, params: Params): KernelSpec {
  const ports = portsFor(spec, params);
  if (ports === spec) return spec;
  let views = specViews.get(ports);
  if (!views) specViews.set(ports, (views = { ...spec, inputs: ports.inputs, outputs: ports.outputs }));
  return views;
}
const specViews = new WeakMap<object, KernelSpec>();

/** A port in a manifest: its name, what it carries at the kernel's default params, whether it repeats. */
export interface PortManifest {
  name: string;
  description?: string;
  /** `formatDataType` of the port's type at the default params (types are functions; this is the example). */
  type: string;
  repeat?: string;
  /** Tokens per firing at the default params, when the port declares a rate. */
  rate?: number;
}

/** What an agent reports about a kernel: data, no code (no type functions, no WGSL, no twin). */
export interface KernelManifest {
  id: string;
  version: string;
  package: string;
  title: string;
  category: string;
  description: string;
  params: Record<string, ParamSpec>;
  inputs: PortManifest[];
  outputs: PortManifest[];
  stateful: boolean;
  deterministic: boolean;
  gpuOnly: boolean;
  /** How a firing splits into shares (a node's `tasks`), when the kernel declares it. */
  split?: KernelSplit;
  /** A binary operator's kernel: the operator as data, with its payload words W at the default params. */
  binary?: KernelBinary & { words: number };
  /** Has a CPU twin / a GPU implementation (absent from specs-only manifests). */
  cpu?: boolean;
  gpu?: boolean;
}

export function kernelManifest(spec: KernelSpec & { cpu?: unknown; gpu?: unknown }): KernelManifest {
  const base: Params = {};
  for (const [name, p] of Object.entries(spec.params)) base[name] = p.default;
  const port = (p: PortSpec): PortManifest => {
    let type: string;
    try {
      const t = p.type(base, p.repeat ? 0 : undefined);
      type = `${t.kind}<${t.element}>[${t.shape.join('x')}]`;
    } catch {
      type = '?';
    }
    let rate: number | undefined;
    try {
      rate = p.rate === undefined ? undefined : declaredRate(p, base);
    } catch {
      rate = undefined;
    }
    return {
      name: p.name,
      ...(p.description ? { description: p.description } : {}),
      type,
      ...(p.repeat ? { repeat: p.repeat } : {}),
      ...(rate !== undefined ? { rate } : {}),
    };
  };
  // Params as plain data: a JSON round trip drops nothing a ParamSpec holds.
  const params = JSON.parse(JSON.stringify(spec.params)) as Record<string, ParamSpec>;
  return {
    id: spec.id,
    version: spec.version,
    package: spec.package ?? 'builtin',
    title: spec.title,
    category: spec.category,
    description: spec.description,
    params,
    inputs: spec.inputs.map(port),
    outputs: spec.outputs.map(port),
    stateful: spec.stateful === true,
    deterministic: spec.deterministic !== false,
    gpuOnly: spec.gpuOnly === true,
    ...(spec.split ? { split: { ...spec.split } } : {}),
    ...(spec.binary ? { binary: { ...spec.binary, context: [...spec.binary.context], words: binaryWords(spec, base) } } : {}),
    ...('cpu' in spec || 'gpu' in spec ? { cpu: typeof spec.cpu === 'function', gpu: spec.gpu !== undefined } : {}),
  };
}

/** A binary kernel's payload words at these params, from its first input's type (u32[m][2 + W]); -1 when it gives none. */
function binaryWords(spec: KernelSpec, params: Params): number {
  try {
    const t = portsFor(spec, params).inputs[0].type(params);
    return t.shape[t.shape.length - 1] - 2;
  } catch {
    return -1;
  }
}

/** What a definition may leave out: title and category default from the id, params and ports to none. */
export type KernelSpecInput = Omit<KernelSpec, 'title' | 'category' | 'params' | 'inputs' | 'outputs'> &
  Partial<Pick<KernelSpec, 'title' | 'category' | 'params' | 'inputs' | 'outputs'>>;

/** A checked spec (no implementation): what the built-ins' spec files and `defineKernel` both go through. Throws KernelDefinitionError. */
export function defineKernelSpec(input: KernelSpecInput): KernelSpec {
  const id = String(input?.id ?? '');
  const spec: KernelSpec = {
    ...input,
    title: input.title ?? id.slice(id.indexOf('.') + 1),
    category: input.category ?? id.slice(0, Math.max(0, id.indexOf('.'))),
    params: input.params ?? {},
    inputs: input.inputs ?? [],
    outputs: input.outputs ?? [],
  };
  const problems = checkKernelSpec(spec);
  if (problems.length) throw new KernelDefinitionError(problems);
  return spec;
}

/** The built-ins' version: they change with this repository, and say so in their major number when a document would break. */
export const BUILTIN_VERSION = '1.0.0';

/** The built-in families' specs, checked by `defineKernelSpec` like any package's (nothing built in skips a check). */
export function builtinSpecs(list: Omit<KernelSpecInput, 'version'>[]): KernelSpec[] {
  return list.map((s) => defineKernelSpec({ version: BUILTIN_VERSION, package: 'builtin', ...s }));
}

/** One `@group(g) @binding(b) var<...>` of a WGSL module, as text (no compiler needed). */
export interface WgslBinding {
  group: number;
  binding: number;
  /** `storage-read`, `storage-read_write`, `uniform` or another address space as written. */
  kind: string;
  name: string;
  line: number;
}

/** The resource bindings a WGSL module declares, read from its text. */
export function wgslBindings(source: string): WgslBinding[] {
  const out: WgslBinding[] = [];
  const re = /@group\(\s*(\d+)\s*\)\s*@binding\(\s*(\d+)\s*\)\s*var\s*(<[^>]*>)?\s*([A-Za-z_][A-Za-z0-9_]*)/g;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    const space = (m[3] ?? '<handle>').slice(1, -1).replace(/\s+/g, '').split(',');
    const kind = space[0] === 'storage' ? `storage-${space[1] ?? 'read'}` : space[0];
    out.push({ group: Number(m[1]), binding: Number(m[2]), kind, name: m[4], line: source.slice(0, m.index).split('\n').length });
  }
  return out;
}

/**
 * What is wrong between a module's bindings and the ports it must bind in order: inputs as
 * `var<storage, read>` at bindings 0.., outputs as `var<storage, read_write>` after them, then
 * one `var<uniform>` when the kernel has uniforms (`uniform`: 'required' | 'optional' | 'none').
 */
export function bindingProblems(source: string, inputs: readonly string[], outputs: readonly string[], uniform: 'required' | 'optional' | 'none'): string[] {
  const found = wgslBindings(source);
  const problems: string[] = [];
  const want = [
    ...inputs.map((p) => ({ port: `input "${p}"`, kind: 'storage-read', decl: 'var<storage, read>' })),
    ...outputs.map((p) => ({ port: `output "${p}"`, kind: 'storage-read_write', decl: 'var<storage, read_write>' })),
  ];
  if (uniform !== 'none') want.push({ port: 'the uniforms', kind: 'uniform', decl: 'var<uniform>' });
  want.forEach((w, i) => {
    const b = found.find((x) => x.group === 0 && x.binding === i);
    if (!b) {
      if (!(w.kind === 'uniform' && uniform === 'optional')) problems.push(`binding ${i} (${w.port}) is missing: declare @group(0) @binding(${i}) ${w.decl}`);
    } else if (b.kind !== w.kind) problems.push(`binding ${i} "${b.name}" (line ${b.line}) is ${b.kind}, but ${w.port} needs ${w.decl}`);
  });
  for (const b of found) {
    if (b.group !== 0 || b.binding >= want.length)
      problems.push(
        `@group(${b.group}) @binding(${b.binding}) "${b.name}" (line ${b.line}) matches no declared port (ports bind 0..${want.length - 1} of group 0 in order: ${want.map((w) => w.port).join(', ') || 'none'})`,
      );
  }
  return problems;
}

/** `kind<element>[AxB]` (formatDataType's text) back to a data type; undefined when it is not one. */
function parseDataType(text: string): DataType | undefined {
  const m = /^(.*)<(f32|u32|i32|u8)>\[(\d+(?:x\d+)*)\]$/.exec(text);
  return m ? { kind: m[1], element: m[2] as DataType['element'], shape: m[3].split('x').map(Number) } : undefined;
}

/**
 * A spec from a manifest an agent reported (data, no code), so the designer can place and
 * check a package's kernels it has not loaded: each port keeps the type the manifest shows
 * (the one at the default params; the package's own type functions run on the agents and in
 * the CLI), variadic ports still expand from their count param, and the cost is its bytes.
 */
export function specFromManifest(m: KernelManifest): KernelSpec {
  const port = (p: PortManifest): PortSpec => {
    const t = parseDataType(p.type);
    return {
      name: p.name,
      ...(p.description ? { description: p.description } : {}),
      ...(p.repeat ? { repeat: p.repeat } : {}),
      ...(p.rate !== undefined ? { rate: p.rate } : {}),
      type: () => {
        if (!t) throw new Error(`the agents reported no type for port ${p.name}`);
        return t;
      },
    };
  };
  const inputs = m.inputs.map(port);
  const outputs = m.outputs.map(port);
  const bytes = [...m.inputs, ...m.outputs].reduce((sum, p) => {
    const t = parseDataType(p.type);
    return sum + (t ? t.shape.reduce((a, b) => a * b, 1) * ELEMENT_BYTES[t.element] : 0);
  }, 0);
  return {
    id: m.id,
    version: m.version,
    package: m.package,
    title: m.title,
    category: m.category,
    description: m.description,
    params: m.params,
    inputs,
    outputs,
    stateful: m.stateful,
    deterministic: m.deterministic,
    gpuOnly: m.gpuOnly,
    ...(m.split ? { split: m.split } : {}),
    ...(m.binary ? binaryFromManifest(m, inputs) : {}),
    cost: () => ({ flops: 0, bytes }),
  };
}

/** A binary kernel's mode-dependent ports from its manifest: payload words and context types as at the default params. */
function binaryFromManifest(m: KernelManifest, inputs: PortSpec[]): Pick<KernelSpec, 'binary' | 'ports'> {
  const { words, ...binary } = m.binary!;
  const context = inputs.filter((p) => binary.context.includes(p.name));
  return { binary, ports: (p) => binaryPorts(m.id, String(p.mode ?? 'scan'), Number(p.count ?? 1), words, context, binary.identity) };
}
