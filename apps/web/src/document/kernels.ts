import {
  findKernel,
  formatDataType,
  portsFor,
  sameDataType,
  withDefaults,
  type DataType,
  type KernelSpec,
  type ParamValue,
  type PortSpec,
} from '@pipeloom/kernels';
import type { AppNode, WrittenDocument } from '@pipeloom/core';
import { compositeOf, graphAt, innerAt, type GraphAt } from './graphs.js';
import { isScan, scanInProblem, scanPortNames, scanPortType } from './scanNode.js';

// Port types as the editor sees them: resolved from the node's params (defaults filled in),
// with a readable reason when they cannot be resolved or do not match.

/**
 * The params the designer writes for a node: `params` with the kernel's defaults, except a
 * checker's expectation params the node leaves unset (they are derived from the graph
 * upstream until the user sets one) and a split's count and index params it leaves unset.
 */
export function writtenParams(kernel: KernelSpec, params: AppNode['params'] | undefined): Record<string, ParamValue> {
  const out = withDefaults(kernel, params);
  for (const p of kernel.expects?.params ?? []) if (!Object.hasOwn(params ?? {}, p)) delete out[p];
  // A split's count and index are what `tasks` sets on each share: written only where the node
  // sets them itself (a node with both and tasks is refused).
  for (const p of kernel.split ? [kernel.split.count, kernel.split.index] : []) if (!Object.hasOwn(params ?? {}, p)) delete out[p];
  return out;
}

/** A node's ports for its params (variadic ports expanded, declared ones read); none when they cannot be read. */
export function nodePorts(node: AppNode): { inputs: PortSpec[]; outputs: PortSpec[] } {
  if (isScan(node)) {
    // A scan's types depend on what feeds it (portTypeAt reads them); its ports are named here.
    const port =
      (side: 'in' | 'out') =>
      (name: string): PortSpec => ({
        name,
        type: () => {
          throw new Error(scanPortType(node, name, side).error ?? 'its type comes from what feeds in');
        },
      });
    const { inputs, outputs } = scanPortNames(node);
    return { inputs: inputs.map(port('in')), outputs: outputs.map(port('out')) };
  }
  const kernel = findKernel(node.kernel ?? '');
  if (!kernel) return { inputs: [], outputs: [] };
  try {
    return portsFor(kernel, withDefaults(kernel, node.params));
  } catch {
    return { inputs: [], outputs: [] };
  }
}

