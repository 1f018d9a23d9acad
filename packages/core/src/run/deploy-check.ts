import { MAX_DEPTH } from '../compile/depth.js';
import type { ToAgent } from './protocol.js';

// The whole shape of a `deploy` message, checked before an agent reads any of it: every field
// the agent's runtime reads, with its type, and every count and size bounded. A deploy comes
// from a token holder but is still data: a `depth: 1e6` in 400 bytes once froze an agent for
// minutes. Pure and total: any input gives ok or a reason naming the element by path.

export type Deploy = Extract<ToAgent, { type: 'deploy' }>;

/** Bounds on a deploy's shape (the agent adds its PEs' memory and WebGPU limits: apps/agent deploy-limits.ts). */
export interface DeployShapeLimits {
  /** Characters in an id: run, host, PE, buffer, node, kernel, port, phase name, label, link kind. */
  maxIdLength: number;
  /** Characters in a host's URL. */
  maxUrlLength: number;
  /** Characters in one string param of a firing (custom.wgsl carries its source in one). */
  maxParamLength: number;
  maxHosts: number;
  /** Entries of `pes`. */
  maxPes: number;
  /** Programs in one deploy (one per PE of the agent). */
  maxPrograms: number;
  /** Phases of one program. */
  maxPhases: number;
  /** Actions of all programs together. */
  maxActions: number;
  /** Allocations of all programs together. */
  maxAllocations: number;
  /** Entries of `buffers`. */
  maxBuffers: number;
  /** Params, inputs or outputs of one firing. */
  maxPorts: number;
  /** Slots of one allocation (the compiler makes 1 or 2, more where an early input waits for a late one: 18 on a 10,000-node graph). */
  maxDepth: number;
  /** Slots of all allocations together (each is one SharedArrayBuffer or GPUBuffer). */
  maxSlots: number;
  /** Initial fills (delays' initial tokens, `PeProgram.initial`) of all programs together. */
  maxInitial: number;
  maxIterations: number;
  maxCycles: number;
}

export const DEPLOY_SHAPE_LIMITS: DeployShapeLimits = {
  maxIdLength: 256,
  maxUrlLength: 2048,
  maxParamLength: 1 << 20,
  maxHosts: 256,
  maxPes: 4096,
  maxPrograms: 1024,
  maxPhases: 64,
  maxActions: 1_000_000,
  maxAllocations: 1_000_000,
  maxBuffers: 1_000_000,
  maxPorts: 256,
  maxDepth: MAX_DEPTH,
  maxSlots: 131_072,
  maxInitial: 131_072,
  maxIterations: 2 ** 31 - 1,
  maxCycles: 2 ** 31 - 1,
};

/** Characters of a sender's string a reason may quote. */
const QUOTE = 64;

/** A sender's string as a reason quotes it: JSON-quoted, cut to 64 characters. */
export function quote(s: string): string {
  return JSON.stringify(s.length > QUOTE ? `${s.slice(0, QUOTE)}...` : s);
}

/** What a wrong value was, in a few words: never the sender's bytes beyond a short quote. */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  switch (typeof v) {
    case 'string':
      return `text ${quote(v)}`;
    case 'number':
      return String(v);
    case 'object':
      return 'an object';
    default:
      return typeof v;
  }
}

class Refusal {
  constructor(readonly reason: string) {}
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key);
const ELEMENTS = new Set(['f32', 'u32', 'i32', 'u8']);
const KINDS = new Set(['cpu', 'gpu']);
/** The values an integer element holds: a constant fill of such a buffer must be one of them. */
const INT_RANGE: Record<string, [number, number]> = { u32: [0, 2 ** 32 - 1], i32: [-(2 ** 31), 2 ** 31 - 1], u8: [0, 255] };

/**
 * Walks the message keeping the path of the element it is in (a stack of segments, joined
 * only when something is wrong: a 10,000-node deploy has ~50,000 actions).
 */
