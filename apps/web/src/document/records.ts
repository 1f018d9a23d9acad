import type { Brand, AppEdge, Link } from '@pipeloom/core';
import type { GraphAt } from './graphs.js';

// Typed record ids for the elements the document stores without an id of their own:
// an edge is named by its two port references, a link by its two PEs.
export type EdgeKey = Brand<string, 'EdgeKey'>;
export type LinkKey = Brand<string, 'LinkKey'>;

export const edgeKey = (e: AppEdge) => `${e.from.node}.${e.from.port}->${e.to.node}.${e.to.port}` as EdgeKey;
export const linkKey = (l: Pick<Link, 'a' | 'b'>) => `${l.a}<->${l.b}` as LinkKey;

/** What the inspector shows and a diagnostic points at. A node or edge is named in the graph it is written in (`at`, absent: the app graph). */
export type Selection =
  | { kind: 'node'; id: string; at?: GraphAt }
  | { kind: 'edge'; key: EdgeKey; at?: GraphAt }
  | { kind: 'param'; name: string }
  | { kind: 'host'; id: string }
  | { kind: 'pe'; id: string }
  | { kind: 'link'; key: LinkKey }
  | { kind: 'mapping'; node: string }
  | { kind: 'options' };

export type ViewId = 'dfg' | 'arch' | 'mapping' | 'ig' | 'run';
