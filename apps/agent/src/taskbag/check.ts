import { CUSTOM_WGSL, dataTypeBytes, findKernel, majorOf, portsFor, withDefaults, type KernelSpec, type Params, type PortSpec } from '@pipeloom/kernels';
import { DEPLOY_SHAPE_LIMITS, quote, servedPe, type BagDeploy, type BagTaskMessage } from '@pipeloom/core';
import type { Devices } from '../devices/discover.js';
import type { DeployLimits } from '../runtime/deploy-limits.js';

// Task-bag messages checked before anything is read from them: a bag-deploy against this
// agent's kernels and WGSL policy, a task against the run's nodes and the PE it names (ports,
// byte counts, the PE's buffer limits and memory), a free's keys. Every count, length and size
// is bounded; a reason names the element (`inputs[1].parts[0].offset`) and quotes at most a
// few dozen characters of what the sender wrote. Never throws.

export const BAG_LIMITS = {
  /** Nodes of one bag-deploy. */
  maxNodes: 65_536,
  /** Characters of an id: node, host, key, task id, port, param name. */
  maxIdLength: 512,
  maxHosts: DEPLOY_SHAPE_LIMITS.maxHosts,
  maxUrlLength: DEPLOY_SHAPE_LIMITS.maxUrlLength,
  /** Params of one node or task, inputs or outputs of one task. */
  maxPorts: DEPLOY_SHAPE_LIMITS.maxPorts,
  /** Characters of one string param (custom.wgsl carries its source in one). */
  maxParamLength: DEPLOY_SHAPE_LIMITS.maxParamLength,
  /** Parts of one input (a port fed in parts: a multi-rate join). */
  maxParts: 4096,
  /** Keys of one `free`. */
  maxFreeKeys: 65_536,
  /** Entries of `emulateDevices` and `slow`. */
  maxEmulated: 65_536,
  /** Largest `slow` factor. */
  maxSlow: 1000,
  /** Longest emulated firing, seconds. */
  maxEmulatedSeconds: 3600,
  /** Tasks given to this agent and not yet reported. */
  maxOutstanding: 4096,
} as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const ELEMENTS = new Set(['f32', 'u32', 'i32', 'u8']);
const ELEMENT_BYTES: Record<string, number> = { f32: 4, u32: 4, i32: 4, u8: 1 };
const n = (x: number) => x.toLocaleString('en-US');

class Refusal {
  constructor(readonly reason: string) {}
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `text ${quote(v)}`;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** A path through the message (kept as segments, joined only when something is wrong). */
class Walk {
  private readonly path: (string | number)[] = [];
  constructor(readonly what: string) {}

  fail(msg: string, got?: unknown): never {
    let at = '';
    // Map keys are the sender's: a long one is cut as quoted values are.
    for (const seg of this.path) {
      const s = typeof seg === 'string' && seg.length > 64 ? quote(seg) : seg;
      at += typeof s === 'number' ? `[${s}]` : at ? `.${s}` : s;
    }
    throw new Refusal(`malformed ${this.what}: ${at || this.what} ${msg}${arguments.length > 1 ? ` (got ${describe(got)})` : ''}`);
  }

  /** Fails one level down. */
  failAt(seg: string | number, msg: string, ...got: unknown[]): never {
    this.path.push(seg);
    if (got.length) this.fail(msg, got[0]);
    this.fail(msg);
  }

  in<T>(seg: string | number, fn: () => T): T {
    this.path.push(seg);
    try {
      return fn();
    } finally {
      this.path.pop();
    }
  }

  obj(v: unknown): Obj {
    if (!isObj(v)) this.fail('must be an object', v);
    return v;
  }

  list(v: unknown, max: number, min = 0): unknown[] {
    if (!Array.isArray(v)) this.fail('must be a list', v);
    if (v.length > max) this.fail(`has ${n(v.length)} entries; at most ${n(max)} are allowed`);
    if (v.length < min) this.fail(`must have at least ${min} entr${min === 1 ? 'y' : 'ies'}`);
    return v;
  }

