import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelManifest, listKernels } from '@pipeloom/kernels';
import { root } from '../testing/fixtures.js';
import { kernelsMarkdown } from './docs.js';

describe('docs/kernels.md', () => {
  it('is what the registry generates (regenerate: pipeloom kernels --format markdown > docs/kernels.md)', () => {
    const builtins = listKernels().filter((k) => (k.package ?? 'builtin') === 'builtin');
    expect(readFileSync(join(root, 'docs/kernels.md'), 'utf8')).toBe(kernelsMarkdown(builtins.map(kernelManifest)));
  });
});
