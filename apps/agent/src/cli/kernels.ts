import { kernelManifest, listKernels } from '@pipeloom/kernels';
import { choice, parseCommandArgs } from './args.js';
import { EXIT } from './read-document.js';
import { kernelsMarkdown, kernelsText } from '../kernels/docs.js';
import { compileCheck, loadKernelPackages, loadTimeoutFlag } from '../kernels/load.js';
import { discover, openDevice } from '../devices/discover.js';
import { kernelsHelp, loadTimeoutHelp } from './option-help.js';

const USAGE = `usage: pipeloom kernels [--kernels PATH_OR_PACKAGE]... [--format text|json|markdown] [--check]

Lists every kernel: the built-ins and those of the packages named by --kernels, grouped by
package, with ports, params and docs.

${kernelsHelp(29)}
  --format text|json|markdown
                             text (default), the manifests as JSON (what agents report at
                             login), or markdown (docs/kernels.md is this, for the built-ins)
${loadTimeoutHelp(29)}
  --check                    also compile every package kernel's WGSL on this machine's WebGPU
                             adapter (a module that does not compile is named with its line)

Exit status: 0 listed, 1 bad option, 2 a package failed to load or check.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    'kernels',
    argv,
    { kernels: { type: 'string', multiple: true }, 'kernel-load-timeout': { type: 'string' }, format: { type: 'string' }, check: { type: 'boolean' } },
    USAGE,
  );
  if (!args.ok) return args.code;
  const format = choice('kernels', 'format', args.values.format, ['text', 'json', 'markdown'] as const, 'text');
  if (!format) return EXIT.failure;
  if (args.positionals.length) {
    console.error(`pipeloom kernels: takes no document (got ${args.positionals[0]}); name packages with --kernels\n\n${USAGE}`);
    return EXIT.failure;
  }
  const loadTimeoutMs = loadTimeoutFlag('kernels', args.values['kernel-load-timeout']);
  if (loadTimeoutMs === undefined) return EXIT.failure;
  const loaded = await loadKernelPackages((args.values.kernels as unknown as string[] | undefined) ?? [], process.cwd(), { loadTimeoutMs });
  const problems = [...loaded.problems];
  if (args.values.check && loaded.packages.length) {
    // The adapter an agent on this machine would use (opengl: llvmpipe where there is no GPU).
    const gpu = (await discover({ host: 'local' })).gpus.values().next().value;
    if (!gpu) problems.push('--check needs a WebGPU adapter, and this machine has none');
    else {
      const device = await openDevice(gpu);
      problems.push(...(await compileCheck(loaded.packages, device)));
      device.destroy();
    }
  }
  for (const p of problems) console.error(`pipeloom kernels: ${p}`);
  // A package that did not load: the list would read as complete without it, so none is printed.
  if (loaded.problems.length) return EXIT.invalid;
  const manifests = listKernels().map(kernelManifest);
  const out = format === 'json' ? JSON.stringify(manifests, null, 2) : format === 'markdown' ? kernelsMarkdown(manifests).trimEnd() : kernelsText(manifests);
  process.stdout.write(`${out}\n`);
  return problems.length ? EXIT.invalid : EXIT.ok;
}