  str(v: unknown, max: number = BAG_LIMITS.maxIdLength): string {
    if (typeof v !== 'string' || v.length === 0) this.fail('must be a non-empty string', v);
    if (v.length > max) this.fail(`is ${n(v.length)} characters long; at most ${n(max)} are allowed`);
    return v;
  }

  int(v: unknown, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.fail(`must be an integer from ${n(min)} to ${n(max)}`, v);
    return v;
  }

  num(v: unknown, min: number, max: number): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) this.fail(`must be a number from ${min} to ${max}`, v);
    return v;
  }

  /** A map's own keys, bounded in count and length. */
  keys(v: unknown, max: number): string[] {
    const o = this.obj(v);
    const keys = Object.keys(o);
    if (keys.length > max) this.fail(`has ${n(keys.length)} entries; at most ${n(max)} are allowed`);
    for (const k of keys)
      if (k.length === 0 || k.length > BAG_LIMITS.maxIdLength) this.fail(`has a key of ${n(k.length)} characters; keys are 1 to ${BAG_LIMITS.maxIdLength}`);
    return keys;
  }
}

/** Params for `kernel`: each one it declares, of its type and range; strings bounded. */
function checkParams(w: Walk, kernel: KernelSpec, v: unknown): void {
  const o = w.obj(v);
  for (const name of w.keys(o, BAG_LIMITS.maxPorts)) {
    w.in(name, () => {
      const spec = Object.hasOwn(kernel.params, name) ? kernel.params[name] : undefined;
      if (!spec) w.fail(`is not a param of kernel "${kernel.id}" (it has ${Object.keys(kernel.params).join(', ') || 'none'})`);
      const x = o[name];
      switch (spec.type) {
        case 'int':
          w.int(x, spec.min ?? Number.MIN_SAFE_INTEGER, spec.max ?? Number.MAX_SAFE_INTEGER);
          return;
        case 'float':
          w.num(x, spec.min ?? -Number.MAX_VALUE, spec.max ?? Number.MAX_VALUE);
          return;
        case 'bool':
          if (typeof x !== 'boolean') w.fail('must be true or false', x);
          return;
        case 'enum':
          if (typeof x !== 'string' || !spec.values?.includes(x)) w.fail(`must be one of ${(spec.values ?? []).join(', ')}`, x);
          return;
        default:
          if (typeof x !== 'string') w.fail('must be a string', x);
          if (x.length > BAG_LIMITS.maxParamLength) w.fail(`is ${n(x.length)} characters long; at most ${n(BAG_LIMITS.maxParamLength)} are allowed`);
      }
    });
  }
}

/** What the agent keeps of a checked bag-deploy's node. */
export interface BagNode {
  id: string;
  kernel: KernelSpec;
  params: Params;
}

/**
 * Why this agent refuses the bag-deploy `m`, or its nodes when it can run it: shape and bounds,
 * every kernel known here in the major version `kernels` names, custom WGSL only with
 * --allow-wgsl, params each kernel takes.
 */