class Walker {
  private readonly path: (string | number)[] = [];
  constructor(readonly limits: DeployShapeLimits) {}

  where(): string {
    let out = '';
    for (const s of this.path) {
      if (typeof s === 'number') out += `[${s}]`;
      else if (s.startsWith('"')) out += `[${s}]`;
      else out += out ? `.${s}` : s;
    }
    return out || 'deploy';
  }

  fail(what: string, got?: unknown): never {
    throw new Refusal(`malformed deploy: ${this.where()} ${what}${arguments.length > 1 ? ` (got ${describe(got)})` : ''}`);
  }

  /** Runs `fn` one level down (a field name, a list index, or a map key). */
  in<T>(seg: string | number, fn: () => T): T {
    this.path.push(seg);
    const r = fn();
    this.path.pop();
    return r;
  }

  key(k: string): string {
    return quote(k);
  }

  obj(o: Obj, field: string): Obj {
    const v = o[field];
    if (!isObj(v)) this.in(field, () => this.fail('must be an object', v));
    return v as Obj;
  }

  list(o: Obj, field: string, max: number): unknown[] {
    const v = o[field];
    return this.in(field, () => {
      if (!Array.isArray(v)) this.fail('must be a list', v);
      if (v.length > max) this.fail(`has ${v.length} entries; at most ${max} are allowed`);
      return v;
    });
  }

  str(o: Obj, field: string, max = this.limits.maxIdLength): string {
    const v = o[field];
    if (typeof v !== 'string' || v.length === 0) this.in(field, () => this.fail('must be a non-empty string', v));
    if ((v as string).length > max) this.in(field, () => this.fail(`is ${(v as string).length} characters long; at most ${max} are allowed`));
    return v as string;
  }

  /** An integer in [min, max]. */
  int(o: Obj, field: string, min: number, max: number): number {
    const v = o[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.in(field, () => this.fail(`must be an integer from ${min} to ${max}`, v));
    return v as number;
  }

  /** A finite number in [min, max]; `above` excludes min itself. */
  num(o: Obj, field: string, min: number, max: number, above = false): number {
    const v = o[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (above && v === min) || v > max)
      this.in(field, () => this.fail(`must be a number ${above ? 'above' : 'from'} ${min}${max < Infinity ? ` to ${max}` : ''}`, v));
    return v as number;
  }

  bool(o: Obj, field: string): boolean {
    const v = o[field];
    if (typeof v !== 'boolean') this.in(field, () => this.fail('must be true or false', v));
    return v as boolean;
  }

  oneOf(o: Obj, field: string, allowed: Set<string>): string {
    const v = o[field];
    if (typeof v !== 'string' || !allowed.has(v)) this.in(field, () => this.fail(`must be one of ${[...allowed].join(', ')}`, v));
    return v as string;
  }

  /** A map's own keys, bounded in count and length. */
  keys(o: Obj, field: string, max: number): string[] {
    const m = this.obj(o, field);
    return this.in(field, () => {
      const keys = Object.keys(m);
      if (keys.length > max) this.fail(`has ${keys.length} entries; at most ${max} are allowed`);
      for (const k of keys)
        if (k.length === 0 || k.length > this.limits.maxIdLength) this.fail(`has a key of ${k.length} characters; keys are 1 to ${this.limits.maxIdLength}`);
      return keys;
    });
  }
}

/**
 * Checks a deploy message's whole shape (see `DeployShapeLimits` for the bounds). Returns the
 * deploy, typed, or a reason naming the element (`programs[1].allocations[3].depth`); never
 * throws, whatever `m` is.
 */
export function checkDeploy(m: unknown, limits: DeployShapeLimits = DEPLOY_SHAPE_LIMITS): { ok: true; deploy: Deploy } | { ok: false; reason: string } {
  try {
    walk(new Walker(limits), m);
    return { ok: true, deploy: m as Deploy };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason };
    // Not reachable on any JSON value; a stack overflow on a pathological object, say.
    return { ok: false, reason: 'malformed deploy' };
  }
}

