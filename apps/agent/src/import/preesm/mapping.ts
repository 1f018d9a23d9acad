import { flattenDocument, lowerDocument, type ProjectDocument } from '@pipeloom/core';
import type { Issues } from './issues.js';
import type { Scenario } from './scenario.js';
import type { ImportedArch } from './slam.js';

// The mapping from the scenario's constraints: each actor may run on the operators of the
// constraint groups naming it (special actors, where none names them, on the special vertex
// operators). Largest work first, each firing goes to the allowed PE with the least work so
// far; the actors of a loop (a cycle through delays) stay together on one PE, which the loop
// rule needs unless its delay covers the cycles a crossing would add.

export interface MappedNode {
  /** Flattened id (`Filter/Blur`). */
  id: string;
  /** The scenario's path (`top/Filter/Blur`). */
  path: string;
  special: boolean;
  flops: number;
  file: string;
  line: number;
}

export function mapActors(
  doc: ProjectDocument,
  nodes: MappedNode[],
  arch: ImportedArch,
  scenario: Scenario | undefined,
  topName: string,
  scenarioFile: string | undefined,
  issues: Issues,
): Record<string, string> {
  const allPes = arch.operators.map((op) => arch.peOf.get(op)!);
  const allowed = new Map<string, string[]>();
  const unconstrained: string[] = [];
  for (const n of nodes) {
    let ops = scenario?.constraints.get(n.path);
    if (!ops?.length && n.special && scenario?.specialVertexOperators.length) ops = scenario.specialVertexOperators;
    const pes = (ops ?? []).flatMap((op) => {
      const pe = arch.peOf.get(op);
      if (!pe) issues.warn(scenarioFile!, undefined, `constraint of ${n.path}`, `names operator "${op}", which the architecture does not have: it is left out`);
      return pe ? [pe] : [];
    });
    if (!pes.length && scenario) unconstrained.push(n.path);
    allowed.set(n.id, pes.length ? pes : allPes);
  }
  if (unconstrained.length) {
    issues.warn(
      scenarioFile!,
      undefined,
      'constraints',
      `no operator may run ${unconstrained.join(', ')}: every operator is allowed for them`,
      'add them to constraint groups',
    );
  }

  // Firings per iteration and the flattened edges, from core (every node mapped provisionally).
  const provisional = { ...doc, mapping: Object.fromEntries(nodes.map((n) => [n.id, allPes[0]])) };
  const { lowered } = lowerDocument(provisional);
  const { doc: flat } = flattenDocument(provisional);
  const q = (id: string) => lowered?.repetitions[id] ?? 1;
  const groups = loops(
    nodes.map((n) => n.id),
    (flat?.app.edges ?? []).map((e) => [e.from.node, e.to.node] as [string, string]),
  );

  const byId = new Map(nodes.map((n) => [n.id, n]));
  type Unit = { key: string; work: number; pes: string[] };
  const units: Unit[] = [];
  for (const group of groups) {
    if (group.length === 1 && q(group[0]) > 1) {
      const n = byId.get(group[0])!;
      for (let i = 0; i < q(n.id); i++) units.push({ key: `${n.id}#${i}`, work: n.flops, pes: allowed.get(n.id)! });
      continue;
    }
    let pes = allowed.get(group[0])!;
    for (const id of group.slice(1)) pes = pes.filter((pe) => allowed.get(id)!.includes(pe));
    if (!pes.length) {
      pes = allowed.get(group[0])!;
      issues.warn(
        scenarioFile!,
        undefined,
        `loop ${group.join(', ')}`,
        `no operator may run all its actors: they are mapped where ${group[0]} may run`,
        'allow one operator to run every actor of the loop',
      );
    }
    for (const id of group) units.push({ key: id, work: byId.get(id)!.flops * q(id), pes });
  }
  const load = new Map(allPes.map((pe) => [pe, 0]));
  const mapping: Record<string, string> = {};
  units
    .map((u, i) => ({ u, i }))
    .sort((a, b) => b.u.work - a.u.work || a.i - b.i)
    .forEach(({ u }) => {
      const pe = u.pes.reduce((best, pe) => (load.get(pe)! < load.get(best)! ? pe : best));
      mapping[u.key] = pe;
      load.set(pe, load.get(pe)! + u.work);
    });
  // Units of one group keep one PE: the group's first placement wins.
  for (const group of groups) {
    if (group.length > 1) for (const id of group) mapping[id] = mapping[group[0]];
  }
  void topName;
  return mapping;
}

/** Strongly connected components (iterative Tarjan): a loop's nodes together, other nodes alone. */
function loops(ids: string[], edges: [string, string][]): string[][] {
  const index = new Map(ids.map((id, i) => [id, i]));
  const next: number[][] = ids.map(() => []);
  for (const [a, b] of edges) {
    const i = index.get(a);
    const j = index.get(b);
    if (i !== undefined && j !== undefined) next[i].push(j);
  }
  const order = new Array<number>(ids.length).fill(-1);
  const low = new Array<number>(ids.length).fill(0);
  const onStack = new Array<boolean>(ids.length).fill(false);
  const stack: number[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (let s = 0; s < ids.length; s++) {
    if (order[s] >= 0) continue;
    const work: [number, number][] = [[s, 0]];
    order[s] = low[s] = counter++;
    stack.push(s);
    onStack[s] = true;
    while (work.length) {
      const top = work[work.length - 1];
      const [v, k] = top;
      if (k < next[v].length) {
        top[1]++;
        const w = next[v][k];
        if (order[w] < 0) {
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = true;
          work.push([w, 0]);
        } else if (onStack[w]) low[v] = Math.min(low[v], order[w]);
        continue;
      }
      work.pop();
      if (work.length) low[work[work.length - 1][0]] = Math.min(low[work[work.length - 1][0]], low[v]);
      if (low[v] === order[v]) {
        const comp: string[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = false;
          comp.push(ids[w]);
        } while (w !== v);
        out.push(comp.reverse());
      }
    }
  }
  return out;
}
