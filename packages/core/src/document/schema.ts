import { listKernels, type KernelSpec, type ParamSpec } from '@pipeloom/kernels/specs';
import * as z from 'zod';
import { EXECUTION_MODES, SYNC_MODES } from './types.js';
import { FORMAT } from './types.js';

// The document's schema, defined once: checkShape (shape.ts) validates with it, and
// schema.json is generated from it (scripts/schema.ts; a test keeps the committed file equal).
// It says which keys exist and which JSON type each has; every object is strict, so a key it
// does not name is an error. What needs the kernel registry or evaluated expressions (a
// param's range, a rate of 0, a cycle) is checked by the lowering steps and validate.ts; the
// published JSON Schema also carries each registered kernel's params (kernelParamsSchema) for
// editors and outside validators.

/**
 * A custom issue text: the message, then the hint after a newline (shape.ts splits them). Only
 * texts made here contain a newline, so the mapping tells them from zod's own.
 */
export const say = (message: string, hint = '') => `${message}\n${hint}`;

/** Parameter and composite-param names: identifiers, so expressions can name them. */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A bound on the host shorthand, so a typo cannot ask for millions of PEs. */
export const MAX_GPUS = 64;
/** Likewise for CPU PEs: a host's cores, each its own PE, every two linked (N(N-1)/2 links). */
export const MAX_CPUS = 256;
/** Most PEs one mapping entry may list (a node with tasks spreads its shares over them). */
export const MAX_PE_LIST = 4096;
/**
 * The most initial tokens one edge may carry (delays.ts refuses more, naming the edge): 2^30. A
 * delay is counted in the compiler's 32-bit columns (a read's lag is its delay plus the cycles
 * its data takes, a buffer's slots one more) and never iterated over (a buffer's initial tokens
 * are one range of slots). A run of N iterations reads only N initial tokens, so more is moot.
 */
export const MAX_DELAY = 2 ** 30;
export const LINK_KINDS = ['pcie', 'infiniband', 'ethernet', 'nvlink', 'loopback', 'memory'] as const;
export const PE_KINDS = ['cpu', 'gpu'] as const;

const name = z.string().min(1);
const finite = z.number();
const positive = z.number().positive();
const expressionText = z
  .string()
  .min(1)
  .meta({ id: 'expression', description: 'An expression over the document params: numbers, + - * / %, min, max, parentheses, param names.' });
/** A number or an expression (`"2 * N"`). */
const expr = z
  .union([finite, expressionText], { error: (iss) => (iss.code === 'invalid_union' ? say('must be a number or an expression such as "2 * N"') : undefined) })
  .meta({ id: 'numberOrExpression' });
/** A delay: a number or an expression; the bound is published for editors, and delays.ts checks it (also where an expression gives the value), naming the edge. */
const delayExpr = z.union([finite.meta({ maximum: MAX_DELAY }), expressionText], {
  error: (iss) => (iss.code === 'invalid_union' ? say('must be a number or an expression such as "2 * N"') : undefined),
});
const position = z.strictObject({ x: finite, y: finite }).meta({ id: 'position', description: 'Canvas position in the editor; ignored by the compiler.' });

const paramDef = z.strictObject({
  value: expr,
  min: finite.optional(),
  max: finite.optional(),
  integer: z.boolean().optional().meta({ description: 'The value must be a whole number (rates, sizes).' }),
  description: z.string().optional(),
});
const documentParams = z
  .record(
    z.string().regex(PARAM_NAME),
    z.union([expr, paramDef], {
      error: (iss) =>
        iss.code === 'invalid_union' ? say('must be a number, an expression such as "2 * N", or { "value": ..., "min": ..., "max": ... }') : undefined,
    }),
  )
  .meta({ description: 'Parameter name -> value, expression or { value, min, max, integer }.' });

const portRef = z.strictObject({ node: name, port: name });
// The lowered multi-rate form (types.ts) may be written by a tool that makes the firings itself;
// a document holding it is taken as lowered (rates.ts does not expand it again).
const tokenRange = z
  .strictObject({ first: z.int().min(0), count: z.int().min(1), of: z.int().min(1) })
  .meta({ id: 'tokenRange', description: "Lowered form: tokens first .. first + count - 1 of the `of` tokens a firing's port holds." });

/** A node's params: kernel params (a numeric one may be an expression), or a composite node's values for its composite's params. */
const nodeParams = z.record(
  z.string(),
  z.union([finite, z.string(), z.boolean()], { error: (iss) => (iss.code === 'invalid_union' ? say('must be a number, string or boolean') : undefined) }),
);

// Defined before use by the getters below: a node may hold a composite inline, which holds nodes.
// eslint-disable-next-line prefer-const
let compositeDef: z.ZodType;