/** The walk in the order a deploy is read: its settings, hosts, PEs and buffers, then each program, then the self-timed plan. */
function walk(w: Walker, m: unknown): void {
  if (!isObj(m)) w.fail('must be an object', m);
  settings(w, m);
  const hostIds = hostList(w, m);
  const s: Scope = {
    w,
    L: w.limits,
    pes: peTable(w, m, hostIds),
    buffers: bufferTable(w, m),
    placeOf: new Map(),
    totals: { actions: 0, allocations: 0, slots: 0, initial: 0 },
    phaseCount: -1,
  };
  const programs = w.list(m, 'programs', s.L.maxPrograms);
  w.in('programs', () => programs.forEach((p, i) => w.in(i, () => program(s, p))));
  if (m.sync !== undefined) w.oneOf(m, 'sync', new Set(['self-timed', 'barrier']));
  if (m.sync === 'self-timed') plan(w, m, programs);
}

/** What the walk of the programs reads and keeps: the declared PEs and buffers, where each buffer lives, and the deploy's running totals. */
interface Scope {
  w: Walker;
  L: DeployShapeLimits;
  pes: Obj;
  buffers: Obj;
  /** Where each allocated buffer lives: its offset in its storage's slot and the slot's bytes. */
  placeOf: Map<string, { at: number; bytes: number }>;
  totals: { actions: number; allocations: number; slots: number; initial: number };
  /** The first program's phase count (-1 before it): every program has as many. */
  phaseCount: number;
}

/** The run's settings: type, id, iterations and cycles, emulation, intervals, kernel versions. */
function settings(w: Walker, m: Obj): void {
  const L = w.limits;
  if (m.type !== 'deploy') w.in('type', () => w.fail('must be "deploy"', m.type));
  w.str(m, 'runId');
  const iterations = w.int(m, 'iterations', 1, L.maxIterations);
  const cycles = w.int(m, 'cycles', 1, L.maxCycles);
  if (cycles < iterations) w.in('cycles', () => w.fail(`must be at least iterations (${iterations})`, cycles));
  if (m.linkRate !== undefined) w.num(m, 'linkRate', 0, Infinity);
  if (m.emulateLinks !== undefined) w.bool(m, 'emulateLinks');
  if (m.emulateDevices !== undefined) {
    // Seconds a firing lasts at least, by node: from 0 to an hour.
    const d = w.obj(m, 'emulateDevices');
    for (const node of w.keys(m, 'emulateDevices', L.maxActions)) w.in('emulateDevices', () => w.num(d, node, 0, 3600));
  }
  if (m.slow !== undefined) {
    // Slow-down factors by PE: 1 to 1000.
    const d = w.obj(m, 'slow');
    for (const pe of w.keys(m, 'slow', L.maxPes)) w.in('slow', () => w.num(d, pe, 1, 1000));
  }
  // Microseconds between trace batches: 1 ms to a minute.
  if (m.traceInterval !== undefined) w.num(m, 'traceInterval', 1000, 60e6);
  // Milliseconds between deploy progress reports: 10 ms to a minute.
  if (m.progressMs !== undefined) w.int(m, 'progressMs', 10, 60_000);
  if (m.kernels !== undefined) {
    // Kernel id -> semver version: no more kernels than actions, each a short string.
    const k = w.obj(m, 'kernels');
    for (const id of w.keys(m, 'kernels', L.maxActions)) w.in('kernels', () => w.str(k, id, 64));
  }
}

/** The run's hosts, each once; their ids. */
function hostList(w: Walker, m: Obj): Set<string> {
  const hostIds = new Set<string>();
  const hosts = w.list(m, 'hosts', w.limits.maxHosts);
  w.in('hosts', () =>
    hosts.forEach((h, i) =>
      w.in(i, () => {
        if (!isObj(h)) w.fail('must be an object', h);
        const id = w.str(h, 'id');
        w.str(h, 'url', w.limits.maxUrlLength);
        if (hostIds.has(id)) w.in('id', () => w.fail(`repeats host ${quote(id)}`));
        hostIds.add(id);
      }),
    ),
  );
  return hostIds;
}

