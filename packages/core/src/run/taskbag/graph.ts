import { dataTypeBytes, findKernel, portsFor, type ElementType, type Params } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../../diagnostics.js';
import type { Model } from '../../document/model.js';
import type { InitSpec } from '../../document/types.js';
import type { Clause } from '../../document/requires.js';

// The task graph of a task-bag run: the lowered DFG as tasks see it. One task per node and
// iteration; a split node (`tasks: K`) is already K share nodes `X[j]` and a combine node `X`
// after lowering (document/tasks.ts), so every node here is one task per iteration, its id
// `node@iteration`. The mapping and the PACCO passes play no part: where a task runs is decided
// at run time (bag.ts, run/policy.ts).

/** One part of an input: bytes [offset, offset + bytes) of producer `from`'s output `port`, read `delay` iterations back, landing at `at`. */
export interface BagPart {
  from: number;
  port: string;
  delay: number;
  /** What iterations before `delay` read instead (the edge's initial tokens). */
  init?: InitSpec;
  offset: number;
  bytes: number;
  at: number;
}

export interface BagGraphNode {
  id: string;
  /** Document (lowered) order: the policy's tie-break between tasks of one iteration. */
  order: number;
  kernel: string;
  /** The kernel's version as this side knows it: a PE whose agent has another major version cannot run it. */
  version?: string;
  params: Params;
  /** Share j of a split node (its `share` marker), for labels and the policy's order. */
  share?: number;
  requires?: Clause[];
  /** Kernels that keep state across iterations: their tasks run in order on one PE (bag.ts pins them). */
  stateful: boolean;
  /** Whether the kernel has a WGSL implementation (GPU PEs can run it). */
  gpu: boolean;
  inputs: { port: string; bytes: number; element: ElementType; parts: BagPart[] }[];
  outputs: { port: string; bytes: number }[];
  /** Nodes reading this one's outputs, each with the delays it reads them at (freeing waits for all of them). */
  consumers: { node: number; delay: number }[];
}

export interface BagGraph {
  nodes: BagGraphNode[];
}

/** The output key agents store a task's output under: `<node>:<port>@<iteration>`. */
export const outputKey = (node: string, port: string, iteration: number) => `${node}:${port}@${iteration}`;
/** A task's id: `node@iteration` (a share node's id is already `X[j]`). */
export const taskId = (node: string, iteration: number) => `${node}@${iteration}`;

/** The task graph of a validated model; diagnostics name what task-bag mode cannot run. */
export function bagGraph(model: Model): { graph?: BagGraph; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const { edges } = model;
  const written = model.lowered.nodePaths;
  const nodes: BagGraphNode[] = model.nodes.map((n, i) => {
    const lowered = model.doc.app.nodes[n.index] as { share?: { index: number } };
    const manifest = findKernel(n.kernel.id) as { gpu?: boolean } | undefined;
    return {
      id: n.id,
      order: i,
      kernel: n.kernel.id,
      version: n.kernel.version,
      params: n.params,
      share: lowered.share?.index,
      requires: n.requires,
      stateful: n.kernel.stateful === true,
      gpu: manifest?.gpu !== false,
      inputs: [],
      outputs: [],
      consumers: [],
    };
  });
  const outBytes = new Map<string, number>();
  for (let e = 0; e < edges.count; e++) outBytes.set(`${edges.from[e]}:${edges.fromPort[e]}`, edges.outputBytes[e]);
  for (let i = 0; i < nodes.length; i++) {
    const byPort = new Map<string, BagGraphNode['inputs'][number]>();
    for (let k = model.inputs.start[i]; k < model.inputs.start[i + 1]; k++) {
      const e = model.inputs.edge[k];
      const port = edges.toPort[e];
      let input = byPort.get(port);
      if (!input) {
        input = { port, bytes: 0, element: edges.type[e].element, parts: [] };
        byPort.set(port, input);
        nodes[i].inputs.push(input);
      }
      // Parts tile the port: its size is where the last one ends.
      input.bytes = Math.max(input.bytes, edges.toOffset[e] + edges.bytes[e]);
      const delay = edges.delay[e];
      input.parts.push({
        from: edges.from[e],
        port: edges.fromPort[e],
        delay,
        init: edges.init[e],
        offset: edges.fromOffset[e],
        bytes: edges.bytes[e],
        at: edges.toOffset[e],
      });
      const producer = nodes[edges.from[e]];
      if (!producer.consumers.some((c) => c.node === i && c.delay === delay)) producer.consumers.push({ node: i, delay });
    }
    for (const input of nodes[i].inputs) {
      // A delayed input reads its initial tokens whole (the protocol's `init` is per input).
      if (input.parts.length > 1 && input.parts.some((p) => p.delay > 0)) {
        diagnostics.push(
          error(
            written[i] ?? `app.nodes[${i}]`,
            `input "${input.port}" of node "${nodes[i].id}" is fed in parts with a delay on one of them; task-bag mode reads a delayed input whole`,
            'feed it from one edge, or run this document in static mode',
          ),
        );
      }
    }
  }
  for (let i = 0; i < nodes.length; i++) {
    const n = model.nodes[i];
    for (const o of portsFor(n.kernel, n.params).outputs)
      nodes[i].outputs.push({ port: o.name, bytes: outBytes.get(`${i}:${o.name}`) ?? dataTypeBytes(o.type(n.params)) });
  }
  return diagnostics.length ? { diagnostics } : { graph: { nodes }, diagnostics };
}
