import { error, type Diagnostic } from '../diagnostics.js';
import { SYNC_MODES } from '../run/contract.js';

// The shape check: every field has the JSON type the format says, so the later passes can
// trust the document. Runs on anything (a parsed file, a store snapshot) and never throws.

const LINK_KINDS = ['pcie', 'infiniband', 'ethernet', 'nvlink', 'loopback'];
/** A bound on the host shorthand, so a typo cannot ask for millions of PEs. */
const MAX_GPUS = 64;

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  fail(path: string, message: string, hint?: string) {
    this.diagnostics.push(error(path, message, hint));
    return false;
  }
  object(path: string, v: unknown, required = true): v is Record<string, unknown> {
    if (v === undefined && !required) return false;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return true;
    return this.fail(path, v === undefined ? 'is missing' : `must be an object, not ${describe(v)}`);
  }
  array(path: string, v: unknown, required = true): v is unknown[] {
    if (v === undefined && !required) return false;
    if (Array.isArray(v)) return true;
    return this.fail(path, v === undefined ? 'is missing' : `must be an array, not ${describe(v)}`, v === undefined ? 'write [] for none' : undefined);
  }
  string(path: string, v: unknown, required = true) {
    if (v === undefined && !required) return;
    if (typeof v !== 'string' || v === '') this.fail(path, v === undefined ? 'is missing' : `must be a non-empty string, not ${describe(v)}`);
  }
  bool(path: string, v: unknown) {
    if (v !== undefined && typeof v !== 'boolean') this.fail(path, `must be true or false, not ${describe(v)}`);
  }
  number(path: string, v: unknown, opts: { required?: boolean; positive?: boolean; min?: number; integer?: boolean; what?: string } = {}) {
    if (v === undefined) {
      if (opts.required) this.fail(path, 'is missing');
      return;
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(path, `must be a finite number, not ${describe(v)}`);
    if (opts.integer && !Number.isInteger(v)) return this.fail(path, `must be an integer, not ${v}`);
    if (opts.positive && v <= 0) return this.fail(path, `${opts.what ?? 'value'} must be positive, not ${v}`, 'use a value greater than 0');
    if (opts.min !== undefined && v < opts.min) return this.fail(path, `${opts.what ?? 'value'} must be at least ${opts.min}, not ${v}`);
  }
  oneOf(path: string, v: unknown, values: string[], required = true) {
    if (v === undefined && !required) return;
    if (typeof v !== 'string' || !values.includes(v)) this.fail(path, `must be one of ${values.join(', ')}, not ${describe(v)}`);
  }
  position(path: string, v: unknown) {
    if (this.object(path, v, false)) {
      this.number(`${path}.x`, v.x, { required: true });
      this.number(`${path}.y`, v.y, { required: true });
    }
  }
  linkSpec(path: string, v: Record<string, unknown>) {
    this.number(`${path}.bandwidth`, v.bandwidth, { required: true, positive: true, what: 'bandwidth' });
    this.number(`${path}.latency`, v.latency, { required: true, min: 0, what: 'latency' });
    this.bool(`${path}.duplex`, v.duplex);
  }
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return String(v);
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** Diagnostics for every field of the wrong JSON type; empty when the shape is right. */
export function checkShape(doc: Record<string, unknown>): Diagnostic[] {
  const c = new Checker();
  if (doc.name !== undefined && typeof doc.name !== 'string') c.fail('name', `must be a string, not ${describe(doc.name)}`);
  c.object('params', doc.params, false);
  c.object('defs', doc.defs, false);
  if (c.object('app', doc.app)) {
    const app = doc.app;
    if (c.array('app.nodes', app.nodes)) {
      app.nodes.forEach((n, i) => {
        // Paths are built only for an element that has a mistake: a valid 10,000-node
        // document would otherwise build a hundred thousand strings nobody reads.
        if (nodeIsRight(n)) return;
        const p = `app.nodes[${i}]`;
        if (!c.object(p, n)) return;
        c.string(`${p}.id`, n.id);
        // A kernel node, or a composite node (checked in full by the lowering's flatten step).
        if (n.composite === undefined && n.graph === undefined) c.string(`${p}.kernel`, n.kernel);
        else {
          c.string(`${p}.composite`, n.composite, false);
          c.object(`${p}.graph`, n.graph, false);
        }
        if (c.object(`${p}.rates`, n.rates, false)) {
          for (const [k, v] of Object.entries(n.rates)) if (typeof v !== 'number' && typeof v !== 'string') c.fail(`${p}.rates.${k}`, `must be a number or an expression, not ${describe(v)}`);
        }
        if (c.object(`${p}.params`, n.params, false)) {
          for (const [k, v] of Object.entries(n.params)) {
            if (!['number', 'string', 'boolean'].includes(typeof v)) c.fail(`${p}.params.${k}`, `must be a number, string or boolean, not ${describe(v)}`);
          }
        }
        c.position(`${p}.position`, n.position);
      });
    }
    if (c.array('app.edges', app.edges)) {
      app.edges.forEach((e, i) => {
        if (edgeIsRight(e)) return;
        const p = `app.edges[${i}]`;
        if (!c.object(p, e)) return;
        for (const end of ['from', 'to'] as const) {
          if (c.object(`${p}.${end}`, e[end])) {
            c.string(`${p}.${end}.node`, e[end].node);
            c.string(`${p}.${end}.port`, e[end].port);
          }
        }
        if (e.delay !== undefined && typeof e.delay !== 'number' && typeof e.delay !== 'string') c.fail(`${p}.delay`, `must be a number or an expression, not ${describe(e.delay)}`);
      });
    }
  }
  if (c.object('arch', doc.arch)) {
    const arch = doc.arch;
    if (c.array('arch.hosts', arch.hosts)) {
      arch.hosts.forEach((h, i) => {
        const p = `arch.hosts[${i}]`;
        if (!c.object(p, h)) return;
        c.string(`${p}.id`, h.id);
        c.string(`${p}.agent`, h.agent, false);
        c.position(`${p}.position`, h.position);
        c.number(`${p}.cpus`, h.cpus, { integer: true, min: 0, what: 'cpus' });
        if (typeof h.cpus === 'number' && h.cpus > 1) c.fail(`${p}.cpus`, `the host shorthand makes one CPU PE, not ${h.cpus}`, 'list further CPUs in arch.pes');
        c.number(`${p}.gpus`, h.gpus, { integer: true, min: 0, what: 'gpus' });
        if (typeof h.gpus === 'number' && h.gpus > MAX_GPUS) c.fail(`${p}.gpus`, `${h.gpus} GPUs on one host is more than the shorthand makes (${MAX_GPUS})`, 'list them in arch.pes');
        c.number(`${p}.cpuMemory`, h.cpuMemory, { positive: true, what: 'memory' });
        c.number(`${p}.gpuMemory`, h.gpuMemory, { positive: true, what: 'memory' });
        if (c.object(`${p}.pcie`, h.pcie, false)) c.linkSpec(`${p}.pcie`, h.pcie);
      });
    }
    if (c.array('arch.pes', arch.pes, false)) {
      arch.pes.forEach((pe, i) => {
        const p = `arch.pes[${i}]`;
        if (!c.object(p, pe)) return;
        c.string(`${p}.id`, pe.id);
        c.string(`${p}.host`, pe.host);
        c.oneOf(`${p}.kind`, pe.kind, ['cpu', 'gpu']);
        c.number(`${p}.memory`, pe.memory, { required: true, positive: true, what: 'memory' });
        c.number(`${p}.device`, pe.device, { integer: true, min: 0, what: 'device' });
        c.number(`${p}.flops`, pe.flops, { positive: true, what: 'flops' });
        c.number(`${p}.memoryBandwidth`, pe.memoryBandwidth, { positive: true, what: 'memory bandwidth' });
        c.position(`${p}.position`, pe.position);
      });
    }
    if (c.array('arch.links', arch.links, false)) {
      arch.links.forEach((l, i) => {
        if (linkIsRight(l)) return;
        const p = `arch.links[${i}]`;
        if (!c.object(p, l)) return;
        c.string(`${p}.a`, l.a);
        c.string(`${p}.b`, l.b);
        c.oneOf(`${p}.kind`, l.kind, LINK_KINDS);
        c.linkSpec(p, l);
      });
    }
    if (c.object('arch.network', arch.network, false)) {
      c.oneOf('arch.network.kind', arch.network.kind, LINK_KINDS);
      c.linkSpec('arch.network', arch.network);
    }
  }
  if (c.object('mapping', doc.mapping)) {
    const mapping = doc.mapping;
    for (const k of Object.keys(mapping)) {
      const v = mapping[k];
      if (typeof v !== 'string' || v === '') c.fail(`mapping.${k}`, `must be a PE id, not ${describe(v)}`);
    }
  }
  if (c.object('kernels', doc.kernels, false)) {
    for (const [id, v] of Object.entries(doc.kernels!)) {
      if (typeof v !== 'string' || v === '') c.fail(`kernels.${id}`, `must be a version such as "1.0.0", not ${describe(v)}`);
    }
  }
  if (c.object('options', doc.options, false)) {
    const o = doc.options;
    c.bool('options.overlap', o.overlap);
    c.number('options.iterations', o.iterations, { integer: true, min: 1, what: 'iterations' });
    c.oneOf('options.sync', o.sync, [...SYNC_MODES], false);
  }
  return c.diagnostics;
}

// Fast checks for the common elements, true only where checkShape would report nothing.
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isName = (v: unknown) => typeof v === 'string' && v !== '';
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function positionIsRight(v: unknown): boolean {
  return v === undefined || (isObject(v) && isFiniteNumber(v.x) && isFiniteNumber(v.y));
}

function nodeIsRight(n: unknown): boolean {
  if (!isObject(n) || !isName(n.id) || !isName(n.kernel) || !positionIsRight(n.position) || n.rates !== undefined) return false;
  if (n.params === undefined) return true;
  if (!isObject(n.params)) return false;
  for (const k in n.params) {
    if (!Object.hasOwn(n.params, k)) continue;
    const t = typeof n.params[k];
    if (t !== 'number' && t !== 'string' && t !== 'boolean') return false;
  }
  return true;
}

function edgeIsRight(e: unknown): boolean {
  return isObject(e) && e.delay === undefined && isObject(e.from) && isName(e.from.node) && isName(e.from.port) && isObject(e.to) && isName(e.to.node) && isName(e.to.port);
}

function linkIsRight(l: unknown): boolean {
  return (
    isObject(l) &&
    isName(l.a) &&
    isName(l.b) &&
    typeof l.kind === 'string' &&
    LINK_KINDS.includes(l.kind) &&
    isFiniteNumber(l.bandwidth) &&
    l.bandwidth > 0 &&
    isFiniteNumber(l.latency) &&
    l.latency >= 0 &&
    (l.duplex === undefined || typeof l.duplex === 'boolean')
  );
}
