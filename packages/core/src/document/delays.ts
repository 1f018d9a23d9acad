import { findKernel, specFor, withDefaults } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import type { Stage } from './stage.js';
import { MAX_DELAY } from './schema.js';
import type { AppEdge, InitSpec, WrittenDocument } from './types.js';

// Delays (feedback): an edge with `delay: d` carries d initial tokens, read by the consumer's
// first firings; `init` gives their values, a constant or a source node run once per token.
// This step checks each delayed edge and turns its `init` into the InitSpec the lowered form
// keeps: `{ value }`, or `{ node, kernel, params }` for a source node, which then leaves the
// graph (it fires before the run, never in it). Cycles and the static schedule's loop rule are
// validate's and the latency pass's (docs/document-format.md, "Delays and feedback").

export function prepareDelays(stage: Stage<WrittenDocument>, out: Diagnostic[]): Stage<WrittenDocument> | undefined {
  const { doc, nodePaths, edgePaths } = stage;
  const edges = doc.app.edges;
  if (!edges.some((e) => e.delay !== undefined || e.init !== undefined)) return stage;
  const before = out.length;
  const index = new Map<string, number>();
  doc.app.nodes.forEach((n, i) => {
    if (!index.has(n.id)) index.set(n.id, i);
  });
  // Nodes named as an init: they leave the graph.
  const initNodes = new Set<number>();
  const lowered: AppEdge[] = edges.map((e, i) => {
    const at = edgePaths[i];
    const what = `the edge ${e.from.node}.${e.from.port} -> ${e.to.node}.${e.to.port}`;
    const d = e.delay;
    if (d !== undefined && (typeof d !== 'number' || !Number.isInteger(d) || d < 0)) {
      out.push(
        error(
          `${at}.delay`,
          `${what}: delay ${JSON.stringify(d)} is not a whole number of tokens`,
          'write the number of initial tokens on the edge: 0 or more',
        ),
      );
      return e;
    }
    if (d !== undefined && d > MAX_DELAY) {
      out.push(
        error(
          `${at}.delay`,
          `${what}: delay ${d} is more initial tokens than an edge may carry (at most ${MAX_DELAY}, 2^30)`,
          `write a delay of at most ${MAX_DELAY}: a run of N iterations reads only the first N initial tokens, so any delay above N reads them throughout`,
        ),
      );
      return e;
    }
    const tokens = (d as number | undefined) ?? 0;
    if (tokens > 0 && e.init === undefined) {
      out.push(
        error(
          at,
          `${what} has a delay of ${tokens} but no init: its initial tokens have no values`,
          'add "init": 0 (every element of the initial tokens), or "init": { "node": "<id of a source node>" }',
        ),
      );
      return e;
    }
    if (tokens === 0 && e.init !== undefined) {
      out.push(error(`${at}.init`, `${what} has an init but no delay: it carries no initial tokens`, 'add "delay": 1 (or more), or remove the init'));
      return e;
    }
    if (e.init === undefined) return e;
    const init = initSpec(e.init, `${at}.init`, what, doc.app.nodes, nodePaths, index, out);
    if (!init) return e;
    if ('value' in init && init.value <= 0) {
      // A port whose values must be positive (an MLEM estimate: a zero voxel stays zero) cannot start from 0 or less.
      const to = doc.app.nodes[index.get(e.to.node) ?? -1];
      const port = to?.kernel ? findKernel(to.kernel)?.inputs.find((p) => p.name === e.to.port) : undefined;
      if (port?.positive) {
        out.push(
          error(
            `${at}.init`,
            `${what}: init ${init.value}, but input "${e.to.port}" of ${to!.kernel} takes values above 0 (${port.positive})`,
            'give the initial tokens a value above 0, e.g. "init": 1 (the flat start)',
          ),
        );
        return e;
      }
    }
    if ('node' in init) initNodes.add(index.get(init.node)!);
    return { ...e, init };
  });
  if (out.length > before) return undefined;
  if (!initNodes.size) return { ...stage, doc: { ...doc, app: { ...doc.app, edges: lowered } } };

  // An init node is a source of initial values only: no edge may touch it.
  lowered.forEach((e, i) => {
    for (const end of [e.from, e.to]) {
      const j = index.get(end.node);
      if (j !== undefined && initNodes.has(j))
        out.push(
          error(
            edgePaths[i],
            `node "${end.node}" gives an init's values, so it runs before the run and never in it: no edge may connect it`,
            `remove this edge, or give the init another source node`,
          ),
        );
    }
  });
  if (out.length > before) return undefined;
  const keep = doc.app.nodes.map((_, i) => !initNodes.has(i));
  const mapping = { ...doc.mapping };
  for (const i of initNodes) delete mapping[doc.app.nodes[i].id];
  return {
    doc: { ...doc, app: { nodes: doc.app.nodes.filter((_, i) => keep[i]), edges: lowered }, mapping },
    nodePaths: nodePaths.filter((_, i) => keep[i]),
    edgePaths,
  };
}

/** The lowered InitSpec of an edge's `init`, or undefined after a diagnostic. */
function initSpec(
  init: NonNullable<AppEdge['init']>,
  at: string,
  what: string,
  nodes: WrittenDocument['app']['nodes'],
  nodePaths: string[],
  index: Map<string, number>,
  out: Diagnostic[],
): InitSpec | undefined {
  if (typeof init === 'number') {
    if (!Number.isFinite(init)) {
      out.push(error(at, `${what}: init ${init} is not a finite number`, 'write the value of every element of the initial tokens'));
      return undefined;
    }
    return { value: init };
  }
  // The lowered form written by a tool: kept as it is.
  if ('value' in init || 'kernel' in init) return init as InitSpec;
  const j = index.get(init.node);
  if (j === undefined) {
    out.push(error(`${at}.node`, `${what}: init node "${init.node}" does not exist`, 'name a source node of the same graph (a kernel node with no inputs)'));
    return undefined;
  }
  const n = nodes[j];
  const kernel = n.kernel === undefined ? undefined : findKernel(n.kernel);
  if (!kernel) {
    out.push(
      error(
        `${at}.node`,
        `${what}: init node "${n.id}" is not a kernel node (${n.kernel === undefined ? 'a composite' : `unknown kernel "${n.kernel}"`})`,
        'name a source node: a kernel node with no inputs, such as matrix.produce',
      ),
    );
    return undefined;
  }
  const params = withDefaults(kernel, n.params as Record<string, number | string | boolean> | undefined);
  let ports: { inputs: number; outputs: number };
  try {
    const spec = specFor(kernel, params);
    ports = { inputs: spec.inputs.length, outputs: spec.outputs.length };
  } catch {
    // Its params give no ports: validate names that at the node itself.
    return { node: n.id, kernel: kernel.id, params };
  }
  if (ports.inputs > 0 || ports.outputs !== 1) {
    out.push(
      error(
        `${at}.node`,
        `${what}: init node "${n.id}" (${kernel.id}) has ${ports.inputs} input${ports.inputs === 1 ? '' : 's'} and ${ports.outputs} output${ports.outputs === 1 ? '' : 's'}; an init runs a source: no input, one output`,
        `written at ${nodePaths[j]}; use a source kernel such as matrix.produce, or a constant init`,
      ),
    );
    return undefined;
  }
  return { node: n.id, kernel: kernel.id, params };
}