/** The run's PEs, each on one of its hosts. */
function peTable(w: Walker, m: Obj, hostIds: Set<string>): Obj {
  const pes = w.obj(m, 'pes');
  for (const pe of w.keys(m, 'pes', w.limits.maxPes)) {
    w.in('pes', () =>
      w.in(w.key(pe), () => {
        const p = pes[pe];
        if (!isObj(p)) w.fail('must be an object', p);
        const host = w.str(p, 'host');
        if (!hostIds.has(host)) w.in('host', () => w.fail(`names host ${quote(host)}, which is not among the run's hosts`));
        w.oneOf(p, 'kind', KINDS);
      }),
    );
  }
  return pes;
}

/** The run's buffers: element type and bytes. */
function bufferTable(w: Walker, m: Obj): Obj {
  const buffers = w.obj(m, 'buffers');
  for (const id of w.keys(m, 'buffers', w.limits.maxBuffers)) {
    w.in('buffers', () =>
      w.in(w.key(id), () => {
        const b = buffers[id];
        if (!isObj(b)) w.fail('must be an object', b);
        w.oneOf(b, 'element', ELEMENTS);
        w.int(b, 'bytes', 1, Number.MAX_SAFE_INTEGER);
      }),
    );
  }
  return buffers;
}

const bufferBytes = (s: Scope, id: string) => (s.buffers[id] as { bytes: number }).bytes;

/** A buffer id the run declares, read from field `field` of `o`. */
function bufferRef(s: Scope, o: Obj, field: string): string {
  const id = s.w.str(o, field);
  if (!has(s.buffers, id)) s.w.in(field, () => s.w.fail(`names buffer ${quote(id)}, which is not in the deploy's buffers`));
  return id;
}

function peRef(s: Scope, o: Obj, field: string): string {
  const id = s.w.str(o, field);
  if (!has(s.pes, id)) s.w.in(field, () => s.w.fail(`names PE ${quote(id)}, which is not in the deploy's pes`));
  return id;
}

/** One PE's program: its PE as declared, its allocations, its initial fills, its phases. */
function program(s: Scope, p: unknown): void {
  const w: Walker = s.w;
  const L = s.L;
  if (!isObj(p)) w.fail('must be an object', p);
  const pe = peRef(s, p, 'pe');
  const host = w.str(p, 'host');
  const kind = w.oneOf(p, 'kind', KINDS);
  const declared = s.pes[pe] as { host: string; kind: string };
  if (declared.host !== host || declared.kind !== kind)
    w.fail(`is a ${kind} program on host ${quote(host)}, but pes[${quote(pe)}] is a ${declared.kind} on host ${quote(declared.host)}`);

  // This program's buffers and their slots: what its initial fills may name.
  const depthHere = new Map<string, number>();
  const allocs = w.list(p, 'allocations', L.maxAllocations);
  s.totals.allocations += allocs.length;
  if (s.totals.allocations > L.maxAllocations) w.in('allocations', () => w.fail(`brings the deploy's allocations past ${L.maxAllocations} (maxAllocations)`));
  w.in('allocations', () => allocs.forEach((a, j) => w.in(j, () => allocation(s, a, pe, depthHere))));

  if (p.initial !== undefined) {
    const fills = w.list(p, 'initial', L.maxInitial);
    s.totals.initial += fills.length;
    if (s.totals.initial > L.maxInitial) w.in('initial', () => w.fail(`brings the deploy's initial fills past ${L.maxInitial} (maxInitial)`));
    w.in('initial', () => fills.forEach((f, j) => w.in(j, () => fill(s, f, depthHere, pe))));
  }

  const phases = w.list(p, 'phases', L.maxPhases);
  // Every PE runs the same phases: a barrier one program lacks would hold the others forever.
  if (s.phaseCount < 0) s.phaseCount = phases.length;
  else if (phases.length !== s.phaseCount) w.in('phases', () => w.fail(`has ${phases.length} phases; programs[0] has ${s.phaseCount}`));
  w.in('phases', () => phases.forEach((f, j) => w.in(j, () => phase(s, f))));
}

