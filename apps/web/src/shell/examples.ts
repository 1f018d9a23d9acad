import type { WrittenDocument } from '@pipeloom/core';

// The paper's pipelines shipped in examples/, bundled at build time.
const modules = import.meta.glob<{ default: WrittenDocument }>('../../../../examples/*.json', { eager: true });

export interface Example {
  file: string;
  doc: WrittenDocument;
}

export const examples: Example[] = Object.entries(modules)
  .map(([path, m]) => ({ file: path.split('/').pop()!, doc: m.default }))
  .sort((a, b) => a.file.localeCompare(b.file));
