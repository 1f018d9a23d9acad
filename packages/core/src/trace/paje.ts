import type { ImplementationGraph } from '../compile/types.js';
import { nanoseconds, secondsText } from '../util/units.js';
import type { TraceMetadata } from './chrome.js';
import type { TraceEvent, TraceKind } from './event.js';
import { dataFlows, exportLanes } from './flows.js';
import { laneName } from './lanes.js';

// Paje trace (the format of StarPU's traces, read by ViTE and PajeNG's pj_dump): the Chrome
// export's content in Paje's terms. Containers host > PE > lane; on each lane one state type
// whose values are the events' names, coloured by kind (fire, transfer, wait, barrier) as the
// web timeline colours them, with the kind, iteration, cycle, bytes (0: none), node and buffer
// (-: none) as extra fields; a link per data flow (trace/flows.ts). Times in seconds, to the nanosecond.
// A task-bag fire's task is in its state's value, its label `node[share]@iteration (attempt)`.
// Counter samples (the task bag's depth) are Paje variables: a variable type per counter name
// on lanes, set on their lane (PajeSetVariable), which ViTE draws as a curve.
//
// Paje states of one container form a stack (push/pop), so they must nest. Events that cross
// (one starts inside another and ends after it) go on an overflow lane beside theirs, named
// `<lane> (2)`, so nothing is cut short. Times are compared after rounding to the nanosecond,
// so float noise (an end a femtosecond after the next start) does not count as crossing.

/** Colours of the kinds (apps/web timeline/tracks.ts KIND_COLORS) as Paje's "r g b". */
const KIND_COLOR: Record<TraceKind, string> = {
  fire: '0.231 0.510 0.965',
  transfer: '0.961 0.620 0.043',
  wait: '0.796 0.835 0.882',
  barrier: '0.937 0.267 0.267',
  counter: '0.051 0.580 0.533',
};

const HEADER = `%EventDef PajeDefineContainerType 0
%	Alias string
%	Type string
%	Name string
%EndEventDef
%EventDef PajeDefineStateType 1
%	Alias string
%	Type string
%	Name string
%EndEventDef
%EventDef PajeDefineLinkType 2
%	Alias string
%	Type string
%	StartContainerType string
%	EndContainerType string
%	Name string
%EndEventDef
%EventDef PajeDefineEntityValue 3
%	Alias string
%	Type string
%	Name string
%	Color color
%EndEventDef
%EventDef PajeCreateContainer 4
%	Time date
%	Alias string
%	Type string
%	Container string
%	Name string
%EndEventDef
%EventDef PajeCreateContainer 10
%	Time date
%	Alias string
%	Type string
%	Container string
%	Name string
%	Source string
%	Document string
%	Hash string
%	Strategy string
%	Sync string
%	Calibration string
%	Agent string
%EndEventDef
%EventDef PajeDestroyContainer 5
%	Time date
%	Type string
%	Name string
%EndEventDef
%EventDef PajePushState 6
%	Time date
%	Container string
%	Type string
%	Value string
%	Kind string
%	Iteration int
%	Cycle int
%	Bytes double
%	Node string
%	Buffer string
%EndEventDef
%EventDef PajePopState 7
%	Time date
%	Container string
%	Type string
%EndEventDef
%EventDef PajeStartLink 8
%	Time date
%	Container string
%	Type string
%	StartContainer string
%	Value string
%	Key string
%EndEventDef
%EventDef PajeEndLink 9
%	Time date
%	Container string
%	Type string
%	EndContainer string
%	Value string
%	Key string
%EndEventDef
%EventDef PajeDefineVariableType 11
%	Alias string
%	Type string
%	Name string
%	Color color
%EndEventDef
%EventDef PajeSetVariable 12
%	Time date
%	Container string
%	Type string
%	Value double
%EndEventDef
0 HOST 0 "Host"
0 PE HOST "PE"
0 LANE PE "Lane"
1 S LANE "Activity"
2 D 0 LANE LANE "data"
`;

/**
 * A Paje string. Paje has no escapes, so a double quote becomes a single one and a line
 * break a space; everything else is kept, in quotes.
 */
const str = (s: string) => `"${s.replace(/"/g, "'").replace(/[\r\n]+/g, ' ')}"`;

