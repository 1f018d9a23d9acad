import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChromeTrace } from '../trace/chrome.js';
import { laneLabel } from '../trace/lanes.js';

// For tests only: reads a Paje trace with PajeNG's pj_dump (Debian's pajeng, installed by
// scripts/setup.mjs), the reader StarPU users check their traces with, and tallies what it
// read, so tests compare it with the Chrome export of the same events.

export interface PajeState {
  container: string;
  start: number;
  end: number;
  imbrication: number;
  value: string;
  kind: string;
  iteration: number;
  cycle: number;
  bytes: number;
  node: string;
  buffer: string;
}

export interface PajeDump {
  containers: { parent: string; type: string; name: string }[];
  /** Variables' values (counter samples): each holds `value` over [start, end). */
  variables: { container: string; type: string; start: number; end: number; value: number }[];
  states: PajeState[];
  links: { start: number; end: number; from: string; to: string; key: string }[];
}

/** Runs pj_dump on a Paje trace's text; throws with pj_dump's message when it cannot read it. */
export function pjDump(text: string): PajeDump {
  const dir = mkdtempSync(join(tmpdir(), 'pipeloom-paje-'));
  try {
    const file = join(dir, 'trace.paje');
    writeFileSync(file, text);
    const r = spawnSync('pj_dump', ['-u', '-l', '9', file], { encoding: 'utf8', maxBuffer: 1 << 30 });
    if (r.error) throw new Error(`pj_dump did not run (${r.error.message}): apt-get install pajeng`);
    if (r.status !== 0 || r.stderr.trim()) throw new Error(`pj_dump exit ${r.status}: ${r.stderr.slice(0, 2000)}`);
    return parseDump(r.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function parseDump(out: string): PajeDump {
  const d: PajeDump = { containers: [], variables: [], states: [], links: [] };
  for (const line of out.split('\n')) {
    if (!line) continue;
    // ", "-separated; a value may hold ", " itself (a staged transfer's route), so it is what
    // lies between the fixed fields before it and the six extra fields after it.
    const f = line.split(', ');
    if (f[0] === 'Container') d.containers.push({ parent: f[1], type: f[2], name: f.slice(6).join(', ') });
    else if (f[0] === 'State') {
      const x = f.slice(-6);
      d.states.push({
        container: f[1],
        start: +f[3],
        end: +f[4],
        imbrication: +f[6],
        value: f.slice(7, -6).join(', '),
        kind: x[0],
        iteration: +x[1],
        cycle: +x[2],
        bytes: +x[3],
        node: x[4],
        buffer: x[5],
      });
    } else if (f[0] === 'Variable') d.variables.push({ container: f[1], type: f[2], start: +f[3], end: +f[4], value: +f[6] });
    else if (f[0] === 'Link') d.links.push({ start: +f[3], end: +f[4], from: f[7], to: f[8], key: f[9] });
    else throw new Error(`pj_dump printed an unexpected line: ${line}`);
  }
  return d;
}

/** The extra fields of each host container's creation (the trace's metadata): host name -> field -> value. */
export function pajeHostFields(text: string): Map<string, Record<string, string>> {
  const names = ['source', 'document', 'hash', 'strategy', 'sync', 'calibration', 'agent'];
  const out = new Map<string, Record<string, string>>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('10 ')) continue;
    // Paje fields: words, or quoted strings (no escapes).
    const f = (line.match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"(.*)"$/, '$1'));
    out.set(f[5], Object.fromEntries(names.map((n, k) => [n, f[6 + k]])));
  }
  return out;
}

/**
 * State counts per `<lane label> <kind>`, the lane labelled as the Chrome export's thread names
 * are (trace/lanes.ts laneLabel; a container is named `<pe> <thread>`, overflow rows `(2)`...).
 */
export function pajeStateCounts(d: PajeDump): Map<string, number> {
  const n = new Map<string, number>();
  for (const s of d.states) {
    const name = s.container.replace(/ \(\d+\)$/, '');
    const cut = name.lastIndexOf(' ');
    const k = `${laneLabel(name.slice(0, cut), name.slice(cut + 1))} ${s.kind}`;
    n.set(k, (n.get(k) ?? 0) + 1);
  }
  return n;
}

/** A Chrome trace's slice counts per `<thread name> <category>` (the slice's kind). */
export function chromeSliceCounts(t: ChromeTrace): Map<string, number> {
  const names = new Map<string, string>();
  for (const e of t.traceEvents) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, String(e.args?.name));
  const n = new Map<string, number>();
  for (const e of t.traceEvents) {
    if (e.ph !== 'X') continue;
    const k = `${names.get(`${e.pid}/${e.tid}`)} ${e.cat}`;
    n.set(k, (n.get(k) ?? 0) + 1);
  }
  return n;
}
