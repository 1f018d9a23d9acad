import { error, type Diagnostic } from '../diagnostics.js';
import type { TraceMetadata } from './chrome.js';
import type { TraceEvent, TraceKind } from './event.js';

// Reads a Chrome Trace Event JSON file that `toChromeTrace` wrote back into trace events, so a
// saved run opens again in the timeline: `toChromeTrace` then `readChromeTrace` gives the same
// events. Lanes come from the `thread_name` metadata's pe and thread, hosts from
// `process_name`; `X` events are slices, `C` events counter samples (iteration and cycle -1,
// ending where they start), flow arrows are left out (the timeline draws its own). The file is
// outside input: its size, its event count and every string are bounded, every field checked.

export interface TraceFileLimits {
  /** Characters of JSON text (default 512 Mi). */
  maxChars: number;
  /** Slices and counter samples (default 5,000,000). */
  maxEvents: number;
  /** Characters of a name, host, PE, thread, node, buffer or task id (default 1,000). */
  maxName: number;
}

export const TRACE_FILE_LIMITS: TraceFileLimits = { maxChars: 512 * 2 ** 20, maxEvents: 5_000_000, maxName: 1000 };

export type ReadTraceResult = { ok: true; events: TraceEvent[]; metadata?: TraceMetadata } | { ok: false; diagnostics: Diagnostic[] };

const KINDS: ReadonlySet<string> = new Set<TraceKind>(['fire', 'transfer', 'wait', 'barrier']);
const HINT = 'open a trace the Run view exported or `pipeloom run --trace FILE` wrote (Chrome Trace Event JSON)';
/** Diagnostics past this many are not listed: one bad field usually repeats in every event. */
const MAX_DIAGNOSTICS = 20;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The events (and metadata) of a Chrome trace file's text, or what is wrong with it. */
export function readChromeTrace(text: string, limits: Partial<TraceFileLimits> = {}): ReadTraceResult {
  const lim = { ...TRACE_FILE_LIMITS, ...limits };
  if (text.length > lim.maxChars)
    return fail(
      '',
      `the file holds ${text.length.toLocaleString('en')} characters, more than the ${lim.maxChars.toLocaleString('en')} a trace may have`,
      'export a shorter run (fewer iterations)',
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail('', `is not JSON: ${(e as Error).message.slice(0, 200)}`, HINT);
  }
  const list = Array.isArray(doc) ? doc : isObj(doc) ? doc.traceEvents : undefined;
  if (!Array.isArray(list)) return fail('traceEvents', 'is missing: this is not a Chrome trace', HINT);
  const diagnostics: Diagnostic[] = [];
  const bad = (path: string, message: string, hint?: string) => {
    if (diagnostics.length < MAX_DIAGNOSTICS) diagnostics.push(error(path, message, hint));
  };

  const str = (o: Obj, key: string, path: string): string | undefined => {
    const v = o[key];
    if (typeof v !== 'string') return void bad(`${path}.${key}`, `must be text, not ${describe(v)}`, HINT);
    if (v.length > lim.maxName) return void bad(`${path}.${key}`, `is ${v.length} characters long, more than ${lim.maxName}`, 'shorten the name');
    return v;
  };
  const num = (o: Obj, key: string, path: string, integer = false): number | undefined => {
    const v = o[key];
    if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)))
      return void bad(`${path}.${key}`, `must be ${integer ? 'an integer' : 'a finite number'}, not ${describe(v)}`, HINT);
    return v;
  };
  const optStr = (o: Obj, key: string, path: string) => (o[key] === undefined ? undefined : str(o, key, path));

  // Metadata first: it names the processes and threads the events sit on, wherever it is listed.
  const hosts = new Map<number, string>();
  const lanes = new Map<string, { pe: string; thread: string }>();
  for (let k = 0; k < list.length; k++) {
    const m = list[k];
    if (!isObj(m) || m.ph !== 'M') continue;
    const path = `traceEvents[${k}]`;
    const args = isObj(m.args) ? m.args : {};
    if (m.name === 'process_name') {
      const name = str(args, 'name', `${path}.args`);
      const pid = num(m, 'pid', path, true);
      if (name !== undefined && pid !== undefined) hosts.set(pid, name.startsWith('host ') ? name.slice(5) : name);
    } else if (m.name === 'thread_name') {
      const pid = num(m, 'pid', path, true);
      const tid = num(m, 'tid', path, true);
      // A trace from another tool names threads without pe and thread: the label is the lane.
      const label = args.pe === undefined ? str(args, 'name', `${path}.args`) : undefined;
      const pe = label ?? str(args, 'pe', `${path}.args`);
      const thread = label === undefined ? str(args, 'thread', `${path}.args`) : 'main';
      if (pid !== undefined && tid !== undefined && pe !== undefined && thread !== undefined) lanes.set(`${pid}/${tid}`, { pe, thread });
    }
  }

  const events: TraceEvent[] = [];
  for (let k = 0; k < list.length; k++) {
    const x = list[k];
    const path = `traceEvents[${k}]`;
    if (!isObj(x)) {
      bad(path, `must be an object, not ${describe(x)}`, HINT);
      continue;
    }
    if (x.ph !== 'X' && x.ph !== 'C') continue;
    if (events.length >= lim.maxEvents)
      return fail('traceEvents', `holds more than ${lim.maxEvents.toLocaleString('en')} events`, 'export a shorter run (fewer iterations)');
    const pid = num(x, 'pid', path, true);
    const tid = num(x, 'tid', path, true);
    const name = str(x, 'name', path);
    const ts = num(x, 'ts', path);
    if (pid === undefined || tid === undefined || name === undefined || ts === undefined) continue;
    const host = hosts.get(pid);
    const lane = lanes.get(`${pid}/${tid}`);
    if (host === undefined || lane === undefined) {
      bad(path, `sits on process ${pid} thread ${tid}, which no process_name / thread_name metadata names`, HINT);
      continue;
    }
    const args = isObj(x.args) ? x.args : {};
    const at = { host, pe: lane.pe, thread: lane.thread };
    if (x.ph === 'C') {
      const value = num(args, 'value', `${path}.args`);
      if (value !== undefined) events.push({ ...at, kind: 'counter', name, iteration: -1, cycle: -1, start: ts, end: ts, value });
      continue;
    }
    const kind = x.cat;
    if (typeof kind !== 'string' || !KINDS.has(kind)) {
      bad(`${path}.cat`, `must be one of fire, transfer, wait, barrier, not ${describe(kind)}`, HINT);
      continue;
    }
    const dur = num(x, 'dur', path);
    const iteration = num(args, 'iteration', `${path}.args`, true);
    const cycle = num(args, 'cycle', `${path}.args`, true);
    const end = args.end === undefined ? (dur === undefined ? undefined : ts + dur) : num(args, 'end', `${path}.args`);
    if (dur === undefined || iteration === undefined || cycle === undefined || end === undefined) continue;
    const e: TraceEvent = { ...at, kind: kind as TraceKind, name, iteration, cycle, start: ts, end };
    const a = `${path}.args`;
    const node = optStr(args, 'node', a);
    const buffer = optStr(args, 'buffer', a);
    const from = optStr(args, 'from', a);
    if (node !== undefined) e.node = node;
    if (buffer !== undefined) e.buffer = buffer;
    if (from !== undefined) e.from = from;
    if (args.bytes !== undefined) {
      const bytes = num(args, 'bytes', a);
      if (bytes !== undefined) e.bytes = bytes;
    }
    if (args.task !== undefined) {
      const id = str(args, 'task', a);
      const attempt = num(args, 'attempt', a, true);
      const share = args.share === undefined ? undefined : num(args, 'share', a, true);
      if (id !== undefined && attempt !== undefined) e.task = share === undefined ? { id, attempt } : { id, share, attempt };
    }
    events.push(e);
  }
  if (diagnostics.length) return { ok: false, diagnostics };
  const metadata = isObj(doc) && isObj(doc.metadata) ? readMetadata(doc.metadata) : undefined;
  return metadata ? { ok: true, events, metadata } : { ok: true, events };
}

