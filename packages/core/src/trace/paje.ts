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

/** An extra field: `-` where the event has none (PajeNG misreads an empty `""`). */
const field = (s: string | undefined) => (s ? str(s) : '-');

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
  const defs: string[] = [];
  // Timed lines; a pop's line is made when written (`pop`: the container alias).
  const ops: { t: number; line?: string; pop?: string }[] = [];
  const start = events.map((e) => nanoseconds(e.start));
  // A negative duration (a measured clock stepping back) is drawn as zero, as Chrome's is.
  const end = events.map((e, i) => Math.max(start[i], nanoseconds(e.end)));
  let t0 = 0;
  let t1 = 0;
  for (let i = 0; i < events.length; i++) {
    if (start[i] < t0) t0 = start[i];
    if (end[i] > t1) t1 = end[i];
  }

  // Entity values: one per kind and name, so a node and a buffer of one name stay apart.
  const values = new Map<string, string>();
  const valueOf = (e: TraceEvent) => {
    const key = `${e.kind}\u0000${e.name}`;
    let alias = values.get(key);
    if (alias === undefined) {
      values.set(key, (alias = `v${values.size + 1}`));
      defs.push(`3 ${alias} S ${str(e.name)} "${KIND_COLOR[e.kind]}"`);
    }
    return alias;
  };

  // Each event's row of its lane: the first row whose open states it nests in.
  const byLane = new Map<string, number[]>();
  events.forEach((e, i) => {
    const key = `${e.pe}\u0000${e.thread}`;
    const list = byLane.get(key);
    if (list) list.push(i);
    else byLane.set(key, [i]);
  });
  const containerOf: string[] = new Array(events.length);
  const lanes = exportLanes(events, ig);
  const hosts = new Map<string, string>();
  const pes = new Map<string, string>();
  const containers: string[] = [];
  const created: { alias: string; type: string }[] = [];
  const create = (alias: string, type: string, parent: string, name: string, fields?: string) => {
    containers.push(fields ? `10 ${secondsText(t0)} ${alias} ${type} ${parent} ${str(name)} ${fields}` : `4 ${secondsText(t0)} ${alias} ${type} ${parent} ${str(name)}`);
    created.push({ alias, type });
  };
  let laneCount = 0;
  for (const l of lanes) {
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
    const rows: { alias: string; open: number[] }[] = [];
    const row = (r: number) => {
      if (!rows[r]) {
        const alias = `l${++laneCount}`;
        create(alias, 'LANE', pe!, rowName(l.pe, l.thread, r));
        rows[r] = { alias, open: [] };
      }
      return rows[r];
    };
    row(0);
    const mine = (byLane.get(`${l.pe}\u0000${l.thread}`) ?? []).sort((a, b) => start[a] - start[b] || end[b] - end[a] || a - b);
    const pop = (r: { alias: string; open: number[] }, until: number) => {
      // The top of a row's stack ends first (states nest), so pops come out in time order.
      while (r.open.length && r.open[r.open.length - 1] <= until) ops.push({ t: r.open.pop()!, pop: r.alias });
    };
    for (const i of mine) {
      let r = 0;
      for (;; r++) {
        const target = row(r);
        pop(target, start[i]);
        const top = target.open[target.open.length - 1];
        if (top === undefined || top >= end[i]) break;
      }
      const target = rows[r];
      const e = events[i];
      containerOf[i] = target.alias;
      target.open.push(end[i]);
      ops.push({ t: start[i], line: `6 ${secondsText(start[i])} ${target.alias} S ${valueOf(e)} ${e.kind} ${e.iteration} ${e.cycle} ${e.bytes ?? 0} ${field(e.node)} ${field(e.buffer)}` });
    }
    for (const r of rows) pop(r, Infinity);
  }

  let key = 0;
  for (const [i, j] of dataFlows(events, ig)) {
    const k = `f${++key}`;
    ops.push({ t: start[i], line: `8 ${secondsText(start[i])} 0 D ${containerOf[i]} "data" ${k}` });
    ops.push({ t: start[j], line: `9 ${secondsText(start[j])} 0 D ${containerOf[j]} "data" ${k}` });
  }

  // Paje reads events in time order. The sort is stable, so a row's pushes and pops, listed
  // in a valid order with times that never decrease, keep that order.
  ops.sort((a, b) => a.t - b.t);
  const out: string[] = [];
  out.push(HEADER.trimEnd(), ...defs);
  out.push(...containers);
  for (const o of ops) out.push(o.pop ? `7 ${secondsText(o.t)} ${o.pop} S` : o.line!);
  // Innermost first: a container is destroyed after everything in it.
  for (let c = created.length - 1; c >= 0; c--) out.push(`5 ${secondsText(t1)} ${created[c].type} ${created[c].alias}`);
  return `${out.join('\n')}\n`;
}

/** A host container's extra fields: the trace's metadata, with this host's agent version. */
function hostFields(m: TraceMetadata, host: string): string {
  const agent = m.agents ? (Object.hasOwn(m.agents, host) ? m.agents[host] : 'unknown') : '-';
  return [m.source, m.document.name, m.document.hash, m.strategy, m.sync, m.calibration, agent].map(str).join(' ');
}
