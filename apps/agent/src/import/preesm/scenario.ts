import { attr, childNamed, childrenNamed, localName, type XmlElement } from '../xml.js';

// PREESM's scenario (.scenario): which operators may run each actor (constraint groups), the
// actors' timings per operator type, the data types' sizes, parameter values and the operators
// of special actors. Meaning is given by import.ts.

export interface Scenario {
  /** Actor path (`top/Sub/Actor`) -> operator instance names allowed to run it. */
  constraints: Map<string, string[]>;
  /** Actor path -> operator type (the S-LAM component definition) -> time expression. */
  timings: Map<string, Map<string, { time: string; line: number }>>;
  /** Data type name -> size as written (bytes, or bits in PREESM 3.x scenarios: see import.ts). */
  dataTypes: Map<string, number>;
  /** `graphName/param` -> value as written. */
  parameterValues: Map<string, { type: string; value: string; line: number }>;
  specialVertexOperators: string[];
  numberOfTopExecutions?: number;
}

export function readScenario(root: XmlElement): Scenario {
  if (localName(root.name) !== 'scenario') throw new Error(`the root element is <${root.name}>, not <scenario> (is this a PREESM .scenario file?)`);
  const s: Scenario = { constraints: new Map(), timings: new Map(), dataTypes: new Map(), parameterValues: new Map(), specialVertexOperators: [] };
  for (const group of childrenNamed(childNamed(root, 'constraints') ?? root, 'constraintGroup')) {
    const ops = childrenNamed(group, 'operator').map((o) => attr(o, 'name') ?? '');
    for (const task of childrenNamed(group, 'task')) {
      const path = attr(task, 'name') ?? '';
      const list = s.constraints.get(path) ?? [];
      for (const op of ops) if (!list.includes(op)) list.push(op);
      s.constraints.set(path, list);
    }
  }
  for (const t of childrenNamed(childNamed(root, 'timings') ?? root, 'timing')) {
    const path = attr(t, 'vertexname') ?? '';
    const byOp = s.timings.get(path) ?? new Map();
    byOp.set(attr(t, 'opname') ?? '', { time: (attr(t, 'time') ?? '').trim(), line: t.line });
    s.timings.set(path, byOp);
  }
  const simu = childNamed(root, 'simuParams');
  if (simu) {
    for (const d of childrenNamed(childNamed(simu, 'dataTypes') ?? simu, 'dataType')) {
      const size = Number(attr(d, 'size'));
      if (Number.isFinite(size)) s.dataTypes.set(attr(d, 'name') ?? '', size);
    }
    s.specialVertexOperators = childrenNamed(childNamed(simu, 'specialVertexOperators') ?? simu, 'specialVertexOperator').map((o) => attr(o, 'path') ?? '');
    const top = Number(childNamed(simu, 'numberOfTopExecutions')?.text.trim());
    if (Number.isInteger(top) && top >= 1) s.numberOfTopExecutions = top;
  }
  for (const p of childrenNamed(childNamed(root, 'parameterValues') ?? root, 'parameter')) {
    s.parameterValues.set(`${attr(p, 'parent') ?? ''}/${attr(p, 'name') ?? ''}`, {
      type: attr(p, 'type') ?? 'INDEPENDENT',
      value: (attr(p, 'value') ?? '').trim(),
      line: p.line,
    });
  }
  return s;
}
