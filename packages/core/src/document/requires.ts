import { error, type Diagnostic } from '../diagnostics.js';
import { nearestName } from '../util/nearest.js';

// Capability requirements (the Boss/Worker paper's "required capability"): a node's `requires`
// is a list of clauses KEY OP VALUE that must all hold on the PE that fires it. Agents report
// each PE's capabilities at login (PeReport.capabilities); static mode checks the mapping
// against them before a run, and `pipeloom agents --match` lists which PEs meet a list.

/** What an agent reports of one PE: its kind and, for GPUs, its WebGPU adapter. */
export interface PeCapabilities {
  kind: 'cpu' | 'gpu';
  /** CPU: cores of the host. */
  cores?: number;
  /** Bytes for buffers. */
  memory?: number;
  vendor?: string;
  architecture?: string;
  device?: string;
  description?: string;
  /** The WebGPU backend (opengl, vulkan, metal, d3d12). */
  backend?: string;
  featureLevel?: 'compatibility' | 'core';
  features?: string[];
  limits?: Record<string, number>;
  /** A software adapter (llvmpipe, SwiftShader, a fallback adapter), and how that was derived. */
  software?: boolean;
  softwareWhy?: string;
}

export type Op = '=' | '!=' | '>=' | '<=' | '>' | '<';

/** One parsed clause; `name` is the limit's or feature's name for `limit.<name>` and `feature`. */
export interface Clause {
  text: string;
  key: Key;
  name?: string;
  op: Op;
  value: string | number | boolean;
}

type Key = 'kind' | 'software' | 'backend' | 'vendor' | 'featureLevel' | 'feature' | 'limit' | 'cores' | 'memory';
const KEYS: readonly Key[] = ['kind', 'software', 'backend', 'vendor', 'featureLevel', 'feature', 'limit', 'cores', 'memory'];
/** How a key's values compare: numbers order, featureLevel orders compatibility < core, the others are text (= and != only). */
const TYPE: Record<Key, 'number' | 'text' | 'bool' | 'level'> = {
  kind: 'text',
  software: 'bool',
  backend: 'text',
  vendor: 'text',
  featureLevel: 'level',
  feature: 'text',
  limit: 'number',
  cores: 'number',
  memory: 'number',
};
/** Keys that say something of a GPU's adapter only: with kind=cpu they cannot hold. */
const GPU_ONLY = new Set<Key>(['software', 'backend', 'featureLevel', 'feature', 'limit']);
const LEVELS = ['compatibility', 'core'];
const KINDS = ['cpu', 'gpu'];

/** WebGPU's limits and features (the names a clause may use; an adapter may report more). */
export const WEBGPU_LIMITS: readonly string[] = [
  'maxTextureDimension1D',
  'maxTextureDimension2D',
  'maxTextureDimension3D',
  'maxTextureArrayLayers',
  'maxBindGroups',
  'maxBindGroupsPlusVertexBuffers',
  'maxBindingsPerBindGroup',
  'maxDynamicUniformBuffersPerPipelineLayout',
  'maxDynamicStorageBuffersPerPipelineLayout',
  'maxSampledTexturesPerShaderStage',
  'maxSamplersPerShaderStage',
  'maxStorageBuffersPerShaderStage',
  'maxStorageTexturesPerShaderStage',
  'maxUniformBuffersPerShaderStage',
  'maxUniformBufferBindingSize',
  'maxStorageBufferBindingSize',
  'minUniformBufferOffsetAlignment',
  'minStorageBufferOffsetAlignment',
  'maxVertexBuffers',
  'maxBufferSize',
  'maxVertexAttributes',
  'maxVertexBufferArrayStride',
  'maxInterStageShaderVariables',
  'maxColorAttachments',
  'maxColorAttachmentBytesPerSample',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersInFragmentStage',
  'maxStorageBuffersInVertexStage',
  'maxStorageTexturesInFragmentStage',
  'maxStorageTexturesInVertexStage',
];
export const WEBGPU_FEATURES: readonly string[] = [
  'core-features-and-limits',
  'depth-clip-control',
  'depth32float-stencil8',
  'texture-compression-bc',
  'texture-compression-bc-sliced-3d',
  'texture-compression-etc2',
  'texture-compression-astc',
  'texture-compression-astc-sliced-3d',
  'timestamp-query',
  'indirect-first-instance',
  'shader-f16',
  'rg11b10ufloat-renderable',
  'bgra8unorm-storage',
  'float32-filterable',
  'float32-blendable',
  'clip-distances',
  'dual-source-blending',
  'subgroups',
  'texture-formats-tier1',
  'texture-formats-tier2',
  'primitive-index',
  'texture-component-swizzle',
];

