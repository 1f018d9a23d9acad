import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { corpusCases, type BadDocumentCase } from '../robustness/corpus.js';

/** The bad-document corpus's folder. */
export const BAD_CORPUS = fileURLToPath(new URL('../../corpus/bad', import.meta.url));

/**
 * Every case of the bad-document corpus: the expectations of every `expected*.json` in its
 * folder (one file per family of mistakes, so families are added without touching the others).
 */
export function badCorpus(dir = BAD_CORPUS): BadDocumentCase[] {
  const files = readdirSync(dir)
    .filter((f) => /^expected.*\.json$/.test(f))
    .sort();
  return files.flatMap((f) => corpusCases(JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')), dir));
}
