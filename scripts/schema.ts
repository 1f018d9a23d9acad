// npm run schema: writes packages/core/src/document/schema.json from the document's schema
// (packages/core/src/document/schema.ts). schema.test.ts fails while the committed file differs.
import { writeFileSync } from 'node:fs';
import { publishedJsonSchemaText } from '../packages/core/src/document/schema.js';

const file = new URL('../packages/core/src/document/schema.json', import.meta.url);
writeFileSync(file, publishedJsonSchemaText());
console.log(`wrote ${file.pathname}`);
