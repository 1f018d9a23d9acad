import type { ProjectDocument } from '@pipeloom/core';

// The paper's pipelines shipped in examples/, bundled at build time.
const modules = import.meta.glob<{ default: ProjectDocument }>('../../../../examples/*.json', { eager: true });

export interface Example {
  file: string;
  doc: ProjectDocument;
}

export const examples: Example[] = Object.entries(modules)
  .map(([path, m]) => ({ file: path.split('/').pop()!, doc: m.default }))
  .sort((a, b) => a.file.localeCompare(b.file));