const MAX_CLAUSES = 32;
const MAX_TEXT = 200;
const CLAUSE = /^\s*([A-Za-z][\w.-]*)\s*(>=|<=|!=|=|>|<)\s*(.*?)\s*$/;
const BYTES: Record<string, number> = { '': 1, B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

/**
 * Parses a node's `requires` (or `--match`'s list). Every mistake is a diagnostic at
 * `${at}[j]` naming the fix: an unknown key, limit or feature (with the nearest name), an
 * ordering on a text key, a value that does not parse, clauses that contradict each other.
 */
export function parseRequires(texts: readonly unknown[], at: string): { clauses: Clause[]; diagnostics: Diagnostic[] } {
  const clauses: Clause[] = [];
  const diagnostics: Diagnostic[] = [];
  const fail = (j: number, message: string, hint: string) => diagnostics.push(error(`${at}[${j}]`, message, hint));
  if (texts.length > MAX_CLAUSES) {
    diagnostics.push(error(at, `${texts.length} clauses, more than ${MAX_CLAUSES}`, 'keep the clauses that matter'));
    return { clauses, diagnostics };
  }
  texts.forEach((raw, j) => {
    if (typeof raw !== 'string' || raw.length > MAX_TEXT)
      return fail(
        j,
        `a clause is text of at most ${MAX_TEXT} characters`,
        'write KEY OP VALUE, e.g. "kind=gpu" or "limit.maxStorageBufferBindingSize>=268435456"',
      );
    const m = CLAUSE.exec(raw);
    if (!m)
      return fail(
        j,
        `"${raw}" is not a clause KEY OP VALUE`,
        `keys: ${KEYS.map((k) => (k === 'limit' ? 'limit.<name>' : k)).join(', ')}; OP one of = != >= <= > <`,
      );
    const [, word, op, text] = m as unknown as [string, string, Op, string];
    const dot = word.indexOf('.');
    const head = dot < 0 ? word : word.slice(0, dot);
    const key = KEYS.find((k) => k === head);
    if (!key || (key === 'limit') !== dot >= 0) {
      const near = nearestName(word, [...KEYS.filter((k) => k !== 'limit'), ...WEBGPU_LIMITS.map((l) => `limit.${l}`)]);
      return fail(
        j,
        `unknown key "${word}"${near ? ` (did you mean "${near}"?)` : ''}`,
        `keys: ${KEYS.map((k) => (k === 'limit' ? 'limit.<name>' : k)).join(', ')}`,
      );
    }
    let name: string | undefined;
    if (key === 'limit') {
      name = word.slice(dot + 1);
      if (!WEBGPU_LIMITS.includes(name))
        return fail(
          j,
          `unknown limit "${name}"${nearestName(name, WEBGPU_LIMITS) ? ` (did you mean "${nearestName(name, WEBGPU_LIMITS)}"?)` : ''}`,
          'name a WebGPU limit (GPUSupportedLimits)',
        );
    }
    const type = TYPE[key];
    if ((type === 'text' || type === 'bool') && op !== '=' && op !== '!=')
      return fail(
        j,
        `"${raw}": ${key} is ${type === 'bool' ? 'true or false' : 'text'}, so it takes = or != only, not ${op}`,
        `write ${key}=... or ${key}!=...`,
      );
    let value: string | number | boolean = text;
    if (type === 'number') {
      const v = /^(\d+(?:\.\d+)?(?:e\d+)?)\s*([KMGT]i?B|B)?$/i.exec(text);
      const unit = v?.[2] ? Object.keys(BYTES).find((u) => u.toLowerCase() === v[2].toLowerCase()) : '';
      if (!v || unit === undefined || (unit && key !== 'memory' && key !== 'limit'))
        return fail(
          j,
          `"${raw}": ${JSON.stringify(text)} is not a number${key === 'memory' ? ' of bytes' : ''}`,
          key === 'memory' ? 'write bytes, or a size such as 8GiB' : 'write a number',
        );
      value = Number(v[1]) * BYTES[unit];
    } else if (type === 'bool') {
      if (text !== 'true' && text !== 'false')
        return fail(j, `"${raw}": ${key} is true or false, not ${JSON.stringify(text)}`, `write ${key}=true or ${key}=false`);
      value = text === 'true';
    } else if (type === 'level') {
      if (!LEVELS.includes(text)) return fail(j, `"${raw}": featureLevel is compatibility or core, not ${JSON.stringify(text)}`, 'compatibility < core');
    } else if (key === 'kind' && !KINDS.includes(text))
      return fail(j, `"${raw}": kind is cpu or gpu, not ${JSON.stringify(text)}`, 'write kind=cpu or kind=gpu');
    else if (key === 'feature' && !WEBGPU_FEATURES.includes(text))
      return fail(
        j,
        `unknown feature "${text}"${nearestName(text, WEBGPU_FEATURES) ? ` (did you mean "${nearestName(text, WEBGPU_FEATURES)}"?)` : ''}`,
        'name a WebGPU feature (GPUFeatureName)',
      );
    else if (text === '') return fail(j, `"${raw}" has no value`, `write ${key}${op}<value>`);
    clauses.push({ text: raw.trim(), key, ...(name ? { name } : {}), op, value });
  });
  if (!diagnostics.length) {
    const c = contradiction(clauses);
    if (c) diagnostics.push(error(at, `the clauses "${c[0].text}" and "${c[1].text}" cannot both hold`, 'remove one of them'));
  }
  return { clauses, diagnostics };
}

/** Two clauses no PE can meet together: kind=cpu beside an adapter clause, two values of one key, an empty range. */
function contradiction(clauses: Clause[]): [Clause, Clause] | undefined {
  const cpu = clauses.find((c) => c.key === 'kind' && ((c.op === '=' && c.value === 'cpu') || (c.op === '!=' && c.value === 'gpu')));
  if (cpu) {
    // A CPU reports no adapter, so it meets an adapter clause only as "!=".
    const gpuOnly = clauses.find((c) => GPU_ONLY.has(c.key) && c.op !== '!=');
    if (gpuOnly) return [cpu, gpuOnly];
  }
  // Per key (and limit name): the values every clause allows must overlap.
  const groups = new Map<string, Clause[]>();
  for (const c of clauses) if (c.key !== 'feature') groups.set(`${c.key}.${c.name ?? ''}`, [...(groups.get(`${c.key}.${c.name ?? ''}`) ?? []), c]);
  for (const list of groups.values()) {
    for (let a = 0; a < list.length; a++) for (let b = a + 1; b < list.length; b++) if (!overlap(list[a], list[b])) return [list[a], list[b]];
  }
  const has = clauses.filter((c) => c.key === 'feature' && c.op === '=');
  const lacks = clauses.filter((c) => c.key === 'feature' && c.op === '!=');
  for (const h of has) for (const l of lacks) if (h.value === l.value) return [h, l];
  return undefined;
}

/** Whether some value meets both clauses (of one key). */
function overlap(a: Clause, b: Clause): boolean {
  if (a.op === '!=' || b.op === '!=') {
    // Only "= v" beside "!= v" excludes everything (a range keeps other values).
    const [eq, ne] = a.op === '!=' ? [b, a] : [a, b];
    return !(eq.op === '=' && eq.value === ne.value);
  }
  if (TYPE[a.key] === 'text' || TYPE[a.key] === 'bool') return a.value === b.value;
  // Numbers and feature levels: the two ranges must meet.
  const rank = (c: Clause) => (TYPE[c.key] === 'level' ? LEVELS.indexOf(String(c.value)) : (c.value as number));
  const lo = (c: Clause) => (c.op === '<' || c.op === '<=' ? -Infinity : rank(c));
  const hi = (c: Clause) => (c.op === '>' || c.op === '>=' ? Infinity : rank(c));
  const from = Math.max(lo(a), lo(b));
  const to = Math.min(hi(a), hi(b));
  if (from < to) return true;
  if (from > to) return false;
  // One point: both must include it (a strict bound excludes it).
  const includes = (c: Clause) => c.op !== '>' && c.op !== '<';
  return (
    (lo(a) === from ? includes(a) : true) && (hi(a) === to ? includes(a) : true) && (lo(b) === from ? includes(b) : true) && (hi(b) === to ? includes(b) : true)
  );
}

/** The first clause the PE fails, or undefined when it meets them all. */
export function failingClause(caps: PeCapabilities, clauses: readonly Clause[]): Clause | undefined {
  return clauses.find((c) => !holds(caps, c));
}

function holds(caps: PeCapabilities, c: Clause): boolean {
  if (c.key === 'feature') {
    const has = caps.features?.includes(String(c.value)) ?? false;
    return c.op === '=' ? has : !has;
  }
  const actual: string | number | boolean | undefined =
    c.key === 'limit'
      ? caps.limits?.[c.name!]
      : c.key === 'featureLevel'
        ? caps.featureLevel === undefined
          ? undefined
          : LEVELS.indexOf(caps.featureLevel)
        : caps[c.key];
  const want = c.key === 'featureLevel' ? LEVELS.indexOf(String(c.value)) : c.value;
  // A PE that does not report the key meets only a "!=" clause (a CPU has no adapter).
  if (actual === undefined) return c.op === '!=';
  switch (c.op) {
    case '=':
      return actual === want;
    case '!=':
      return actual !== want;
    case '>=':
      return (actual as number) >= (want as number);
    case '<=':
      return (actual as number) <= (want as number);
    case '>':
      return (actual as number) > (want as number);
    case '<':
      return (actual as number) < (want as number);
  }
}

/** What a PE reports for a clause's key, as text (for messages: "software is true (llvmpipe)"). */
export function reported(caps: PeCapabilities, c: Clause): string {
  if (c.key === 'feature') return caps.features?.length ? `features ${caps.features.join(', ')}` : 'no features';
  const v = c.key === 'limit' ? caps.limits?.[c.name!] : caps[c.key];
  const what = c.key === 'limit' ? `limit.${c.name}` : c.key;
  if (v === undefined) return `no ${what}`;
  return `${what} is ${String(v)}${c.key === 'software' && caps.softwareWhy ? ` (${caps.softwareWhy})` : ''}`;
}

/**
 * Capabilities as a peer reported them, bounded and typed (strings cut to 256 characters, at
 * most 256 features and 128 limits, numbers finite): what the coordinator keeps of a welcome.
 */
export function boundedCapabilities(x: unknown): PeCapabilities | undefined {
  if (!x || typeof x !== 'object') return undefined;
  const o = x as Record<string, unknown>;
  if (o.kind !== 'cpu' && o.kind !== 'gpu') return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 256) : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const out: PeCapabilities = { kind: o.kind };
  for (const k of ['cores', 'memory'] as const) if (num(o[k]) !== undefined) out[k] = num(o[k]);
  for (const k of ['vendor', 'architecture', 'device', 'description', 'backend', 'softwareWhy'] as const) if (text(o[k]) !== undefined) out[k] = text(o[k]);
  if (o.featureLevel === 'compatibility' || o.featureLevel === 'core') out.featureLevel = o.featureLevel;
  if (typeof o.software === 'boolean') out.software = o.software;
  if (Array.isArray(o.features))
    out.features = o.features
      .slice(0, 256)
      .filter((f): f is string => typeof f === 'string')
      .map((f) => f.slice(0, 64));
  if (o.limits && typeof o.limits === 'object') {
    const limits: Record<string, number> = Object.create(null);
    for (const [k, v] of Object.entries(o.limits as Record<string, unknown>).slice(0, 128)) if (num(v) !== undefined) limits[k.slice(0, 64)] = v as number;
    out.limits = limits;
  }
  return out;
}