export function portType(node: AppNode, port: string, side: 'in' | 'out'): { type?: DataType; error?: string; kernel?: KernelSpec } {
  if (isScan(node)) return scanPortType(node, port, side);
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

/**
 * Where a graph's nodes are read: the graph (`at`), the flattened id prefix of the instance shown
 * (`s1/`), and the nodes with their expressions evaluated (store/resolve.ts).
 */
export interface PortContext {
  at?: GraphAt;
  prefix: string;
  resolve: (flatId: string, written: AppNode) => AppNode;
}

const AS_WRITTEN: PortContext = { prefix: '', resolve: (_, n) => n };

/** A composite node's port names: its def's (or inline graph's) inputs and outputs. */
export function compositePorts(doc: WrittenDocument, node: AppNode): { inputs: string[]; outputs: string[] } {
  const c = compositeOf(doc, node);
  return { inputs: (c?.inputs ?? []).map((p) => p.name), outputs: (c?.outputs ?? []).map((p) => p.name) };
}

/** A port's type where the node is written: a kernel node's from its evaluated params, a composite's from the inner port it is bound to. */
export function portTypeAt(
  doc: WrittenDocument,
  ctx: PortContext,
  node: AppNode,
  port: string,
  side: 'in' | 'out',
  depth = 0,
): { type?: DataType; error?: string } {
  if (node.kernel !== undefined) return portType(ctx.resolve(`${ctx.prefix}${node.id}`, node), port, side);
  if (isScan(node)) {
    const resolved = ctx.resolve(`${ctx.prefix}${node.id}`, node);
    if (port === 'total' || (port !== 'in' && port !== 'out')) return scanPortType(resolved, port, side);
    // `in` and `out` carry N elements: N is what feeds `in`.
    const g = graphAt(doc, ctx.at) ?? doc.app;
    const feed = g.edges.find((e) => e.to.node === node.id && e.to.port === 'in');
    const src = feed && g.nodes.find((n) => n.id === feed.from.node);
    const fed = src && depth < 64 ? portTypeAt(doc, ctx, src, feed.from.port, 'out', depth + 1).type : undefined;
    return scanPortType(resolved, port, side, fed);
  }
  const c = compositeOf(doc, node);
  const inner = innerAt(ctx.at, node);
  if (!c || !inner || depth > 64) return { error: `${node.id} is not a kernel or a known composite` };
  const ref = side === 'in' ? c.inputs?.find((p) => p.name === port)?.to[0] : c.outputs?.find((p) => p.name === port)?.from;
  const n = ref && c.nodes.find((x) => x.id === ref.node);
  if (!ref || !n) return { error: `composite ${node.id} has no ${side === 'in' ? 'input' : 'output'} "${port}" bound to an inner port` };
  return portTypeAt(doc, { ...ctx, at: inner, prefix: `${ctx.prefix}${node.id}/` }, n, ref.port, side, depth + 1);
}

/** Why connecting from.port to to.port in the graph at `ctx.at` is refused, or null when it is fine. */
export function connectionProblem(
  doc: WrittenDocument,
  from: { node: string; port: string },
  to: { node: string; port: string },
  ctx: PortContext = AS_WRITTEN,
): string | null {
  const g = graphAt(doc, ctx.at) ?? doc.app;
  const src = g.nodes.find((n) => n.id === from.node);
  const dst = g.nodes.find((n) => n.id === to.node);
  if (!src || !dst) return 'both ends must be nodes of the graph shown (enter a composite to connect inside it)';
  const fed = g.edges.find((e) => e.to.node === to.node && e.to.port === to.port);
  if (fed) return `${to.node}.${to.port} is already fed by ${fed.from.node}.${fed.from.port}; remove that edge first`;
  const a = portTypeAt(doc, ctx, src, from.port, 'out');
  // A scan's `in` takes any number N of its operator's elements.
  if (isScan(dst) && to.port === 'in') return a.error ?? scanInProblem(ctx.resolve(`${ctx.prefix}${dst.id}`, dst), a.type!);
  const b = portTypeAt(doc, ctx, dst, to.port, 'in');
  if (a.error) return a.error;
  if (b.error) return b.error;
  if (!sameDataType(a.type!, b.type!)) {
    return `type mismatch: ${from.node}.${from.port} produces ${formatDataType(a.type!)} but ${to.node}.${to.port} expects ${formatDataType(b.type!)}`;
  }
  return null;
}

/**
 * Whether an edge from -> to closes a loop (a node feeding itself, or a path back from `to`):
 * the designer gives such an edge a delay (initial tokens) so the loop can start.
 */
export function closesLoop(doc: WrittenDocument, from: { node: string }, to: { node: string }, ctx: PortContext = AS_WRITTEN): boolean {
  const g = graphAt(doc, ctx.at) ?? doc.app;
  return from.node === to.node || reaches(g.edges, to.node, from.node);
}

function reaches(edges: WrittenDocument['app']['edges'], start: string, goal: string): boolean {
  const seen = new Set<string>();
  const stack = [start];
  while (stack.length) {
    const n = stack.pop()!;
    if (n === goal) return true;
    if (seen.has(n)) continue;
    seen.add(n);
    for (const e of edges) if (e.from.node === n) stack.push(e.to.node);
  }
  return false;
}

/** A fresh node id (in the graph at `at`) from the kernel's short name: produce, increment, increment2, ... */
export function freshNodeId(doc: WrittenDocument, kernelId: string, at?: GraphAt): string {
  const base = kernelId
    .split('.')
    .pop()!
    .replace(/[^A-Za-z0-9_]/g, '_');
  const taken = new Set((graphAt(doc, at) ?? doc.app).nodes.map((n) => n.id));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}${i}`)) return `${base}${i}`;
}
