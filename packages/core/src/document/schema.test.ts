import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../diagnostics.js';
import { badCorpus } from '../testing/corpus.js';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { randomDocument } from '../testing/generate.js';
import { guardOf } from './guard.js';
import { documentJsonSchema, documentSchema, publishedJsonSchemaText } from './schema.js';
import published from './schema.json' with { type: 'json' };
import { checkShape } from './shape.js';
import type { ProjectDocument } from './types.js';
import { validate } from './validate.js';

/** An outside validator: Ajv in strict mode (union types allowed; `x-ports` declared as an annotation). */
function ajv() {
  const a = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  a.addKeyword({ keyword: 'x-ports' });
  return a;
}

/**
 * Bad-corpus entries no schema can refuse: what is wrong is beyond the document's shape (ids
 * that do not resolve, a cycle, types and sizes, memory), or depends on the kernels loaded at
 * run time (an unknown kernel id: the published schema leaves ids open for kernel packages),
 * or on evaluating an expression (`"NaN"` names an unknown parameter). Every other entry must
 * be refused by schema.json. A new corpus entry is classified here or the test fails.
 */
const SEMANTIC = new Set([
  // Scan nodes: networks, operators and workers are checked against the kernels and the graph.
  'scan-unknown-network',
  'scan-operator-unregistered',
  'scan-operator-not-binary',
  'scan-operator-typed-unlike-in',
  'scan-bad-strategy',
  'scan-workers-exceed-elements',
  'scan-not-mapped',
  'scan-in-unconnected',
  'scan-context-unconnected',
  'scan-context-over-memory',
  'mlem-estimate-zero',
  'mlem-volume-oversize',
  'unknown-kernel',
  'cycle',
  'unmapped-node',
  'no-architecture-path',
  'type-mismatch',
  'buffer-exceeds-memory',
  'nan-param',
  'duplicate-node-id',
  'edge-to-missing-node',
  'mapping-to-missing-pe',
  // Rates: consistency, ports and divisibility depend on the kernels and the whole graph; a
  // rate's value is checked once evaluated (it may be an expression), literal or not.
  'rate-zero',
  'rate-fractional',
  'rates-inconsistent',
  'rate-unknown-port',
  'rate-uneven-split',
  'mapping-missing-firing',
  // Composites: bindings resolve names inside another graph, defs refer to each other.
  'composite-binding-missing-port',
  'composite-binding-missing-inner',
  'composite-binding-doubled',
  'composite-binding-and-edge',
  'composite-binding-unknown-node',
  'composite-binding-type-mismatch',
  'defs-recursion',
  'composite-unknown-def',
  // Parameters: found only by evaluating the expressions.
  'param-unknown',
  'param-cycle',
  'param-syntax-error',
  'param-division-by-zero',
  'param-out-of-range',
  'param-not-integer',
  // Delays: an init's values and a loop's delay are checked against the graph, its types and mapping.
  'delay-without-init',
  'init-without-delay',
  'delay-fractional',
  'delay-loop-too-short',
  'init-node-with-inputs',
  'init-node-type-mismatch',
  'init-node-missing',
  'init-node-connected',
  // A delay above the bound given by a param: its value is known once evaluated.
  'delay-too-large-param',
  // Requirements: a clause is text; its keys, values and the PE it meets are checked once parsed.
  'requires-unknown-key',
  'requires-kind-mismatch',
  'requires-contradiction',
  // Many-core hosts: a `cores` clause against the host's CPU PEs, a PE id against those the
  // shorthand makes, and buffers against the memory the host's cores share.
  'requires-cores',
  'mapping-cpu-of-many-core-host',
  'host-memory-shared',
  // Tasks: a count is checked once evaluated (an expression) against the kernel's split; a PE
  // list against the node's tasks and the PEs; tasks on a composite is refused by schema.ts's
  // refinement, which schema.json does not carry.
  'tasks-zero',
  'tasks-negative',
  'tasks-above-range',
  'tasks-without-split',
  'tasks-on-composite',
  'pe-list-without-tasks',
  'pe-list-unknown-pe',
]);
/** Entries that are not JSON at all: the parser refuses them before any schema. */
const NOT_JSON = new Set(['malformed-json']);