/** One allocation of `pe`'s program: its buffers (views at offsets inside it) and its depth, counted against the deploy's slots. */
function allocation(s: Scope, a: unknown, pe: string, depthHere: Map<string, number>): void {
  const w: Walker = s.w;
  const L = s.L;
  if (!isObj(a)) w.fail('must be an object', a);
  const color = w.int(a, 'color', 0, L.maxAllocations);
  const bytes = w.int(a, 'bytes', 1, Number.MAX_SAFE_INTEGER);
  const ids = w.list(a, 'buffers', L.maxBuffers);
  // Views (joins laid out in one storage): where each buffer starts in a slot.
  const offsets = a.offsets === undefined ? undefined : w.list(a, 'offsets', ids.length);
  if (offsets && offsets.length !== ids.length) w.in('offsets', () => w.fail(`has ${offsets.length} entries for ${ids.length} buffers`));
  w.in('buffers', () =>
    ids.forEach((id, k) =>
      w.in(k, () => {
        if (typeof id !== 'string' || !has(s.buffers, id)) w.fail("must name a buffer in the deploy's buffers", id);
        const at = offsets ? w.in('offsets', () => w.int(offsets as unknown as Obj, String(k), 0, Number.MAX_SAFE_INTEGER)) : 0;
        // The buffer's views are cut from this storage.
        if (at + bufferBytes(s, id) > bytes)
          w.fail(`is buffer ${quote(id)} of ${bufferBytes(s, id)} bytes${at ? ` at offset ${at}` : ''}, past the end of its allocation (${bytes})`);
        s.placeOf.set(id, { at, bytes });
      }),
    ),
  );
  const depth = w.int(a, 'depth', 1, Number.MAX_SAFE_INTEGER);
  for (const id of ids) depthHere.set(id as string, depth);
  const what = () => `${ids.length ? `buffer ${quote(ids[0] as string)}` : 'storage'} (colour ${color}) on ${quote(pe)}`;
  if (depth > L.maxDepth) w.in('depth', () => w.fail(`asks ${depth} slots for ${what()}; at most ${L.maxDepth} are allowed (maxDepth)`));
  s.totals.slots += depth;
  if (s.totals.slots > L.maxSlots) w.in('depth', () => w.fail(`(${depth} slots for ${what()}) brings the deploy's buffer slots past ${L.maxSlots} (maxSlots)`));
}

/** One phase of a program: its name, barrier flag and actions, counted against the deploy's actions. */
function phase(s: Scope, f: unknown): void {
  const w: Walker = s.w;
  const L = s.L;
  if (!isObj(f)) w.fail('must be an object', f);
  w.str(f, 'name');
  w.bool(f, 'barrier');
  const list = w.list(f, 'actions', L.maxActions);
  s.totals.actions += list.length;
  if (s.totals.actions > L.maxActions) w.in('actions', () => w.fail(`brings the deploy's actions past ${L.maxActions} (maxActions)`));
  w.in('actions', () => list.forEach((a, k) => w.in(k, () => action(s, a))));
}