export function checkBagDeploy(
  m: unknown,
  devices: Devices,
  opts: { allowWgsl: boolean },
): { ok: true; deploy: BagDeploy; nodes: BagNode[] } | { ok: false; reason: string } {
  const w: Walk = new Walk('bag-deploy');
  const host = devices.host;
  try {
    const d = w.obj(m);
    w.in('runId', () => w.str(d.runId, DEPLOY_SHAPE_LIMITS.maxIdLength));
    w.in('secret', () => {
      const s = w.str(d.secret, BAG_LIMITS.maxIdLength);
      if (s.length < 16) w.fail('must be 16 characters or more');
    });
    const hosts = w.in('hosts', () => w.list(d.hosts, BAG_LIMITS.maxHosts, 1));
    const ids = new Set<string>();
    hosts.forEach((h, i) =>
      w.in('hosts', () =>
        w.in(i, () => {
          const o = w.obj(h);
          const id = w.in('id', () => w.str(o.id));
          w.in('url', () => w.str(o.url, BAG_LIMITS.maxUrlLength));
          if (ids.has(id)) w.in('id', () => w.fail(`names host ${quote(id)} twice`));
          ids.add(id);
        }),
      ),
    );
    if (!ids.has(host)) w.in('hosts', () => w.fail(`does not name this agent (${host})`));
    const versions: Record<string, string> = {};
    if (d.kernels !== undefined)
      w.in('kernels', () => {
        const o = w.obj(d.kernels);
        for (const k of w.keys(o, BAG_LIMITS.maxNodes)) versions[k] = w.in(k, () => w.str(o[k], 64));
      });
    const list = w.in('nodes', () => w.list(d.nodes, BAG_LIMITS.maxNodes, 1));
    const nodes: BagNode[] = [];
    list.forEach((v, i) =>
      w.in('nodes', () =>
        w.in(i, () => {
          const o = w.obj(v);
          const id = w.in('id', () => w.str(o.id));
          const kid = w.in('kernel', () => w.str(o.kernel));
          const kernel = findKernel(kid);
          if (!kernel)
            throw new Refusal(`agent ${host} has no kernel ${quote(kid)} (node ${quote(id)}): start it with --kernels naming the package that defines it`);
          const wanted = Object.hasOwn(versions, kid) ? versions[kid] : undefined;
          if (wanted !== undefined && majorOf(wanted) !== majorOf(kernel.version))
            throw new Refusal(
              `agent ${host} has kernel "${kid}" ${kernel.version}, but node ${quote(id)} was compiled against ${quote(wanted)} (another major version): load the package version the document was made with`,
            );
          if (kid === CUSTOM_WGSL && !opts.allowWgsl) throw new Refusal(`agent ${host} refuses custom WGSL in node ${quote(id)}: start it with --allow-wgsl`);
          w.in('params', () => checkParams(w, kernel, o.params));
          const params = withDefaults(kernel, o.params as Params);
          try {
            portsFor(kernel, params);
          } catch (e) {
            w.in('params', () => w.fail(`are not taken by kernel "${kid}" (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})`));
          }
          nodes.push({ id, kernel, params });
        }),
      ),
    );
    if (d.emulateDevices !== undefined)
      w.in('emulateDevices', () => {
        const o = w.obj(d.emulateDevices);
        for (const k of w.keys(o, BAG_LIMITS.maxEmulated)) w.in(k, () => w.num(o[k], 0, BAG_LIMITS.maxEmulatedSeconds));
      });
    if (d.slow !== undefined)
      w.in('slow', () => {
        const o = w.obj(d.slow);
        for (const k of w.keys(o, BAG_LIMITS.maxEmulated)) w.in(k, () => w.num(o[k], 1, BAG_LIMITS.maxSlow));
      });
    if (d.traceInterval !== undefined) w.in('traceInterval', () => w.int(d.traceInterval, 1000, 10_000_000));
    if (d.progressMs !== undefined) w.in('progressMs', () => w.int(d.progressMs, 10, 60_000));
    return { ok: true, deploy: d as unknown as BagDeploy, nodes };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason };
    return { ok: false, reason: `malformed bag-deploy (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})` };
  }
}

/** A checked task: the node's kernel, its params with the task's own over them, and each port's element and bytes. */
export interface CheckedTask {
  task: BagTaskMessage;
  node: BagNode;
  params: Params;
  /** Bytes the task holds while it runs: its inputs and outputs. */
  bytes: number;
}

const portBytes = (p: PortSpec, params: Params) => dataTypeBytes(p.type(params));

/**
 * Checks a task against the run (`nodes`, `hosts`) and this agent (`devices`, `limits`): the
 * shape, the PE, the node, every input and output port the kernel has with its exact bytes,
 * parts inside their input, and each buffer within the PE's limits. Returns the task or the
 * reason it is malformed.
 */
