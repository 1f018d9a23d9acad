import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from './compile/compile.js';
import { simulate } from './compile/simulate.js';
import { parseDocument } from './document/parse.js';
import schema from './document/schema.json' with { type: 'json' };
import { registerExampleKernels } from './testing/example-kernels.js';

registerExampleKernels();

// Every examples/*.json, including ones added later, must match the schema, compile under both
// strategies and run clean in the simulator.
const dir = new URL('../../../examples/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

describe('examples', () => {
  it('exist', () => {
    expect(files).toEqual(expect.arrayContaining(['paper-fig5.json', 'piic.json']));
  });

  for (const file of files) {
    it(`${file} matches the published schema`, () => {
      const doc = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
      expect(checkSchema(schema, doc)).toEqual([]);
    });

    it(`${file} compiles with and without overlap and simulates clean`, () => {
      const parsed = parseDocument(readFileSync(new URL(file, dir), 'utf8'));
      expect(parsed.diagnostics).toEqual([]);
      if (!parsed.ok) return;
      for (const overlap of [true, false]) {
        const r = compile(parsed.doc, { overlap });
        expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
        if (r.ok) expect(simulate(r.ig, 3).violations).toEqual([]);
      }
    });
  }
});

describe('schema checker', () => {
  it('catches what the schema forbids', () => {
    const bad = { format: 'pipeloom/v1', app: { nodes: [{ id: '' }], edges: [] }, arch: { hosts: [], links: [{ a: 'x', b: 'y', kind: 'wifi', bandwidth: 0, latency: 0 }] }, mapping: { a: 3 } };
    expect(checkSchema(schema, bad)).toEqual([
      'format: must be "pipeloom/v1" === "pipeloom/v2"',
      'app.nodes[0].id: shorter than 1',
      'arch.links[0].bandwidth: not > 0',
      'arch.links[0].kind: not one of pcie, infiniband, ethernet, nvlink, loopback',
      'mapping.a: not of type string',
    ]);
  });
});

// A small JSON Schema checker for the keywords schema.json uses (type, const, enum, required,
// properties, additionalProperties, items, minimum, exclusiveMinimum, maximum, minLength,
// allOf, $ref to #/$defs).
type Schema = Record<string, unknown>;
function checkSchema(root: Schema, value: unknown): string[] {
  const errors: string[] = [];
  const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  const visit = (s: Schema, v: unknown, path: string) => {
    if (typeof s.$ref === 'string') return visit((root.$defs as Record<string, Schema>)[s.$ref.replace('#/$defs/', '')], v, path);
    for (const sub of (s.allOf as Schema[] | undefined) ?? []) visit(sub, v, path);
    if ('const' in s && v !== s.const) errors.push(`${path}: must be ${JSON.stringify(v)} === ${JSON.stringify(s.const)}`);
    if (s.enum && !(s.enum as unknown[]).includes(v)) errors.push(`${path}: not one of ${(s.enum as unknown[]).join(', ')}`);
    if (s.type) {
      const types = ([] as string[]).concat(s.type as string);
      const t = typeOf(v);
      if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return errors.push(`${path}: not of type ${types.join('|')}`);
    }
    if (typeof v === 'number') {
      if (typeof s.minimum === 'number' && v < s.minimum) errors.push(`${path}: not >= ${s.minimum}`);
      if (typeof s.maximum === 'number' && v > s.maximum) errors.push(`${path}: not <= ${s.maximum}`);
      if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum) errors.push(`${path}: not > ${s.exclusiveMinimum}`);
    }
    if (typeof v === 'string' && typeof s.minLength === 'number' && v.length < s.minLength) errors.push(`${path}: shorter than ${s.minLength}`);
    if (Array.isArray(v) && s.items) v.forEach((x, i) => visit(s.items as Schema, x, `${path}[${i}]`));
    if (typeOf(v) === 'object') {
      const o = v as Record<string, unknown>;
      for (const r of (s.required as string[] | undefined) ?? []) if (!(r in o)) errors.push(`${path}: missing "${r}"`);
      const props = (s.properties as Record<string, Schema> | undefined) ?? {};
      for (const [k, x] of Object.entries(o)) {
        const p = path ? `${path}.${k}` : k;
        if (props[k]) visit(props[k], x, p);
        else if (s.additionalProperties === false) errors.push(`${p}: not allowed`);
        else if (typeof s.additionalProperties === 'object') visit(s.additionalProperties as Schema, x, p);
      }
    }
  };
  visit(root, value, '');
  return errors;
}