/** The self-timed plan (compile/contract.ts): counter ids in range, one entry per action of this deploy's programs. */
function plan(w: Walker, m: Obj, programs: unknown[]): void {
  const L = w.limits;
  const pl = w.obj(m, 'plan');
  w.in('plan', () => {
    const counters = w.list(pl, 'counters', 2 * L.maxActions);
    w.in('counters', () =>
      counters.forEach((c, i) =>
        w.in(i, () => {
          if (!isObj(c)) w.fail('must be an object', c);
          w.str(c, 'name');
          w.str(c, 'host');
        }),
      ),
    );
    const n = counters.length;
    const byPe = w.obj(pl, 'actions');
    w.in('actions', () =>
      programs.forEach((p) => {
        const { pe, phases } = p as { pe: string; phases: { actions: unknown[] }[] };
        const planned = byPe[pe];
        w.in(w.key(pe), () => {
          if (!Array.isArray(planned) || planned.length !== phases.length) w.fail(`must list the ${phases.length} phases of ${quote(pe)}'s program`, planned);
          planned.forEach((entries: unknown, j) =>
            w.in(j, () => {
              if (!Array.isArray(entries) || entries.length !== phases[j].actions.length)
                w.fail(`must list the ${phases[j].actions.length} actions of the phase`, entries);
              entries.forEach((e: unknown, k) =>
                w.in(k, () => {
                  if (!isObj(e)) w.fail('must be an object', e);
                  for (const half of ['access', 'send', 'receive']) if (e[half] !== undefined) w.in(half, () => planAccess(w, e[half], n));
                }),
              );
            }),
          );
        });
      }),
    );
  });
}

function planAccess(w: Walker, a: unknown, counters: number): void {
  const L = w.limits;
  if (!isObj(a)) w.fail('must be an object', a);
  w.int(a, 'signal', -1, counters - 1);
  const waits = w.list(a, 'waits', L.maxActions);
  w.in('waits', () =>
    waits.forEach((x, i) =>
      w.in(i, () => {
        if (!isObj(x)) w.fail('must be an object', x);
        w.int(x, 'counter', 0, counters - 1);
        w.int(x, 'offset', -L.maxCycles, L.maxCycles);
      }),
    ),
  );
}