export const nodeSchema = z
  .strictObject({
    id: name,
    kernel: name.optional().meta({ description: 'A kernel id of the registry, e.g. matrix.increment.' }),
    type: z.literal('scan').optional().meta({
      description:
        'A macro node: "scan", a prefix scan over an operator kernel (params: operator, network, output, strategy, execution and the operator\'s own), mapped to a list of PEs (its workers).',
    }),
    composite: name.optional().meta({ description: "A composite of the document's defs." }),
    get graph() {
      return compositeDef.optional();
    },
    params: nodeParams.optional(),
    rates: z.record(z.string(), expr).optional().meta({ description: 'Tokens per firing of each port (default 1).' }),
    requires: z.array(z.string().max(200)).max(32).optional().meta({
      description:
        'Capability clauses KEY OP VALUE the PE firing this kernel node must meet (kind, software, backend, vendor, featureLevel, feature, limit.<name>, cores, memory; = != >= <= > <).',
    }),
    tasks: expr.optional().meta({
      description: 'Kernel nodes whose kernel declares a split: run each firing as this many shares (tasks), then a combine summing them in share order.',
    }),
    position: position.optional(),
    collapsed: z.boolean().optional().meta({ description: 'Editor state of a composite node; ignored by the compiler.' }),
    firing: z
      .strictObject({ node: name, index: z.int().min(0), of: z.int().min(1) })
      .optional()
      .meta({ description: 'Lowered form: this node is firing `index` of the `of` firings of `node` per iteration.' }),
    share: z
      .strictObject({ node: name, index: z.int().min(0), of: z.int().min(1) })
      .optional()
      .meta({ description: 'Lowered form: this node is share `index` of the `of` shares of `node` (its tasks).' }),
    combine: z
      .strictObject({ node: name, of: z.int().min(1) })
      .optional()
      .meta({ description: 'Lowered form: this node (generic.sum) sums the `of` shares of `node`.' }),
  })
  // Two refinements, each a plain predicate (the guard runs it as is): at least one, at most one.
  .refine((n) => n.kernel !== undefined || n.composite !== undefined || n.graph !== undefined || n.type !== undefined, {
    path: ['kernel'],
    error: () => say('is missing', 'name a kernel, or make it a composite node with "composite" or "graph", or a scan node with "type": "scan"'),
  })
  .refine((n) => n.requires === undefined || n.kernel !== undefined, {
    path: ['requires'],
    error: () => say('is for kernel nodes', "write the requirements on the composite's inner kernel nodes"),
  })
  .refine((n) => n.tasks === undefined || n.kernel !== undefined, {
    path: ['tasks'],
    error: () => say('is for kernel nodes', "write tasks on the composite's inner kernel node whose kernel splits"),
  })
  .refine((n) => Number(n.kernel !== undefined) + Number(n.composite !== undefined) + Number(n.graph !== undefined) + Number(n.type !== undefined) <= 1, {
    error: (iss) =>
      say(
        `has both ${(['kernel', 'composite', 'graph', 'type'] as const).filter((k) => (iss.input as Record<string, unknown>)[k] !== undefined).join(' and ')}`,
        'a node is a kernel node (kernel), a composite node (composite, or graph inline) or a scan node (type): keep one',
      ),
  })
  .meta({
    id: 'node',
    description: 'A kernel node (kernel), a composite node (composite, or graph inline) or a scan node (type): exactly one of them.',
    // (`properties` repeated so each alternative names what it requires: Ajv's strict mode asks it.)
    oneOf: (['kernel', 'composite', 'graph', 'type'] as const).map((k) => ({ properties: { [k]: true }, required: [k] })),
  });

export const edgeSchema = z
  .strictObject({
    from: portRef,
    to: portRef,
    delay: delayExpr.optional().meta({ description: `Initial tokens on the edge (0 to ${MAX_DELAY}, 2^30); a cycle is legal only through a delayed edge.` }),
    init: z
      .union([finite, z.strictObject({ node: name })])
      .optional()
      .meta({ description: 'Values of the initial tokens: a constant, or { "node": id } of a source node run once per token.' }),
    fromTokens: tokenRange.optional().meta({ description: "Lowered form: the producer's tokens this edge carries." }),
    toTokens: tokenRange.optional().meta({ description: "Lowered form: where they land among the consumer's input tokens." }),
  })
  .meta({ id: 'edge' });

compositeDef = z
  .strictObject({
    description: z.string().optional(),
    params: documentParams.optional(),
    inputs: z.array(z.strictObject({ name, to: z.array(portRef) })).optional(),
    outputs: z.array(z.strictObject({ name, from: portRef })).optional(),
    nodes: z.array(nodeSchema),
    edges: z.array(edgeSchema),
  })
  .meta({ id: 'composite', description: 'A reusable sub-graph: inputs bound to inner inputs, outputs to inner outputs, its own params.' });