export function checkTask(
  m: unknown,
  nodes: readonly BagNode[],
  hosts: ReadonlySet<string>,
  devices: Devices,
  limits: DeployLimits,
): { ok: true; checked: CheckedTask } | { ok: false; reason: string } {
  const w: Walk = new Walk('task');
  try {
    const t = w.obj(m);
    w.in('runId', () => w.str(t.runId, DEPLOY_SHAPE_LIMITS.maxIdLength));
    w.in('id', () => w.str(t.id));
    const index = w.in('node', () => w.int(t.node, 0, nodes.length - 1));
    w.in('iteration', () => w.int(t.iteration, 0, 2 ** 31 - 1));
    w.in('attempt', () => w.int(t.attempt, 1, 2 ** 31 - 1));
    const peId = w.in('pe', () => w.str(t.pe));
    const pe = servedPe(devices.pes, peId);
    if (!pe) w.failAt('pe', `is not one of agent ${devices.host}'s PEs (${devices.pes.map((p) => p.id).join(', ')})`, peId);
    const node = nodes[index];
    const params = node.params;
    let ports: { inputs: PortSpec[]; outputs: PortSpec[] };
    try {
      ports = portsFor(node.kernel, params);
    } catch (e) {
      w.failAt('params', `are not taken by kernel "${node.kernel.id}" (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})`);
    }
    if (pe.kind === 'cpu' && node.kernel.gpuOnly) w.in('pe', () => w.fail(`is a CPU; node ${quote(node.id)} (${node.kernel.id}) runs on GPUs only`));
    // Each buffer within the PE's limits (a GPU's per-buffer limits), all of them within its memory and the agent's host bytes.
    let total = 0;
    const fits = (bytes: number) => {
      if (pe.limits)
        for (const l of ['maxBufferSize', 'maxStorageBufferBindingSize'] as const)
          if (bytes > pe.limits[l]) w.fail(`needs ${n(bytes)} bytes; ${pe.id} allows ${n(pe.limits[l])} per buffer (${l})`);
      total += bytes;
    };
    const inputs = w.in('inputs', () => w.list(t.inputs, BAG_LIMITS.maxPorts));
    const fed = new Set<string>();
    inputs.forEach((v, i) =>
      w.in('inputs', () =>
        w.in(i, () => {
          const o = w.obj(v);
          const port = w.in('port', () => w.str(o.port));
          const spec = ports.inputs.find((p) => p.name === port);
          if (!spec) w.failAt('port', `is not an input of kernel "${node.kernel.id}" (it has ${ports.inputs.map((p) => p.name).join(', ') || 'none'})`, port);
          if (fed.has(port)) w.in('port', () => w.fail(`feeds input "${port}" a second time`));
          fed.add(port);
          const want = portBytes(spec, params);
          const bytes = w.in('bytes', () => w.int(o.bytes, 0, Number.MAX_SAFE_INTEGER));
          if (bytes !== want) w.in('bytes', () => w.fail(`must be ${n(want)} (input "${port}" of ${node.kernel.id} with these params)`, bytes));
          const element = spec.type(params).element;
          if (o.element !== element) w.in('element', () => w.fail(`must be ${element} (input "${port}")`, o.element));
          w.in('bytes', () => fits(bytes));
          checkInput(w, o, bytes, element, hosts, limits.maxHostBytes);
        }),
      ),
    );
    const unfed = ports.inputs.find((p) => !fed.has(p.name));
    if (unfed) w.in('inputs', () => w.fail(`does not feed input "${unfed.name}" of kernel "${node.kernel.id}"`));
    const outputs = w.in('outputs', () => w.list(t.outputs, BAG_LIMITS.maxPorts));
    const made = new Set<string>();
    outputs.forEach((v, i) =>
      w.in('outputs', () =>
        w.in(i, () => {
          const o = w.obj(v);
          const port = w.in('port', () => w.str(o.port));
          const spec = ports.outputs.find((p) => p.name === port);
          if (!spec) w.failAt('port', `is not an output of kernel "${node.kernel.id}" (it has ${ports.outputs.map((p) => p.name).join(', ') || 'none'})`, port);
          if (made.has(port)) w.in('port', () => w.fail(`names output "${port}" a second time`));
          made.add(port);
          w.in('key', () => w.str(o.key));
          const want = portBytes(spec, params);
          const bytes = w.in('bytes', () => w.int(o.bytes, 0, Number.MAX_SAFE_INTEGER));
          if (bytes !== want) w.in('bytes', () => w.fail(`must be ${n(want)} (output "${port}" of ${node.kernel.id} with these params)`, bytes));
          w.in('bytes', () => fits(bytes));
        }),
      ),
    );
    const unmade = ports.outputs.find((p) => !made.has(p.name));
    if (unmade) w.in('outputs', () => w.fail(`does not name output "${unmade.name}" of kernel "${node.kernel.id}"`));
    if (total > pe.memory) w.fail(`needs ${n(total)} bytes of buffers; ${pe.id} offers ${n(pe.memory)} (its memory)`);
    if (total > limits.maxHostBytes)
      w.fail(`needs ${n(total)} bytes of buffers; agent ${devices.host} allows ${n(limits.maxHostBytes)} per run (maxHostBytes)`);
    return { ok: true, checked: { task: t as unknown as BagTaskMessage, node, params, bytes: total } };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason };
    return { ok: false, reason: `malformed task (${(e instanceof Error ? e.message : String(e)).slice(0, 120)})` };
  }
}