/** A lane row's container name, unique across the trace (pj_dump prints names, not paths): the lane's name, `(2)`... on overflow rows. */
const rowName = (pe: string, thread: string, row: number) => (row ? `${laneName(pe, thread)} (${row + 1})` : laneName(pe, thread));

/**
 * Converts trace events to a Paje trace (text). Lanes and flows are the Chrome export's
 * (`toChromeTrace` with the same arguments): each `X` slice is one state, each flow one link.
 * The metadata goes on each host container as extra fields (Source, Document, Hash, Strategy,
 * Sync, Calibration, Agent: the host's agent version, `-` for a prediction); not as a `#`
 * comment, which ViTE warns about.
 */
export function toPajeTrace(events: readonly TraceEvent[], ig?: ImplementationGraph, metadata?: TraceMetadata): string {
  const n = events.length;
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  let t0 = 0;
  let t1 = 0;
  for (let i = 0; i < n; i++) {
    start[i] = nanoseconds(events[i].start);
    // A negative duration (a measured clock stepping back) is drawn as zero, as Chrome's is.
    end[i] = Math.max(start[i], nanoseconds(events[i].end));
    if (start[i] < t0) t0 = start[i];
    if (end[i] > t1) t1 = end[i];
  }

  // Entity values: one per kind and name, so a node and a buffer of one name stay apart.
  const defs: string[] = [];
  const values = new Map<string, string>();
  const value = new Array<string>(n);
  const variables = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const e = events[i];
    if (e.kind === 'counter') {
      let alias = variables.get(e.name);
      if (alias === undefined) {
        variables.set(e.name, (alias = `V${variables.size + 1}`));
        defs.push(`11 ${alias} LANE ${str(e.name)} "${KIND_COLOR.counter}"`);
      }
      value[i] = alias;
      continue;
    }
    const key = `${e.kind}\u0000${e.name}`;
    let alias = values.get(key);
    if (alias === undefined) {
      values.set(key, (alias = `v${values.size + 1}`));
      defs.push(`3 ${alias} S ${str(e.name)} "${KIND_COLOR[e.kind]}"`);
    }
    value[i] = alias;
  }

  const byLane = new Map<string, number[]>();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    // A sample is no state: it sets its lane's variable (below), so it never nests or overflows.
    if (events[i].kind === 'counter') {
      samples.push(i);
      continue;
    }
    const key = `${events[i].pe}\u0000${events[i].thread}`;
    const list = byLane.get(key);
    if (list) list.push(i);
    else byLane.set(key, [i]);
  }
  const hosts = new Map<string, string>();
  const pes = new Map<string, string>();
  const containers: string[] = [];
  const created: { alias: string; type: string }[] = [];
  const create = (alias: string, type: string, parent: string, name: string, fields?: string) => {
    containers.push(
      fields ? `10 ${secondsText(t0)} ${alias} ${type} ${parent} ${str(name)} ${fields}` : `4 ${secondsText(t0)} ${alias} ${type} ${parent} ${str(name)}`,
    );
    created.push({ alias, type });
  };

  // Timed operations as columns (a trace may hold millions): time, what (push, pop, link
  // start, link end) and of what (event, row alias, flow). Written once sorted by time.
  const PUSH = 0;
  const POP = 1;
  const LINK_START = 2;
  const LINK_END = 3;
  const SET = 4;
  const opT: number[] = [];
  const opKind: number[] = [];
  const opOf: number[] = [];
  const op = (t: number, kind: number, of: number) => {
    opT.push(t);
    opKind.push(kind);
    opOf.push(of);
  };
  const rowAlias: string[] = [];
  const rowOf = new Int32Array(n);
  const laneRow = new Map<string, number>();

  for (const l of exportLanes(events, ig)) {
    let host = hosts.get(l.host);
    if (host === undefined) {
      hosts.set(l.host, (host = `h${hosts.size + 1}`));
      create(host, 'HOST', '0', `host ${l.host}`, metadata && hostFields(metadata, l.host));
    }
    let pe = pes.get(l.pe);
    if (pe === undefined) {
      pes.set(l.pe, (pe = `p${pes.size + 1}`));
      create(pe, 'PE', host, l.pe);
    }
    const peAlias = pe;
    // Each event's row of its lane: the first row whose open states it nests in.
    const rows: { id: number; open: number[] }[] = [];
    const row = (r: number) => {
      if (!rows[r]) {
        const id = rowAlias.length;
        rowAlias.push(`l${id + 1}`);
        create(rowAlias[id], 'LANE', peAlias, rowName(l.pe, l.thread, r));
        rows[r] = { id, open: [] };
      }
      return rows[r];
    };
    const pop = (r: { id: number; open: number[] }, until: number) => {
      // The top of a row's stack ends first (states nest), so pops come out in time order.
      while (r.open.length && r.open[r.open.length - 1] <= until) op(r.open.pop()!, POP, r.id);
    };
    laneRow.set(`${l.pe}\u0000${l.thread}`, row(0).id);
    const mine = (byLane.get(`${l.pe}\u0000${l.thread}`) ?? []).sort((a, b) => start[a] - start[b] || end[b] - end[a] || a - b);
    for (const i of mine) {
      let target = row(0);
      for (let r = 1; ; r++) {
        pop(target, start[i]);
        const top = target.open[target.open.length - 1];
        if (top === undefined || top >= end[i]) break;
        target = row(r);
      }
      rowOf[i] = target.id;
      target.open.push(end[i]);
      op(start[i], PUSH, i);
    }
    for (const r of rows) pop(r, Infinity);
  }
  for (const i of samples) {
    rowOf[i] = laneRow.get(`${events[i].pe}\u0000${events[i].thread}`)!;
    op(start[i], SET, i);
  }
  const flows = dataFlows(events, ig);
  flows.forEach(([i, j], f) => {
    op(start[i], LINK_START, f);
    op(start[j], LINK_END, f);
  });

  // Paje reads events in time order. Ties keep the order listed, so a row's pushes and pops,
  // listed in a valid order with times that never decrease, keep that order.
  const order = new Uint32Array(opT.length);
  for (let k = 0; k < order.length; k++) order[k] = k;
  order.sort((a, b) => opT[a] - opT[b] || a - b);

  const names = new Map<string, string>();
  const field = (s: string | undefined) => {
    // An extra field: `-` where the event has none (PajeNG misreads an empty `""`).
    if (!s) return '-';
    let q = names.get(s);
    if (q === undefined) names.set(s, (q = str(s)));
    return q;
  };
  const out: string[] = [HEADER.trimEnd()];
  for (const d of defs) out.push(d);
  for (const c of containers) out.push(c);
  for (const k of order) {
    const t = secondsText(opT[k]);
    const of = opOf[k];
    switch (opKind[k]) {
      case PUSH: {
        const e = events[of];
        out.push(`6 ${t} ${rowAlias[rowOf[of]]} S ${value[of]} ${e.kind} ${e.iteration} ${e.cycle} ${e.bytes ?? 0} ${field(e.node)} ${field(e.buffer)}`);
        break;
      }
      case POP:
        out.push(`7 ${t} ${rowAlias[of]} S`);
        break;
      case SET:
        out.push(`12 ${t} ${rowAlias[rowOf[of]]} ${value[of]} ${events[of].value ?? 0}`);
        break;
      case LINK_START:
        out.push(`8 ${t} 0 D ${rowAlias[rowOf[flows[of][0]]]} "data" f${of + 1}`);
        break;
      default:
        out.push(`9 ${t} 0 D ${rowAlias[rowOf[flows[of][1]]]} "data" f${of + 1}`);
    }
  }
  // Innermost first: a container is destroyed after everything in it.
  for (let c = created.length - 1; c >= 0; c--) out.push(`5 ${secondsText(t1)} ${created[c].type} ${created[c].alias}`);
  return `${out.join('\n')}\n`;
}

/** A host container's extra fields: the trace's metadata, with this host's agent version. */
function hostFields(m: TraceMetadata, host: string): string {
  const agent = m.agents ? (Object.hasOwn(m.agents, host) ? m.agents[host] : 'unknown') : '-';
  return [m.source, m.document.name, m.document.hash, m.strategy, m.sync, m.calibration, agent].map(str).join(' ');
}