const linkSpec = {
  bandwidth: positive.meta({ description: 'Bytes per second, each direction.' }),
  latency: z.number().min(0).meta({ description: 'Seconds per transfer.' }),
  duplex: z.boolean().optional().meta({ description: 'Both directions at full bandwidth at once (default true).' }),
};
const linkKind = z.enum(LINK_KINDS);

const host = z
  .strictObject({
    id: name,
    agent: name.optional().meta({ description: "Where the host's agent listens, e.g. ws://10.0.0.2:7070." }),
    position: position.optional(),
    cpus: z
      .number()
      .int()
      .min(0)
      .optional()
      // The bound is the host's refinement below (its message names the host); editors get it as a maximum.
      .meta({ description: 'CPU PEs: 1 (default) makes cpu@<host>, N >= 2 makes cpu0@<host> .. cpu{N-1}@<host> sharing cpuMemory.', maximum: MAX_CPUS }),
    gpus: z
      .number()
      .int()
      .min(0)
      .max(MAX_GPUS, { error: (iss) => say(`${String(iss.input)} GPUs on one host is more than the shorthand makes (${MAX_GPUS})`, 'list them in arch.pes') })
      .optional(),
    cpuMemory: positive.optional().meta({ description: "Bytes of the host's memory, shared by its CPU PEs." }),
    gpuMemory: positive.optional(),
    pcie: z.strictObject(linkSpec).optional(),
    memory: z.strictObject(linkSpec).optional().meta({ description: "The memory links between the host's CPU PEs (cpus >= 2)." }),
  })
  // The bound names the host, so a typo in a list of hosts is found at once (a plain predicate: the guard runs it as is).
  .refine((h) => h.cpus === undefined || h.cpus <= MAX_CPUS, {
    path: ['cpus'],
    error: (iss) => {
      const h = iss.input as { id: string; cpus: number };
      return say(
        `host "${h.id}": ${h.cpus} CPU PEs is more than the shorthand makes (${MAX_CPUS})`,
        `give the host at most ${MAX_CPUS} cpus, or list its CPU PEs in arch.pes`,
      );
    },
  })
  .meta({ id: 'host' });

const pe = z
  .strictObject({
    id: name,
    host: name,
    kind: z.enum(PE_KINDS),
    memory: positive.meta({ description: 'Bytes available for buffers.' }),
    device: z.number().int().min(0).optional(),
    flops: positive.optional(),
    memoryBandwidth: positive.optional(),
    position: position.optional(),
  })
  .meta({ id: 'pe' });

const link = z.strictObject({ a: name, b: name, kind: linkKind, ...linkSpec }).meta({ id: 'link' });

/** The whole document, as written (the lowered form's firings and token ranges included: tools may write them). */
export const documentSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: 'Where an editor finds this schema.' }),
    format: z.literal(FORMAT),
    name: z.string().optional(),
    description: z.string().optional(),
    params: documentParams.optional(),
    defs: z.record(name, compositeDef).optional(),
    app: z.strictObject({ nodes: z.array(nodeSchema), edges: z.array(edgeSchema) }),
    arch: z.strictObject({
      hosts: z.array(host),
      pes: z.array(pe).optional(),
      links: z.array(link).optional(),
      network: z
        .strictObject({ kind: linkKind, ...linkSpec })
        .optional()
        .meta({ description: 'Shorthand: one link of this kind between the CPUs of every two hosts.' }),
    }),
    mapping: z
      .record(
        z.string(),
        z.union(
          [
            name,
            z
              .array(name)
              .min(1, { error: () => say('is an empty list of PEs', 'list the PE ids the node\'s shares take in turn, e.g. ["gpu0@h0", "cpu@h0"]') })
              .max(MAX_PE_LIST, { error: (iss) => say(`lists ${(iss.input as unknown[]).length} PEs, more than ${MAX_PE_LIST}`, 'list each PE once') }),
          ],
          {
            error: (iss) =>
              iss.code === 'invalid_union'
                ? say(
                    'must be a PE id, or a non-empty list of PE ids (for a node with tasks)',
                    `map it as "cpu@h0", or ["gpu0@h0", "cpu@h0"] with at most ${MAX_PE_LIST}`,
                  )
                : undefined,
          },
        ),
      )
      .meta({ description: 'DFG node id -> PE id, or (a node with tasks) a list of PE ids its shares take in turn.' }),
    kernels: z.record(z.string(), name).optional().meta({ description: 'Kernel id -> the version (semver) the document was made with.' }),
    options: z
      .strictObject({
        overlap: z.boolean().optional().meta({ description: 'Computation-communication overlap (default true).' }),
        iterations: z.number().int().min(1).optional().meta({ description: 'Iterations of a run (default 100).' }),
        sync: z.enum(SYNC_MODES).optional().meta({ description: 'self-timed (default) or barrier.' }),
        mode: z
          .enum(EXECUTION_MODES)
          .optional()
          .meta({ description: 'static (default): the compiled programs on the mapping; taskbag: tasks placed at run time on capable PEs.' }),
        window: z.int().min(1).max(64).optional().meta({ description: 'Task-bag: most iterations in flight (default 2).' }),
        prefetch: z
          .union([z.int().min(1).max(64), z.literal('unbounded')])
          .optional()
          .meta({ description: "Task-bag: most tasks a PE holds given and not done (default 2); unbounded: the Boss/Worker paper's literal reading." }),
      })
      .optional(),
  })
  .meta({
    title: `Pipeloom project document (${FORMAT})`,
    description: 'An application DFG, an architecture graph, a mapping of DFG nodes onto processing elements, and run options. See docs/document-format.md.',
  });

