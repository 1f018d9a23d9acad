import { CUSTOM_WGSL, findKernel, majorOf } from '@pipeloom/kernels';
import type { PeProgram } from '@pipeloom/core';

// Only registered kernels run on an agent; `custom.wgsl` carries WGSL written in the document,
// which an agent runs only when its operator opted in with --allow-wgsl.

/** The refusal for a deploy whose programs fire custom WGSL on an agent without --allow-wgsl; undefined when allowed. */
export function customWgslRefusal(host: string, programs: readonly PeProgram[], allowWgsl: boolean): string | undefined {
  if (allowWgsl) return undefined;
  for (const program of programs) {
    for (const phase of program.phases ?? []) {
      for (const a of phase.actions ?? []) {
        if (a.op === 'fire' && a.kernel === CUSTOM_WGSL) return `agent ${host} refuses custom WGSL in node "${a.node}": start it with --allow-wgsl`;
      }
    }
  }
  return undefined;
}

/**
 * The refusal for a deploy firing a kernel this agent does not have (its operator did not load
 * the package with --kernels), or has in another major version than the coordinator compiled
 * against (the deploy's `kernels`); undefined when it has them all. Checked before anything is
 * allocated, as the coordinator's own check should have caught it.
 */
export function missingKernelRefusal(host: string, programs: readonly PeProgram[], versions: Readonly<Record<string, string>> = {}): string | undefined {
  for (const program of programs) {
    for (const phase of program.phases ?? []) {
      for (const a of phase.actions ?? []) {
        if (a.op !== 'fire') continue;
        const kernel = findKernel(a.kernel);
        if (!kernel) return `agent ${host} has no kernel "${a.kernel}" (node "${a.node}"): start it with --kernels naming the package that defines it`;
        // The coordinator compiled against `wanted`; another major version may have other ports or meanings.
        const wanted = Object.hasOwn(versions, a.kernel) ? versions[a.kernel] : undefined;
        if (wanted !== undefined && majorOf(wanted) !== majorOf(kernel.version))
          return `agent ${host} has kernel "${a.kernel}" ${kernel.version}, but node "${a.node}" was compiled against ${wanted} (another major version): load the package version the document was made with`;
      }
    }
  }
  return undefined;
}
