import type { WrittenDocument } from '@pipeloom/core';
import { selectionForDiagnostic } from './selection.js';
import { graphKey, isApp } from './graphs.js';
import type { Selection } from './records.js';

// Diagnostics in the designer's words. Core's diagnostics name elements by JSON path
// (`app.nodes[1]`, `mapping`) and give hints for the document's text (`add "p": "<PE id>" to
// mapping`), which is what the CLI prints. The designer says which element of which view, and
// what to do there. Only the words change: the path stays on the diagnostic (it selects the
// element) and is shown as a tooltip.

const VIEW: Record<Selection['kind'], string> = {
  node: 'Application',
  edge: 'Application',
  param: 'Parameters',
  host: 'Architecture',
  pe: 'Architecture',
  link: 'Architecture',
  mapping: 'Mapping',
  options: 'Project',
};

/** The element a selection names, as a user sees it: `node produce (Application)`, `link cpu@h0 ↔ cpu@h1 (Architecture)`. */
export function elementWords(s: Selection): string {
  const inside = (s.kind === 'node' || s.kind === 'edge') && !isApp(s.at) ? ` in ${graphKey(s.at)}` : '';
  const view = ` (${VIEW[s.kind]})`;
  switch (s.kind) {
    case 'node':
      return `node ${s.id}${inside}${view}`;
    case 'edge':
      return `edge ${s.key.replace('->', ' → ')}${inside}${view}`;
    case 'param':
      return `parameter ${s.name}${view}`;
    case 'host':
      return `host ${s.id}${view}`;
    case 'pe':
      return `PE ${s.id}${view}`;
    case 'link':
      return `link ${s.key.replace('<->', ' ↔ ')}${view}`;
    case 'mapping':
      return `node ${s.node} (Mapping)`;
    case 'options':
      return 'the run options (Project)';
  }
}

/** A JSON path inside a message or hint (`app.edges[3]`, `arch.pes[0]`), in words when it names an element. */
const EMBEDDED_PATH = /\b(?:app|arch|defs\.[A-Za-z_][A-Za-z0-9_]*)(?:\.(?:nodes|edges|hosts|pes|links|graph)(?:\[\d+\])?)+/g;

/** Hints written for the document's text, and what to do in the designer instead. */
const HINTS: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^add "([^"]+)": "<PE id>" to mapping$/, (m) => `drag ${m[1]} onto a PE in the Mapping view, or pick its PE on the node or in the inspector`],
  [/^add it to arch\.hosts or use one of: (.*)$/, (m) => `add the host in the Architecture view, or use one of: ${m[1]}`],
  [/^link two PEs listed in arch\.pes or made by a host shorthand$/, () => 'link two PEs of the Architecture view'],
  [/^remove this entry or add the node to app\.nodes$/, () => 'remove this mapping entry, or add the node in the Application view'],
  [/^connect nodes listed in app\.nodes$/, () => 'connect nodes of the Application view'],
  [
    /^give one of its edges initial tokens \("delay": 1 and an "init"\), or remove one of these edges$/,
    () => 'select one of its edges and give it a delay in the inspector (Delay (feedback)), or remove one of these edges',
  ],
  [/^give each (host|PE|node) its own id(.*)$/, (m) => `rename one of them in the inspector (Id)${m[2]}`],
  [/^map it to one of: (.*)$/, (m) => `pick one of these PEs in the Mapping view: ${m[1]}`],
];

export interface WordedDiagnostic {
  /** The element, as the user sees it; '' for the whole document. */
  where: string;
  /** One sentence, naming the element. */
  text: string;
  hint?: string;
}

/** A diagnostic in the designer's words (the Problems list and the inspector show this). */
export function inWords(doc: WrittenDocument, d: { path: string; message: string; hint?: string }): WordedDiagnostic {
  const sel = selectionForDiagnostic(doc, d);
  const where = sel ? elementWords(sel) : '';
  const pathWords = (p: string) => {
    const s = selectionForDiagnostic(doc, { path: p, message: '' });
    return s ? elementWords(s).replace(/ \([A-Za-z]+\)$/, '') : p;
  };
  const plain = (t: string) => t.replace(EMBEDDED_PATH, pathWords).replace(/\b(node|PE|host) "([^"]+)"/g, '$1 $2');
  let hint = d.hint;
  for (const [re, to] of HINTS) {
    const m = hint ? re.exec(hint) : null;
    if (m) {
      hint = to(m);
      break;
    }
  }
  hint = hint && plain(hint);
  const unmapped = d.path === 'mapping' && /^node "([^"]+)" is not mapped$/.exec(d.message);
  if (unmapped) return { where, text: `node ${unmapped[1]} (Application) is not mapped to a PE`, hint };
  const message = plain(d.message);
  // A message that starts by naming its own element reads as one sentence with the view in it.
  const own = where.replace(/ \([A-Za-z]+\)$/, '');
  if (where && message.startsWith(`${own} `)) return { where, text: `${where}${message.slice(own.length)}`, hint };
  return { where, text: where ? `${where}: ${message}` : message, hint };
}

/**
 * A deploy problem in the designer's words: core's coordinator speaks to the CLI (`add its
 * URL to --agents`); in the Run view the agents' URLs are typed into its URLs field.
 */
export function deployInWords(d: { message: string; hint?: string }): { message: string; hint?: string } {
  const hint = d.hint
    ?.replace(/add its URL to --agents/, "add its URL to the Run view's agent URLs field and Connect")
    .replace(/--agents\b/g, "the Run view's agent URLs field");
  return { message: d.message.replace(/--agents\b/g, "the Run view's agent URLs field"), hint };
}