describe('schema.json', () => {
  it('is generated from the document schema (schema.ts): regenerate it with `npm run schema`', () => {
    const committed = readFileSync(new URL('./schema.json', import.meta.url), 'utf8');
    expect(committed === publishedJsonSchemaText(), 'schema.json differs from schema.ts: run `npm run schema` and commit the file').toBe(true);
  });

  it("compiles in Ajv strict mode and carries every built-in kernel's params and ports", () => {
    expect(() => ajv().compile(published)).not.toThrow();
    const node = (
      published.$defs as unknown as Record<string, { allOf: { if: { properties: { kernel: { const: string } } }; then: Record<string, unknown> }[] }>
    ).node;
    const produce = node.allOf.find((k) => k.if.properties.kernel.const === 'matrix.produce')!;
    expect(produce.then).toMatchObject({
      properties: {
        params: {
          additionalProperties: false,
          properties: { width: { anyOf: [{ type: 'integer', minimum: 1, maximum: 16384 }, { $ref: '#/$defs/expression' }] } },
        },
      },
      'x-ports': { inputs: [], outputs: [{ name: 'out' }] },
    });
    const work = node.allOf.find((k) => k.if.properties.kernel.const === 'generic.work')!;
    expect(work.then['x-ports']).toEqual({ inputs: [{ name: 'in<i>', count: 'inputs' }], outputs: [{ name: 'out<i>', count: 'outputs' }] });
  });

  it('refuses every bad-corpus document it can express; the rest are listed as semantic', () => {
    const check = ajv().compile(published);
    const cases = badCorpus();
    const names = new Set(cases.map((c) => c.name));
    for (const name of [...SEMANTIC, ...NOT_JSON]) expect(names.has(name), `${name} is classified but not in the corpus`).toBe(true);
    const wrong: string[] = [];
    for (const c of cases) {
      if (NOT_JSON.has(c.name)) {
        expect(() => JSON.parse(readFileSync(c.file, 'utf8'))).toThrow();
        continue;
      }
      const accepted = check(JSON.parse(readFileSync(c.file, 'utf8')));
      if (accepted && !SEMANTIC.has(c.name))
        wrong.push(`${c.name}: accepted by schema.json, and not listed as semantic in schema.test.ts (refuse it in schema.ts, or list it)`);
      if (!accepted && SEMANTIC.has(c.name))
        wrong.push(`${c.name}: refused by schema.json (${check.errors?.[0]?.instancePath} ${check.errors?.[0]?.message}), yet listed as semantic`);
    }
    expect(wrong).toEqual([]);
  });

  it("takes the lowered form's firings and token ranges (a tool may write them), refuses an InitSpec object", () => {
    const check = ajv().compile(published);
    const doc = base();
    expect(check(doc)).toBe(true);
    for (const change of [
      (d: Doc) => (d.app.nodes[0].firing = { node: 'p', index: 0, of: 1 }),
      (d: Doc) => (d.app.edges[0].fromTokens = { first: 0, count: 1, of: 1 }),
      (d: Doc) => (d.app.edges[0].toTokens = { first: 0, count: 1, of: 1 }),
    ]) {
      const d = base();
      change(d);
      expect(check(d)).toBe(true);
      expect(checkShape(d as unknown as Record<string, unknown>)).toEqual([]);
    }
    const lowered = [
      (d: Doc) => (d.app.edges[0].toTokens = { first: -1, count: 1, of: 1 }),
      (d: Doc) => Object.assign(d.app.edges[0], { delay: 1, init: { value: 0 } }),
      (d: Doc) => Object.assign(d.app.edges[0], { delay: 1, init: { node: 'z', kernel: 'matrix.produce', params: {} } }),
    ];
    for (const change of lowered) {
      const d = base();
      change(d);
      expect(check(d)).toBe(false);
      expect(checkShape(d as unknown as Record<string, unknown>).length).toBeGreaterThan(0);
    }
  });
});

describe('the schema of the kernels registered now', () => {
  it("adds a loaded package's kernels; closed, it refuses an unknown kernel id", () => {
    registerExampleKernels();
    const schema = documentJsonSchema(undefined, { closedKernels: true });
    const check = ajv().compile(schema);
    expect(check(JSON.parse(readFileSync(new URL('../../../../examples/sobel.json', import.meta.url), 'utf8')))).toBe(true);
    const unknown = badCorpus().find((c) => c.name === 'unknown-kernel')!;
    expect(check(JSON.parse(readFileSync(unknown.file, 'utf8')))).toBe(false);
    expect(check.errors?.some((e) => e.instancePath === '/app/nodes/1/kernel')).toBe(true);
  });
});

