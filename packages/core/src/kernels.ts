import { findKernel, majorOf, type KernelManifest } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from './diagnostics.js';
import type { ImplementationGraph } from './compile/types.js';
import { allPrograms } from './compile/decode.js';
import type { ProjectDocument } from './document/types.js';
import { kernelIds } from './document/walk.js';

// Kernel versions: which a document was made with (its `kernels` record) and which each agent
// reports at login (`welcome.kernels`). A node whose kernel an agent lacks, or has in another
// major version, is refused before anything is deployed.

/** An agent as far as kernels go: its host, URL and the manifests it reported (absent from agents before kernel packages). */
export interface AgentKernels {
  host: string;
  url: string;
  kernels?: readonly KernelManifest[];
}

/**
 * Every registered kernel id -> version the document's nodes use, sorted (what a saved document
 * keeps as `kernels`); a node whose kernel is not registered keeps the version recorded before.
 */
export function kernelVersions(doc: Pick<ProjectDocument, 'app' | 'defs' | 'kernels'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of kernelIds(doc)) {
    const version = findKernel(id)?.version ?? doc.kernels?.[id];
    if (version) out[id] = version;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * For every fire of the graph: the agent serving its host must report the kernel, in the
 * major version this side compiled with. Each refusal names the node, the kernel, both
 * versions, the host and the agents that do have it.
 */
export function checkAgentKernels(ig: ImplementationGraph, agents: readonly AgentKernels[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const byHost = new Map(agents.map((a) => [a.host, a]));
  const seen = new Set<string>();
  for (const program of Object.values(allPrograms(ig))) {
    const agent = byHost.get(program.host);
    // Agents from before kernel packages report nothing: nothing to compare (their own check refuses unknown ids).
    if (!agent?.kernels) continue;
    for (const phase of program.phases) {
      for (const a of phase.actions) {
        if (a.op !== 'fire' || seen.has(`${program.host}\0${a.node}`)) continue;
        seen.add(`${program.host}\0${a.node}`);
        const want = findKernel(a.kernel)?.version ?? '?';
        const has = agent.kernels.find((k) => k.id === a.kernel);
        const others = agents
          .filter((x) => x !== agent && x.kernels?.some((k) => k.id === a.kernel))
          .map((x) => `${x.host} (${x.kernels!.find((k) => k.id === a.kernel)!.version})`);
        if (!has) {
          out.push(
            error(
              `mapping.${a.node}`,
              `node "${a.node}" needs kernel ${a.kernel} ${want}, but agent ${program.host} (${agent.url}) does not have it${others.length ? `; agents that have it: ${others.join(', ')}` : '; no connected agent has it'}`,
              `start agent ${program.host} with --kernels naming the package that defines ${a.kernel}, or map "${a.node}" to a host whose agent has it`,
            ),
          );
        } else if (majorOf(has.version) !== majorOf(want)) {
          out.push(
            error(
              `mapping.${a.node}`,
              `node "${a.node}" was compiled with kernel ${a.kernel} ${want}, but agent ${program.host} (${agent.url}) has ${has.version} (from ${has.package}), another major version`,
              `load ${a.kernel} ${majorOf(want)}.x on ${program.host} (--kernels), or compile with the package the agents have`,
            ),
          );
        }
      }
    }
  }
  return out;
}