/** One input: parts (each inside the input and inside its output, whose size bounds the pull's answer; from a host of the run) or initial tokens. */
function checkInput(w: Walk, o: Obj, bytes: number, element: string, hosts: ReadonlySet<string>, maxHostBytes: number): void {
  if ((o.parts === undefined) === (o.init === undefined)) w.fail('must have either parts or init');
  if (o.init !== undefined) {
    w.in('init', () => {
      const init = w.obj(o.init) as Partial<Record<string, unknown>>;
      if ('value' in init) {
        w.in('value', () => w.num(init.value, -Number.MAX_VALUE, Number.MAX_VALUE));
        return;
      }
      w.in('node', () => w.str(init.node));
      const kernel = w.in('kernel', () => w.str(init.kernel));
      if (!findKernel(kernel)) w.failAt('kernel', 'is not a kernel this agent has: start it with --kernels naming the package that defines it', kernel);
      // The source kernel's params are checked where it runs (runtime/initial.ts), against the kernel.
      w.in('params', () => {
        const p = w.obj(init.params);
        for (const k of w.keys(p, BAG_LIMITS.maxPorts)) {
          const x = p[k];
          if (typeof x === 'string' ? x.length > BAG_LIMITS.maxParamLength : typeof x !== 'boolean' && !(typeof x === 'number' && Number.isFinite(x)))
            w.in(k, () => w.fail('must be a finite number, true, false or a bounded string', x));
        }
      });
    });
    return;
  }
  const parts = w.in('parts', () => w.list(o.parts, BAG_LIMITS.maxParts, 1));
  parts.forEach((v, j) =>
    w.in('parts', () =>
      w.in(j, () => {
        const p = w.obj(v);
        w.in('key', () => w.str(p.key));
        const host = w.in('host', () => w.str(p.host));
        if (!hosts.has(host)) w.in('host', () => w.fail('is not a host of the run', host));
        const size = w.in('size', () => w.int(p.size, 0, maxHostBytes));
        const offset = w.in('offset', () => w.int(p.offset, 0, size));
        const count = w.in('bytes', () => w.int(p.bytes, 0, bytes));
        const at = w.in('at', () => w.int(p.at, 0, bytes));
        if (at + count > bytes) w.fail(`copies ${n(count)} bytes to ${n(at)}, past the input's ${n(bytes)}`);
        if (offset + count > size) w.fail(`reads ${n(count)} bytes from ${n(offset)}, past the output's ${n(size)}`);
      }),
    ),
  );
}

/** The keys of a `free`, bounded; or the reason it is malformed. */
export function checkFree(m: unknown): { ok: true; keys: string[] } | { ok: false; reason: string } {
  const w: Walk = new Walk('free');
  try {
    const o = w.obj(m);
    w.in('runId', () => w.str(o.runId, DEPLOY_SHAPE_LIMITS.maxIdLength));
    const keys = w.in('keys', () => w.list(o.keys, BAG_LIMITS.maxFreeKeys));
    keys.forEach((k, i) => w.in('keys', () => w.in(i, () => w.str(k))));
    return { ok: true, keys: keys as string[] };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.reason };
    return { ok: false, reason: 'malformed free' };
  }
}