type Doc = ProjectDocument & { app: { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] } };
function base(): Doc {
  return {
    format: 'pipeloom/v2',
    name: 'keys',
    app: {
      nodes: [
        { id: 'p', kernel: 'matrix.produce', params: { width: 8, height: 8 } },
        { id: 'c', kernel: 'matrix.consume', params: { width: 8, height: 8 } },
      ],
      edges: [{ from: { node: 'p', port: 'out' }, to: { node: 'c', port: 'in' } }],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 1 }], pes: [], links: [] },
    mapping: { p: 'cpu@h0', c: 'cpu@h0' },
    options: { overlap: true, iterations: 4 },
  } as unknown as Doc;
}

/** Every v2 feature in one document (the lowering steps judge its meaning; the shape is right). */
function everyFeature(): Record<string, unknown> {
  return {
    $schema: '../packages/core/src/document/schema.json',
    format: 'pipeloom/v2',
    name: 'every feature',
    description: 'params, defs, composite nodes, rates, delays',
    params: { W: 64, H: { value: '2 * W', min: 1, max: 4096, integer: true, description: 'height' }, N: '4' },
    defs: {
      seg: {
        description: 'open then close',
        params: { K: 3 },
        inputs: [{ name: 'in', to: [{ node: 'open', port: 'in' }] }],
        outputs: [{ name: 'out', from: { node: 'close', port: 'out' } }],
        nodes: [
          { id: 'open', kernel: 'matrix.increment', params: { width: 'W', height: 'H', nb_loop: 'K' } },
          { id: 'close', kernel: 'matrix.increment', params: { width: 'W', height: 'H' } },
        ],
        edges: [{ from: { node: 'open', port: 'out' }, to: { node: 'close', port: 'in' } }],
      },
    },
    app: {
      nodes: [
        { id: 'p', kernel: 'matrix.produce', params: { width: 'W', height: 'H' }, rates: { out: 1 }, position: { x: 0, y: 0 } },
        { id: 's', composite: 'seg', params: { K: '2 * N' }, collapsed: true },
        {
          id: 'g',
          graph: {
            nodes: [{ id: 'i', kernel: 'matrix.increment', params: { width: 'W', height: 'H' } }],
            edges: [],
            inputs: [{ name: 'in', to: [{ node: 'i', port: 'in' }] }],
            outputs: [{ name: 'out', from: { node: 'i', port: 'out' } }],
          },
          collapsed: false,
        },
        { id: 'a', kernel: 'matrix.add', params: { width: 'W', height: 'H' }, rates: { a: 'N / 4', b: 1, out: 1 } },
        { id: 'c', kernel: 'matrix.consume', params: { width: 'W', height: 'H' } },
      ],
      edges: [
        { from: { node: 'p', port: 'out' }, to: { node: 's', port: 'in' } },
        { from: { node: 's', port: 'out' }, to: { node: 'g', port: 'in' } },
        { from: { node: 'g', port: 'out' }, to: { node: 'a', port: 'a' } },
        { from: { node: 'a', port: 'out' }, to: { node: 'a', port: 'b' }, delay: 1, init: 0 },
        { from: { node: 'a', port: 'out' }, to: { node: 'c', port: 'in' }, delay: 'N', init: { node: 'p' } },
      ],
    },
    arch: {
      hosts: [
        {
          id: 'h0',
          agent: 'ws://127.0.0.1:7070',
          cpus: 1,
          gpus: 1,
          cpuMemory: 1e9,
          gpuMemory: 1e9,
          pcie: { bandwidth: 5e9, latency: 1e-5, duplex: true },
          memory: { bandwidth: 1e10, latency: 1e-6 },
          position: { x: 1, y: 2 },
        },
      ],
      pes: [{ id: 'gpu9@h0', host: 'h0', kind: 'gpu', memory: 1e9, device: 0, flops: 1e12, memoryBandwidth: 1e11, position: { x: 0, y: 0 } }],
      links: [{ a: 'gpu0@h0', b: 'gpu9@h0', kind: 'nvlink', bandwidth: 5e10, latency: 1e-6, duplex: true }],
      network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
    },
    mapping: { p: 'cpu@h0', s: 'gpu0@h0', g: 'gpu0@h0', a: 'gpu9@h0', c: 'cpu@h0' },
    options: { overlap: false, iterations: 10, sync: 'barrier' },
    kernels: { 'matrix.produce': '1.0.0' },
  };
}