/** A buffer access at `o[field]`; `seg` names it in the path (a quoted, cut port name). */
function access(s: Scope, o: Obj, field: string, seg = field): void {
  const w: Walker = s.w;
  const L = s.L;
  const a = o[field];
  w.in(seg, () => {
    if (!isObj(a)) w.fail('must be an object', a);
    const id = bufferRef(s, a, 'buffer');
    w.int(a, 'lag', 0, L.maxDepth);
    // A view: a range of the buffer's place, inside its storage (a joined read spans the parts laid out after its base).
    if (a.offset === undefined && a.bytes === undefined) return;
    const offset = a.offset === undefined ? 0 : w.int(a, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const bytes = a.bytes === undefined ? bufferBytes(s, id) : w.int(a, 'bytes', 1, Number.MAX_SAFE_INTEGER);
    const place = s.placeOf.get(id);
    const room = place ? place.bytes - place.at : bufferBytes(s, id);
    if (offset + bytes > room)
      w.fail(`reads bytes ${offset}..${offset + bytes - 1} of buffer ${quote(id)}, past the ${room} bytes of its storage from where it starts`);
  });
}

function ports(s: Scope, o: Obj, field: string): void {
  const map = s.w.obj(o, field);
  for (const port of s.w.keys(o, field, s.L.maxPorts)) s.w.in(field, () => access(s, map, port, s.w.key(port)));
}

/** A firing's inputs fed in parts: per port, a list of accesses. */
function parts(s: Scope, o: Obj): void {
  const w: Walker = s.w;
  const L = s.L;
  if (o.parts === undefined) return;
  const map = w.obj(o, 'parts');
  for (const port of w.keys(o, 'parts', L.maxPorts)) {
    w.in('parts', () =>
      w.in(w.key(port), () => {
        const list = w.list(map, port, L.maxActions);
        list.forEach((_, i) => access(s, list as unknown as Obj, String(i), i as unknown as string));
      }),
    );
  }
}

/** A firing's params (a fire action's, or an initial fill's source kernel's): bounded in count, each a number, a boolean or bounded text. */
function params(w: Walker, o: Obj): void {
  const L = w.limits;
  const map = w.obj(o, 'params');
  for (const name of w.keys(o, 'params', L.maxPorts)) {
    const v = map[name];
    w.in('params', () =>
      w.in(w.key(name), () => {
        if (typeof v === 'string') {
          if (v.length > L.maxParamLength) w.fail(`is ${v.length} characters long; at most ${L.maxParamLength} are allowed`);
        } else if (typeof v !== 'number' && typeof v !== 'boolean') w.fail('must be a number, a boolean or text', v);
      }),
    );
  }
}

/**
 * One initial fill of a program (a delayed edge's initial tokens): a slot of one of the
 * program's own buffers (or `count` slots from it), a range inside the buffer, and either a constant `value` (in the
 * buffer's element type) or a source kernel's output (`kernel`, `params`, `port`, `token`).
 */
function fill(s: Scope, f: unknown, depthHere: Map<string, number>, pe: string): void {
  const w: Walker = s.w;
  if (!isObj(f)) w.fail('must be an object', f);
  const id = w.str(f, 'buffer');
  const depth = depthHere.get(id);
  if (depth === undefined) w.in('buffer', () => w.fail(`names buffer ${quote(id)}, which is not among ${quote(pe)}'s allocations`));
  const slot = w.int(f, 'slot', 0, depth! - 1);
  // A range of slots (a delay's initial iterations): inside the allocation, never round it.
  if (f.count !== undefined) w.int(f, 'count', 1, depth! - slot);
  const size = bufferBytes(s, id);
  const offset = f.offset === undefined ? 0 : w.int(f, 'offset', 0, size - 1);
  if (f.bytes !== undefined) w.int(f, 'bytes', 1, size - offset);
  const hasValue = f.value !== undefined;
  const hasKernel = f.kernel !== undefined;
  if (hasValue === hasKernel)
    w.fail(hasValue ? 'has both a value and a kernel; a fill has exactly one' : 'has neither a value nor a kernel; a fill has exactly one');
  if (f.token !== undefined) w.int(f, 'token', 0, Number.MAX_SAFE_INTEGER);
  if (hasValue) {
    const element = (s.buffers[id] as { element: string }).element;
    const range = INT_RANGE[element];
    if (range) w.int(f, 'value', range[0], range[1]);
    else if (typeof f.value !== 'number' || !Number.isFinite(f.value)) w.in('value', () => w.fail('must be a finite number', f.value));
  } else w.str(f, 'kernel');
  if (f.port !== undefined) w.str(f, 'port');
  if (f.params !== undefined) params(w, f);
}

function action(s: Scope, a: unknown): void {
  const w: Walker = s.w;
  const L = s.L;
  if (!isObj(a)) w.fail('must be an object', a);
  const op = w.oneOf(a, 'op', new Set(['fire', 'transfer', 'barrier']));
  if (op === 'barrier') {
    w.str(a, 'label');
    return;
  }
  w.int(a, 'startCycle', 0, L.maxCycles);
  if (op === 'fire') {
    w.str(a, 'node');
    w.str(a, 'kernel');
    params(w, a);
    ports(s, a, 'inputs');
    ports(s, a, 'outputs');
    parts(s, a);
    return;
  }
  peRef(s, a, 'fromPe');
  peRef(s, a, 'toPe');
  access(s, a, 'from');
  access(s, a, 'to');
  const bytes = w.int(a, 'bytes', 1, Number.MAX_SAFE_INTEGER);
  for (const end of ['from', 'to'] as const) {
    const id = (a[end] as { buffer: string }).buffer;
    if (bytes > bufferBytes(s, id)) w.in('bytes', () => w.fail(`moves ${bytes} bytes; buffer ${quote(id)} holds ${bufferBytes(s, id)}`));
  }
  const link = w.obj(a, 'link');
  w.in('link', () => {
    w.str(link, 'kind');
    w.num(link, 'bandwidth', 0, Infinity, true);
    w.num(link, 'latency', 0, Infinity);
  });
}