/**
 * A kernel's params as a schema: each declared param with its type and range (a numeric one may
 * be an expression), no other key. The JSON Schema carries one per registered kernel.
 */
export function kernelParamsSchema(kernel: KernelSpec): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, spec] of Object.entries(kernel.params)) shape[key] = paramSchema(spec).optional();
  return z.strictObject(shape);
}

function paramSchema(spec: ParamSpec): z.ZodType {
  const about = { description: spec.unit ? `${spec.description} (${spec.unit})` : spec.description, default: spec.default };
  if (spec.type === 'int' || spec.type === 'float') {
    let n = spec.type === 'int' ? z.number().int() : z.number();
    if (spec.min !== undefined) n = n.min(spec.min);
    if (spec.max !== undefined) n = n.max(spec.max);
    return z.union([n, expressionText]).meta(about);
  }
  if (spec.type === 'bool') return z.boolean().meta(about);
  if (spec.type === 'enum') return z.enum((spec.values ?? []) as [string, ...string[]]).meta(about);
  return z.string().meta(about);
}

/** Port names of a kernel as the JSON Schema annotates them (`in0`.. of a variadic port: `in<i>`, count from a param). */
function portsOf(kernel: KernelSpec) {
  const list = (ports: KernelSpec['inputs']) => ports.map((p) => (p.repeat ? { name: `${p.name}<i>`, count: p.repeat } : { name: p.name }));
  return { inputs: list(kernel.inputs), outputs: list(kernel.outputs) };
}

export interface JsonSchemaOptions {
  /** Refuse a kernel id not among `kernels` (the published file leaves ids open: a package may add kernels). */
  closedKernels?: boolean;
}

/**
 * The document's JSON Schema for the kernels registered now (built-ins and loaded packages):
 * each kernel node's params are constrained by its kernel's (`if kernel is X then params ...`),
 * and its ports are named in `x-ports` (edges refer to them). schema.json is this for the
 * built-in kernels.
 */
export function documentJsonSchema(kernels: readonly KernelSpec[] = listKernels(), opts: JsonSchemaOptions = {}): Record<string, unknown> {
  // One conversion for the document and every kernel's params, so they share $defs.
  const both = z.toJSONSchema(
    z.strictObject({ document: documentSchema, params: z.strictObject(Object.fromEntries(kernels.map((k) => [k.id, kernelParamsSchema(k)]))) }),
    { target: 'draft-2020-12' },
  ) as Schema;
  const props = both.properties as Record<string, Schema>;
  const params = props.params.properties as Record<string, Schema>;
  const defs = both.$defs as Record<string, Schema>;
  const node = defs.node;
  if (kernels.length) {
    node.allOf = kernels.map((k) => ({
      if: { properties: { kernel: { const: k.id } }, required: ['kernel'] },
      then: { description: `${k.id}: ${k.title}`, properties: { params: params[k.id] }, 'x-ports': portsOf(k) },
    }));
  }
  if (opts.closedKernels) (node.properties as Record<string, Schema>).kernel.enum = kernels.map((k) => k.id);
  return { $schema: both.$schema, $id: `https://pipeloom.dev/schema/${FORMAT.replace('/', '-')}.json`, ...props.document, $defs: defs };
}

type Schema = Record<string, unknown>;

/** The published schema.json: the document's JSON Schema for the built-in kernels (a kernel package's own are added at run time by documentJsonSchema()). */
export function publishedJsonSchema(): Record<string, unknown> {
  return documentJsonSchema(listKernels().filter((k) => k.package === undefined || k.package === 'builtin'));
}

/** schema.json's text, as scripts/schema.ts writes it. */
export function publishedJsonSchemaText(): string {
  return `${JSON.stringify(publishedJsonSchema(), null, 2)}\n`;
}
