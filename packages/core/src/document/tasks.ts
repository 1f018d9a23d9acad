import { declaredRate, findKernel, GENERIC_SUM, specFor, withDefaults, type DataType, type KernelSpec, type Params } from '@pipeloom/kernels/specs';
import { error, type Diagnostic } from '../diagnostics.js';
import type { Stage } from './stage.js';
import { normalize } from './normalize.js';
import type { AppEdge, AppNode, MappingTarget, WrittenDocument } from './types.js';

// Split nodes (`tasks: K`, the Boss/Worker issue): a node whose kernel declares a split
// (KernelSpec.split) becomes K share nodes `X[0]` .. `X[K-1]`, share j with the kernel's count
// param = K and index param = j (it takes the interleaved part j, j + K, ... of the work), and a
// combine node keeping the id `X`: `generic.sum` adding the shares' outputs in share order, so
// the result is the same bits wherever the shares ran. Edges into X feed every share; each
// share feeds the combine's in{j}; edges out of X leave the combine (its port `sum`). A node
// mapped onto a list L of P PEs gives share j to L[j mod P] (equal interleaved shares per PE,
// the paper's listing) and the combine to L[0]. K = 1 expands the same way, so every K and
// every execution mode computes the same sums. Runs after delays (init nodes are gone, delayed
// edges carry InitSpecs, copied to each share) and before rates: the lowered form holds no
// `tasks` and only single PEs in its mapping. docs/document-format.md, "Tasks".

/** The shares a node's `tasks` may ask for: generic.sum's most inputs. */
export const MAX_TASKS = 4096;

/** The share node j of node `id`. */
export const shareId = (id: string, j: number) => `${id}[${j}]`;

export function expandTasks(stage: Stage<WrittenDocument>, out: Diagnostic[]): Stage | undefined {
  const { doc, nodePaths, edgePaths } = stage;
  const nodes = doc.app.nodes;
  const lists = Object.keys(doc.mapping).filter((k) => Array.isArray(doc.mapping[k]));
  if (!lists.length && !nodes.some((n) => n.tasks !== undefined)) return stage as Stage;
  const before = out.length;
  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (!index.has(n.id)) index.set(n.id, i);
  });

  // PE lists: only for nodes with tasks, every PE known (the host shorthands expanded).
  const pes = new Set(normalize({ ...doc, mapping: {} }).arch.pes.map((p) => p.id));
  for (const key of lists) {
    const list = doc.mapping[key] as string[];
    const i = index.get(key);
    if (i === undefined) out.push(error(`mapping.${key}`, `node "${key}" does not exist`, 'remove this entry or add the node to app.nodes'));
    else if (nodes[i].tasks === undefined)
      out.push(
        error(
          `mapping.${key}`,
          `node "${key}" is mapped to a list of PEs, but has no tasks: a list spreads a node's shares`,
          `map it to one PE ("${list[0]}"), or give it "tasks" (its kernel must split)`,
        ),
      );
    // (The shape check bounds a list's length: schema.ts MAX_PE_LIST.)
    list.forEach((pe, j) => {
      if (!pes.has(pe))
        out.push(
          error(`mapping.${key}[${j}]`, `PE "${pe}" does not exist`, `list PEs of arch: ${[...pes].slice(0, 8).join(', ')}${pes.size > 8 ? ', ...' : ''}`),
        );
    });
  }

  const taken = new Set(nodes.map((n) => n.id));
  const plans = new Map<number, { kernel: KernelSpec; count: number; type: DataType; output: string }>();
  nodes.forEach((n, i) => {
    if (n.tasks === undefined) return;
    const plan = planSplit(n, nodePaths[i], out);
    if (!plan) return;
    for (let j = 0; j < plan.count; j++) {
      if (taken.has(shareId(n.id, j))) {
        out.push(
          error(
            `${nodePaths[i]}.id`,
            `node "${n.id}" has ${plan.count} tasks, and its share "${shareId(n.id, j)}" has the id of another node`,
            `rename the node "${shareId(n.id, j)}": ids of the form <node>[<n>] name shares`,
          ),
        );
        return;
      }
    }
    if (!Object.hasOwn(doc.mapping, n.id)) {
      out.push(error('mapping', `node "${n.id}" is not mapped`, `add "${n.id}": "<PE id>", or a list of PE ids its ${plan.count} shares take in turn`));
      return;
    }
    plans.set(i, plan);
  });
  if (out.length > before) return undefined;

  const lowNodes: AppNode[] = [];
  const lowNodePaths: string[] = [];
  const mapping: Record<string, string> = {};
  // Entries naming a share itself (`X[2]`) win over the node's list.
  for (const key of Object.keys(doc.mapping))
    if (!Array.isArray(doc.mapping[key]) && !plans.has(index.get(key) ?? -1)) mapping[key] = doc.mapping[key] as string;
  nodes.forEach((n, i) => {
    const plan = plans.get(i);
    if (!plan) {
      lowNodes.push(n);
      lowNodePaths.push(nodePaths[i]);
      return;
    }
    const { tasks: _tasks, position, ...rest } = n;
    const split = plan.kernel.split!;
    const target: MappingTarget = doc.mapping[n.id];
    const list = typeof target === 'string' ? [target] : target;
    for (let j = 0; j < plan.count; j++) {
      const id = shareId(n.id, j);
      const share: AppNode = {
        ...rest,
        id,
        params: { ...n.params, [split.count]: plan.count, [split.index]: j },
        share: { node: n.id, index: j, of: plan.count },
      };
      // Shares fan out on the canvas of the expanded graph.
      if (position) share.position = { x: position.x + 24 * j, y: position.y + 24 * j };
      lowNodes.push(share);
      lowNodePaths.push(nodePaths[i]);
      if (!Object.hasOwn(mapping, id)) mapping[id] = list[j % list.length];
    }
    const combine: AppNode = {
      id: n.id,
      kernel: GENERIC_SUM,
      params: { count: plan.count, kind: plan.type.kind, shape: plan.type.shape.join(',') },
      combine: { node: n.id, of: plan.count },
    };
    if (position) combine.position = { x: position.x + 24 * plan.count + 120, y: position.y };
    lowNodes.push(combine);
    lowNodePaths.push(nodePaths[i]);
    mapping[n.id] = list[0];
  });

  const byIndex = (id: string) => plans.get(index.get(id) ?? -1);
  const lowEdges: AppEdge[] = [];
  const lowEdgePaths: string[] = [];
  doc.app.edges.forEach((e, i) => {
    // Out of a split node: out of its combine, whose one output is `sum`.
    const from = byIndex(e.from.node) ? { node: e.from.node, port: 'sum' } : e.from;
    const into = byIndex(e.to.node);
    if (!into) {
      lowEdges.push(from === e.from ? e : { ...e, from });
      lowEdgePaths.push(edgePaths[i]);
      return;
    }
    for (let j = 0; j < into.count; j++) {
      lowEdges.push({ ...e, from, to: { node: shareId(e.to.node, j), port: e.to.port } });
      lowEdgePaths.push(edgePaths[i]);
    }
  });
  for (const [i, plan] of plans) {
    const id = nodes[i].id;
    for (let j = 0; j < plan.count; j++) {
      lowEdges.push({ from: { node: shareId(id, j), port: plan.output }, to: { node: id, port: `in${j}` } });
      lowEdgePaths.push(`${nodePaths[i]}.tasks`);
    }
  }
  return { doc: { ...doc, app: { nodes: lowNodes, edges: lowEdges }, mapping }, nodePaths: lowNodePaths, edgePaths: lowEdgePaths };
}