const shapeOf = (d: unknown) => checkShape(d as Record<string, unknown>).map(formatDiagnostic);

describe('the shape check (checkShape, from the same schema)', () => {
  it('accepts every v2 feature, and so does schema.json', () => {
    expect(shapeOf(everyFeature())).toEqual([]);
    expect(ajv().compile(published)(everyFeature())).toBe(true);
  });

  it('names an unknown key and the nearest valid one, wherever it is', () => {
    const cases: [string, (d: Record<string, any>) => void, string][] = [
      ['options', (d) => (d.options.iteration = 3), 'options.iteration: unknown key "iteration" (did you mean "iterations"?)'],
      ['top level', (d) => (d.mappings = {}), 'mappings: unknown key "mappings" (did you mean "mapping"?)'],
      ['a node', (d) => (d.app.nodes[0].kernal = 'x'), 'app.nodes[0].kernal: unknown key "kernal" (did you mean "kernel"?)'],
      ['an edge', (d) => (d.app.edges[0].intt = 0), 'app.edges[0].intt: unknown key "intt" (did you mean "init"?)'],
      ['an edge end', (d) => (d.app.edges[1].to.prot = 'in'), 'app.edges[1].to.prot: unknown key "prot" (did you mean "port"?)'],
      ['a host', (d) => (d.arch.hosts[0].gpuMemroy = 1), 'arch.hosts[0].gpuMemroy: unknown key "gpuMemroy" (did you mean "gpuMemory"?)'],
      ['a PE', (d) => (d.arch.pes[0].devic = 1), 'arch.pes[0].devic: unknown key "devic" (did you mean "device"?)'],
      ['a link', (d) => (d.arch.links[0].latancy = 1), 'arch.links[0].latancy: unknown key "latancy" (did you mean "latency"?)'],
      ['the network', (d) => (d.arch.network.duplexx = true), 'arch.network.duplexx: unknown key "duplexx" (did you mean "duplex"?)'],
      ['a param definition', (d) => (d.params.H.maximum = 3), 'params.H.maximum: unknown key "maximum" (did you mean "max"?)'],
      ['a composite', (d) => (d.defs.seg.output = []), 'defs.seg.output: unknown key "output" (did you mean "outputs"?)'],
      ['a node inside a composite', (d) => (d.defs.seg.nodes[1].param = {}), 'defs.seg.nodes[1].param: unknown key "param" (did you mean "params"?)'],
      ['an inline graph', (d) => (d.app.nodes[2].graph.nodes[0].rate = {}), 'app.nodes[2].graph.nodes[0].rate: unknown key "rate" (did you mean "rates"?)'],
      ['a binding', (d) => (d.defs.seg.inputs[0].too = []), 'defs.seg.inputs[0].too: unknown key "too" (did you mean "to"?)'],
      [
        'far from any key',
        (d) => (d.options.colour = 'red'),
        'options.colour: unknown key "colour" (keys here: overlap, iterations, sync, mode, window, prefetch)',
      ],
    ];
    for (const [where, change, want] of cases) {
      const d = everyFeature() as Record<string, any>;
      change(d);
      expect(shapeOf(d), where).toEqual([want]);
    }
  });

  it('says a missing required key may be written under a near name', () => {
    const d = everyFeature() as Record<string, any>;
    d.mappings = d.mapping;
    delete d.mapping;
    expect(shapeOf(d)).toEqual([
      'mapping: is missing (it is written "mappings": rename that to "mapping")',
      'mappings: unknown key "mappings" (rename it to "mapping")',
    ]);
  });

  it('wants exactly one of kernel, composite and graph in a node', () => {
    const none = everyFeature() as Record<string, any>;
    delete none.app.nodes[0].kernel;
    expect(shapeOf(none)).toEqual([
      'app.nodes[0].kernel: is missing (name a kernel, or make it a composite node with "composite" or "graph", or a scan node with "type": "scan")',
    ]);
    const two = everyFeature() as Record<string, any>;
    two.app.nodes[1].kernel = 'matrix.increment';
    expect(shapeOf(two)).toEqual([
      'app.nodes[1]: has both kernel and composite (a node is a kernel node (kernel), a composite node (composite, or graph inline) or a scan node (type): keep one)',
    ]);
  });

  it('names wrong types in the v2 fields', () => {
    const cases: [(d: Record<string, any>) => void, string][] = [
      [(d) => (d.params.W = true), 'params.W: must be a number, an expression such as "2 * N", or { "value": ..., "min": ..., "max": ... }'],
      [(d) => (d.params['2x'] = 1), 'params.2x: "2x" is not a parameter name (a name is a letter or _, then letters, digits or _)'],
      [(d) => (d.app.nodes[0].rates.out = null), 'app.nodes[0].rates.out: must be a number or an expression such as "2 * N"'],
      [(d) => (d.app.edges[3].delay = [1]), 'app.edges[3].delay: must be a number or an expression such as "2 * N"'],
      [(d) => (d.app.edges[3].init = 'zero'), 'app.edges[3].init: must be number or object, not "zero"'],
      [(d) => (d.app.nodes[1].collapsed = 'yes'), 'app.nodes[1].collapsed: must be true or false, not "yes"'],
      [(d) => (d.defs.seg.nodes = {}), 'defs.seg.nodes: must be an array, not an object'],
    ];
    for (const [change, want] of cases) {
      const d = everyFeature() as Record<string, any>;
      change(d);
      expect(shapeOf(d)).toEqual([want]);
    }
  });

  it('validate() reports an unknown key before anything else', () => {
    const d = base() as unknown as Record<string, any>;
    d.options.iteration = 3;
    expect(validate(d).map(formatDiagnostic)).toEqual(['options.iteration: unknown key "iteration" (did you mean "iterations"?)']);
  });
});

