import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { badCorpus } from '@pipeloom/core/testing';
import { selectionForDiagnostic } from '../document/selection.js';
import { compileBoth } from './compile.js';
import { readDocument } from '../document/documents.js';

// The web app's side of the bad-document corpus: opening each file either refuses it with the
// parse error, or loads it and lists the diagnostic in Problems, where clicking it selects the
// element at fault. Same files, same words as the CLI.
const dir = fileURLToPath(new URL('../../../../packages/core/corpus/bad', import.meta.url));
const cases = badCorpus(dir);

describe('opening a bad document in the designer', () => {
  for (const c of cases) {
    it(`${c.name}: the problem says "${c.includes}"${c.path.startsWith('app.') || c.path.startsWith('mapping.') ? ' and selects its element' : ''}`, async () => {
      const opened = readDocument(readFileSync(c.file, 'utf8'));
      if (!opened.doc) {
        expect(opened.diagnostics.some((d) => d.message.includes(c.includes))).toBe(true);
        return;
      }
      const out = await compileBoth(opened.doc);
      expect(out.overlap).toBeNull();
      const d = out.diagnostics.find((x) => x.severity === 'error' && x.message.includes(c.includes));
      expect(d, JSON.stringify(out.diagnostics, null, 1)).toBeDefined();
      // Elements of the DFG and the mapping keep their paths through normalisation; a click selects them.
      if (c.path.startsWith('app.nodes') || c.path.startsWith('app.edges[') || c.path.startsWith('mapping.')) {
        expect(selectionForDiagnostic(opened.doc, d!)).not.toBeNull();
      }
    });
  }
});