/** A node's split: its kernel, K, and the output the shares sum; undefined after a diagnostic naming the node and the fix. */
function planSplit(n: AppNode, path: string, out: Diagnostic[]): { kernel: KernelSpec; count: number; type: DataType; output: string } | undefined {
  const at = `${path}.tasks`;
  const k = n.tasks;
  // An expression that failed was reported where it was evaluated (params.ts).
  if (typeof k !== 'number') return undefined;
  if (!Number.isSafeInteger(k) || k < 1) {
    out.push(error(at, `node "${n.id}": tasks ${k} is not a whole number of tasks, 1 or more`, 'write how many shares its work splits into: 1 or more'));
    return undefined;
  }
  const kernel = typeof n.kernel === 'string' ? findKernel(n.kernel) : undefined;
  // An unknown kernel is validate's to report.
  if (!kernel) return undefined;
  const split = kernel.split;
  if (!split) {
    out.push(
      error(at, `node "${n.id}": kernel ${kernel.id} has no split param; remove tasks`, 'only kernels that declare a split (e.g. mlem.projbp) run as tasks'),
    );
    return undefined;
  }
  for (const name of [split.count, split.index]) {
    if (n.params && Object.hasOwn(n.params, name)) {
      out.push(
        error(
          `${path}.params.${name}`,
          `node "${n.id}" sets ${name} itself and has tasks: tasks sets ${name} on each share`,
          `remove params.${name}, or remove tasks`,
        ),
      );
      return undefined;
    }
  }
  const params: Params = withDefaults(kernel, n.params);
  const range = Number(params[split.range]);
  if (k > range) {
    out.push(
      error(
        at,
        `node "${n.id}": tasks ${k} > ${split.range} ${range}: each share needs at least one of its ${split.range}`,
        `lower tasks to ${range} or fewer, or raise ${split.range}`,
      ),
    );
    return undefined;
  }
  const most = Math.min(MAX_TASKS, kernel.params[split.count]?.max ?? MAX_TASKS);
  if (k > most) {
    out.push(error(at, `node "${n.id}": tasks ${k} is more than ${most}, the most shares ${kernel.id} takes`, `lower tasks to ${most} or fewer`));
    return undefined;
  }
  // One firing per iteration: a node firing several times would split each firing, which no
  // combine rule covers.
  let spec: KernelSpec;
  try {
    spec = specFor(kernel, params);
  } catch {
    return undefined; // its params give no ports: validate names that at the node
  }
  const written = n.rates ? Object.entries(n.rates) : [];
  const declared = [...spec.inputs, ...spec.outputs].map((p): [string, unknown] => [p.name, safeRate(() => declaredRate(p, params))]);
  for (const [port, rate] of [...written, ...declared]) {
    if (typeof rate === 'number' && rate > 1) {
      out.push(
        error(
          `${path}.rates`,
          `node "${n.id}" has tasks and rate ${rate} on port "${port}": a node with tasks fires once per iteration`,
          'give it rate 1 on every port, or remove tasks',
        ),
      );
      return undefined;
    }
  }
  const output = spec.outputs[0];
  let type: DataType;
  try {
    type = output.type(params);
  } catch {
    return undefined; // validate reports the type
  }
  return { kernel, count: k, type, output: output.name };
}

const safeRate = (rate: () => number) => {
  try {
    return rate();
  } catch {
    return undefined;
  }
};
