import { readFileSync } from 'node:fs';
import { kernelManifest, listKernels, findKernel } from '@pipeloom/kernels/specs';
import { describe, expect, it } from 'vitest';
import { compile } from './compile/compile.js';
import { analyze } from './document/validate.js';
import type { ProjectDocument } from './document/types.js';
import { checkAgentKernels, kernelVersions } from './kernels.js';

const piic = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../examples/piic.json', import.meta.url), 'utf8'));
const builtins = listKernels().map(kernelManifest);

describe('kernel versions of a document and of agents', () => {
  it('a document records the versions it uses, and another major version in the registry is a warning naming both', () => {
    const doc = piic();
    expect(kernelVersions(doc)).toEqual({ 'matrix.consume': '1.0.0', 'matrix.increment': '1.0.0', 'matrix.produce': '1.0.0' });
    doc.kernels = { 'matrix.increment': '2.3.0', 'matrix.produce': '1.9.0', 'image.read': '1.0.0' };
    const r = analyze(doc);
    expect(r.model).toBeDefined();
    expect(r.diagnostics).toEqual([
      {
        path: 'kernels.matrix.increment',
        message: 'the document was made with matrix.increment 2.3.0; the registry has 1.0.0 (from builtin), another major version',
        hint: 'check the nodes using matrix.increment against 1.0.0, then save the document again',
        severity: 'warning',
      },
    ]);
    doc.kernels = { 'matrix.add': 7 as unknown as string };
    expect(analyze(doc).diagnostics.map((d) => `${d.path}: ${d.message}`)).toEqual(['kernels.matrix.add: must be a string, not 7']);
  });

  it('agents: a kernel missing on a host names the agents that have it; another major version names both; old agents are not judged', () => {
    const r = compile(piic());
    if (!r.ok) throw new Error('piic does not compile');
    const all = { host: 'h0', url: 'ws://a', kernels: builtins };
    expect(checkAgentKernels(r.ig, [all, { host: 'h1', url: 'ws://b', kernels: builtins }])).toEqual([]);
    const noIncrement = builtins.filter((k) => k.id !== 'matrix.increment');
    const bumped = builtins.map((k) => (k.id === 'matrix.consume' ? { ...k, version: '2.0.0', package: 'acme' } : k));
    expect(
      checkAgentKernels(r.ig, [
        all,
        { host: 'h1', url: 'ws://b', kernels: noIncrement.map((k) => (k.id === 'matrix.consume' ? bumped.find((b) => b.id === k.id)! : k)) },
      ]).map((d) => `${d.path}: ${d.message}`),
    ).toEqual([
      'mapping.C: node "C" was compiled with kernel matrix.consume 1.0.0, but agent h1 (ws://b) has 2.0.0 (from acme), another major version',
      'mapping.I2: node "I2" needs kernel matrix.increment 1.0.0, but agent h1 (ws://b) does not have it; agents that have it: h0 (1.0.0)',
    ]);
    expect(checkAgentKernels(r.ig, [all, { host: 'h1', url: 'ws://b' }])).toEqual([]);
    expect(findKernel('matrix.consume')?.version).toBe('1.0.0');
  });
});
