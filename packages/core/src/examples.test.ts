import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { compile } from './compile/compile.js';
import { simulate } from './compile/simulate.js';
import { parseDocument } from './document/parse.js';
import schema from './document/schema.json' with { type: 'json' };
import { registerExampleKernels } from '../../../examples/kernels/register.js';

registerExampleKernels();

// schema.json checked by an outside validator, Ajv in strict mode (document/schema.test.ts
// has the rest: the file is generated, the bad corpus is refused).
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
ajv.addKeyword({ keyword: 'x-ports' });
const matchesSchema = ajv.compile(schema);

// Every examples/*.json, including ones added later, must match the schema, compile under both
// strategies and run clean in the simulator.
const dir = new URL('../../../examples/', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('examples', () => {
  it('exist', () => {
    expect(files).toEqual(expect.arrayContaining(['paper-fig5.json', 'piic.json']));
  });

  for (const file of files) {
    it(`${file} matches the published schema`, () => {
      const doc = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
      expect(matchesSchema(doc), JSON.stringify(matchesSchema.errors)).toBe(true);
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
