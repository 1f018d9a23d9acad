import { attr, childrenNamed, localName, type XmlElement } from '../xml.js';

// PREESM's PiSDF graphs (.pi, GraphML): parameters, actors and special actors with their ports,
// interfaces of a sub-graph, delays, FIFOs and parameter dependencies, as written. Meaning
// (rates, types, hierarchy) is given by import.ts.

export interface PiPort {
  name: string;
  /** `input`, `output`, `cfg_input` or `cfg_output`. */
  kind: string;
  /** The rate expression of a data port (tokens per firing). */
  expr: string;
  line: number;
}

export interface PiVertex {
  id: string;
  /** `actor`, `broadcast`, `fork`, `join`, `roundbuffer`, `init`, `end`, `param`, `malleable_param`, `cfg_in_iface`, `cfg_out_iface`, `src`, `snk`, `delay`. */
  kind: string;
  /** `graph_desc`: a .h file, or the .pi file of a hierarchical actor. */
  refinement?: string;
  ports: PiPort[];
  /** A param's or a delay's expression. */
  expr?: string;
  /** A configuration input interface's default value. */
  defaultValue?: string;
  /** A delay's persistence level, setter and getter. */
  level?: string;
  setter?: string;
  getter?: string;
  line: number;
}

export interface PiFifo {
  source: string;
  sourcePort: string;
  target: string;
  targetPort: string;
  type: string;
  /** The id of the delay node (current files), '' for a delay written on the edge itself (older files), undefined without delay. */
  delay?: string;
  /** An older file's delay expression, on the edge. */
  delayExpr?: string;
  line: number;
}

export interface PiDependency {
  source: string;
  sourcePort?: string;
  target: string;
  targetPort?: string;
  line: number;
}

export interface PiGraph {
  name: string;
  vertices: PiVertex[];
  fifos: PiFifo[];
  dependencies: PiDependency[];
}

/** Reads the graph element of a .pi document; throws an Error naming what is missing. */
export function readPi(root: XmlElement): PiGraph {
  if (localName(root.name) !== 'graphml') throw new Error(`the root element is <${root.name}>, not <graphml> (is this a PREESM .pi file?)`);
  const graphs = childrenNamed(root, 'graph');
  if (graphs.length !== 1) throw new Error(`a .pi file holds one <graph>, this one ${graphs.length}`);
  const g = graphs[0];
  const name =
    childrenNamed(g, 'data')
      .find((d) => attr(d, 'key') === 'name')
      ?.text.trim() ?? '';
  const vertices: PiVertex[] = [];
  const fifos: PiFifo[] = [];
  const dependencies: PiDependency[] = [];
  for (const e of g.children) {
    const tag = localName(e.name);
    if (tag === 'node') {
      const refinement = childrenNamed(e, 'data')
        .find((d) => attr(d, 'key') === 'graph_desc')
        ?.text.trim();
      vertices.push({
        id: attr(e, 'id') ?? '',
        kind: attr(e, 'kind') ?? '',
        refinement: refinement || undefined,
        ports: childrenNamed(e, 'port').map((p) => ({
          name: attr(p, 'name') ?? '',
          kind: attr(p, 'kind') ?? '',
          expr: (attr(p, 'expr') ?? '').trim(),
          line: p.line,
        })),
        expr: attr(e, 'expr')?.trim(),
        defaultValue: attr(e, 'defaultValue')?.trim(),
        level: attr(e, 'level'),
        setter: attr(e, 'setter'),
        getter: attr(e, 'getter'),
        line: e.line,
      });
    } else if (tag === 'edge') {
      const kind = attr(e, 'kind');
      if (kind === 'fifo') {
        const delay = childrenNamed(e, 'data').find((d) => attr(d, 'key') === 'delay');
        fifos.push({
          source: attr(e, 'source') ?? '',
          sourcePort: attr(e, 'sourceport') ?? '',
          target: attr(e, 'target') ?? '',
          targetPort: attr(e, 'targetport') ?? '',
          type: (attr(e, 'type') ?? '').trim() || 'void',
          delay: delay ? delay.text.trim() : undefined,
          delayExpr: attr(e, 'expr')?.trim(),
          line: e.line,
        });
      } else if (kind === 'dependency') {
        dependencies.push({
          source: attr(e, 'source') ?? '',
          sourcePort: attr(e, 'sourceport') || undefined,
          target: attr(e, 'target') ?? '',
          targetPort: attr(e, 'targetport') || undefined,
          line: e.line,
        });
      } else throw new Error(`line ${e.line}: an edge of kind "${kind ?? ''}" (a .pi edge is a fifo or a dependency)`);
    }
  }
  return { name, vertices, fifos, dependencies };
}
