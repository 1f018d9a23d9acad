import { findKernel, formatDataType, portsFor, sameDataType, withDefaults, type DataType, type KernelSpec, type ParamValue, type PortSpec } from '@pipeloom/kernels';
import type { AppNode, ProjectDocument } from '@pipeloom/core';

// Port types as the editor sees them: resolved from the node's params (defaults filled in),
// with a readable reason when they cannot be resolved or do not match.

/**
 * The params the designer writes for a node: `params` with the kernel's defaults, except a
 * checker's expectation params the node leaves unset (they are derived from the graph
 * upstream until the user sets one).
 */
export function writtenParams(kernel: KernelSpec, params: AppNode['params'] | undefined): Record<string, ParamValue> {
  const out = withDefaults(kernel, params);
  for (const p of kernel.expects?.params ?? []) if (!Object.hasOwn(params ?? {}, p)) delete out[p];
  return out;
}

/** A node's ports for its params (variadic ports expanded, declared ones read); none when they cannot be read. */
export function nodePorts(node: AppNode): { inputs: PortSpec[]; outputs: PortSpec[] } {
  const kernel = findKernel(node.kernel ?? '');
  if (!kernel) return { inputs: [], outputs: [] };
  try {
    return portsFor(kernel, withDefaults(kernel, node.params));
  } catch {
    return { inputs: [], outputs: [] };
  }
}

export function portType(node: AppNode, port: string, side: 'in' | 'out'): { type?: DataType; error?: string; kernel?: KernelSpec } {
  const kernel = findKernel(node.kernel ?? '');
  if (!kernel) return { error: `kernel "${node.kernel}" is not registered` };
  const ports = nodePorts(node);
  const spec = (side === 'in' ? ports.inputs : ports.outputs).find((p) => p.name === port);
  if (!spec) return { kernel, error: `${kernel.id} has no ${side === 'in' ? 'input' : 'output'} "${port}"` };
  try {
    return { kernel, type: spec.type(withDefaults(kernel, node.params)) };
  } catch (e) {
    return { kernel, error: `cannot resolve ${node.id}.${port}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Why connecting from.port to to.port is refused, or null when it is fine. */
export function connectionProblem(doc: ProjectDocument, from: { node: string; port: string }, to: { node: string; port: string }): string | null {
  if (from.node === to.node) return `a node cannot feed itself (${from.node})`;
  const src = doc.app.nodes.find((n) => n.id === from.node);
  const dst = doc.app.nodes.find((n) => n.id === to.node);
  if (!src || !dst) return 'both ends must be nodes of the DFG';
  const fed = doc.app.edges.find((e) => e.to.node === to.node && e.to.port === to.port);
  if (fed) return `${to.node}.${to.port} is already fed by ${fed.from.node}.${fed.from.port}; remove that edge first`;
  const a = portType(src, from.port, 'out');
  const b = portType(dst, to.port, 'in');
  if (a.error) return a.error;
  if (b.error) return b.error;
  if (!sameDataType(a.type!, b.type!)) {
    return `type mismatch: ${from.node}.${from.port} produces ${formatDataType(a.type!)} but ${to.node}.${to.port} expects ${formatDataType(b.type!)}`;
  }
  if (reaches(doc, to.node, from.node)) return `${from.node} -> ${to.node} would close a cycle; a DFG has none`;
  return null;
}

function reaches(doc: ProjectDocument, start: string, goal: string): boolean {
  const seen = new Set<string>();
  const stack = [start];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === goal) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    for (const e of doc.app.edges) if (e.from.node === n) stack.push(e.to.node);
  }
  return false;
}

/** A fresh node id from the kernel's short name: produce, increment, increment2, ... */
export function freshNodeId(doc: ProjectDocument, kernelId: string): string {
  const base = kernelId.split('.').pop()!.replace(/[^A-Za-z0-9_]/g, '_');
  const taken = new Set(doc.app.nodes.map((n) => n.id));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}${i}`)) return `${base}${i}`;
}
