// @pipeloom/core/testing: documents for tests and benches. Not in core's index: pinned.ts
// reads examples/ with node:fs, and neither belongs in the web app's bundle.
export { randomDocument, layeredDocument, splitJoinDocument, type RandomOptions } from './generate.js';
export { sdfDocument, type SdfOptions } from './sdf.js';
export { pinnedDocuments } from './pinned.js';
export { checkedJoinDocument } from './join.js';
export { corpusCases, type BadDocumentCase } from '../robustness/corpus.js';
export { badCorpus } from './corpus.js';
export { slicedPipeline } from './sliced.js';
export { pjDump, pajeHostFields, pajeStateCounts, chromeSliceCounts, type PajeDump, type PajeState } from './pajeng.js';