/** The trace's metadata when it has the shape `traceMetadata` writes; else none (it only labels the trace). */
function readMetadata(m: Obj): TraceMetadata | undefined {
  const text = (v: unknown) => typeof v === 'string' && v.length <= 1000;
  const d = m.document;
  if (!(m.source === 'predicted' || m.source === 'measured') || !isObj(d) || !text(d.name) || !text(d.hash)) return undefined;
  if (!(m.strategy === 'overlap' || m.strategy === 'no-overlap') || !(m.sync === 'self-timed' || m.sync === 'barrier') || !text(m.calibration))
    return undefined;
  const out: TraceMetadata = {
    source: m.source,
    document: { name: d.name as string, hash: d.hash as string },
    strategy: m.strategy,
    sync: m.sync,
    calibration: m.calibration as string,
  };
  if (isObj(m.agents)) {
    const agents: Record<string, string> = Object.create(null);
    let n = 0;
    for (const [host, v] of Object.entries(m.agents)) if (text(v) && n++ < 10_000) agents[host] = v as string;
    out.agents = agents;
  }
  return out;
}

function fail(path: string, message: string, hint?: string): ReadTraceResult {
  return { ok: false, diagnostics: [error(path || 'trace', message, hint)] };
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number') return String(v);
  return Array.isArray(v) ? 'a list' : typeof v;
}