describe('the guard (the fast yes of checkShape)', () => {
  // Values a field may be replaced by: right and wrong types, edge cases of the checks.
  const anyValue = fc.oneof(
    fc.jsonValue(),
    fc.constantFrom(0, -1, 1.5, 2 ** 60, '', 'x', 'pcie', 'cpu', 'self-timed', 'W', true, {}, [], { x: 1, y: 2 }, { node: 'p' }),
  );
  const paths = (v: unknown, prefix: (string | number)[] = []): (string | number)[][] => {
    if (typeof v !== 'object' || v === null) return [prefix];
    return [prefix, ...Object.entries(v).flatMap(([k, x]) => paths(x, [...prefix, Array.isArray(v) ? Number(k) : k]))];
  };
  // Both forms: generated source (where the platform allows it) and closures (where it does not).
  const generated = guardOf(documentSchema)!;
  const closures = guardOf(documentSchema, { generate: false })!;

  it('compiles from the document schema, both ways', () => {
    expect(generated).toBeDefined();
    expect(closures).toBeDefined();
    expect(generated).not.toBe(closures);
  });

  it('says yes exactly when zod does, on documents with one field replaced, removed or added', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.boolean(),
        fc.nat(),
        fc.constantFrom('replace', 'remove', 'add'),
        fc.string({ maxLength: 8 }),
        anyValue,
        (seed, rich, pick, how, key, value) => {
          const doc = (rich ? everyFeature() : randomDocument(seed, { nodes: 4, hosts: 2, maxGpus: 2, overlap: true })) as Record<string, unknown>;
          const all = paths(doc);
          const path = all[pick % all.length];
          let at = doc as Record<string | number, unknown>;
          for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
          const last = path[path.length - 1];
          if (how === 'replace' && path.length) at[last] = value;
          else if (how === 'remove' && path.length) delete at[last];
          else {
            const target = path.length ? at[last] : doc;
            if (typeof target === 'object' && target !== null && !Array.isArray(target)) (target as Record<string, unknown>)[key] = value;
          }
          const zod = documentSchema.safeParse(doc).success;
          expect(generated(doc)).toBe(zod);
          expect(closures(doc)).toBe(zod);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('the examples pass it', () => {
    for (const f of ['piic.json', 'paper-fig5.json', 'generic-work.json'])
      expect(generated(JSON.parse(readFileSync(new URL(`../../../../examples/${f}`, import.meta.url), 'utf8'))), basename(f)).toBe(true);
  });
});
