import { createStore, useStore } from 'zustand';
import { findKernel, registerKernels, specFromManifest, type KernelManifest } from '@pipeloom/kernels';
import { compilerApi } from './compiler.js';

// The kernels connected agents report at login (manifests: data, no code), by host. The
// palette lists them beside the built-ins, grouped by package; a package kernel the designer
// has not loaded is registered from its manifest (here and in the compile worker, which has its
// own registry) so it can be placed and its edges checked.

export interface AgentKernelsState {
  /** Host -> the kernels its agent reported. */
  byHost: Record<string, KernelManifest[]>;
}

export const agentKernelsStore = createStore<AgentKernelsState>()(() => ({ byHost: {} }));
export const useAgentKernels = <T>(sel: (s: AgentKernelsState) => T) => useStore(agentKernelsStore, sel);

/** Records what `host`'s agent reported and registers the kernels the designer lacks. */
export function reportAgentKernels(host: string, kernels: readonly KernelManifest[] | undefined): void {
  if (!kernels) return;
  const fresh = kernels.filter((k) => !findKernel(k.id));
  for (const [pkg, list] of groupBy(fresh, (k) => k.package)) registerKernels(list.map(specFromManifest), pkg);
  if (fresh.length) void compilerApi()?.registerManifests(fresh);
  agentKernelsStore.setState((s) => ({ byHost: { ...s.byHost, [host]: [...kernels] } }));
}

function groupBy<T>(list: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of list) out.set(key(x), [...(out.get(key(x)) ?? []), x]);
  return out;
}
