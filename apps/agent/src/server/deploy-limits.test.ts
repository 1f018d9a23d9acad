import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import WebSocket from 'ws';
import { type ImplementationGraph, PROTOCOL_VERSION, type FromAgent, type PeReport } from '@pipeloom/core';
import { hostPrograms, lastStartCycle } from '@pipeloom/core/internal';
import { discover, type Devices } from '../devices/discover.js';
import { align4 } from '../runtime/memory.js';
import { compileOrThrow, example } from '../testing/fixtures.js';
import { DEPLOY_LIMITS, deployRefusal } from '../runtime/deploy-limits.js';
import { startAgent, type AgentServer } from './server.js';

// Deploys checked against the agent's own PEs: real in-process agents on loopback, one CPU
// and two GPU PEs on WebGPU (llvmpipe here), spoken to over a raw coordinator socket so each
// test sends exactly the deploy it means.

const TOKEN = 'deploy-limits-token-0123456789';
const SECRET = 'deploy-limits-secret-0123456789';
const GiB = 2 ** 30;

let devices: Devices;
/** The same machine claiming GPU buffer limits far above its adapter's: deploys get past the check and meet WebGPU. */
let boastful: Devices;
let agent: AgentServer;
let boasting: AgentServer;
let ig: ImplementationGraph;
const log: string[] = [];

beforeAll(async () => {
  // One CPU PE (cpu0@h0; the documents' cpu@h0 is its alias).
  devices = await discover({ host: 'h0', emulateGpus: 2, cpuMemory: GiB, cpus: 1 });
  expect(devices.pes.map((p) => p.id)).toEqual(['cpu0@h0', 'gpu0@h0', 'gpu1@h0']);
  const big = { maxBufferSize: 2 ** 40, maxStorageBufferBindingSize: 2 ** 40 };
  boastful = { ...devices, pes: devices.pes.map((p) => (p.kind === 'gpu' ? { ...p, memory: 2 ** 44, limits: big } : p)) };
  agent = await startAgent({ devices, token: TOKEN, port: 0, log: (l) => log.push(l) });
  boasting = await startAgent({ devices: boastful, token: TOKEN, port: 0 });
  const doc = example('piic-single-host');
  for (const n of doc.app.nodes) {
    const p = n.params ?? {};
    n.params = { ...p, width: 64, height: 64, ...('nb_loop' in p ? { nb_loop: 2 } : {}), ...('increments' in p ? { increments: '2,2' } : {}) };
  }
  ig = compileOrThrow(doc, true);
});
afterAll(async () => {
  await agent?.close();
  await boasting?.close();
});

type Message = Record<string, unknown>;

/** The deploy a coordinator sends for `ig` to host h0 (see coordinator.ts), as plain data to spoil. */
function deployFor(url: string, runId: string, iterations = 3): Message & { programs: Message[]; buffers: Record<string, Message> } {
  const pes: Record<string, { host: string; kind: string }> = {};
  for (const p of ig.programs.pes) pes[p.pe] = { host: p.host, kind: p.kind };
  const buffers: Record<string, { element: string; bytes: number }> = {};
  for (let k = 0; k < ig.buffers.count; k++) buffers[ig.buffers.id[k]] = { element: ig.buffers.types[ig.buffers.type[k]].element, bytes: ig.buffers.bytes[k] };
  const programs = JSON.parse(JSON.stringify(hostPrograms(ig, ['h0']))) as Message[];
  return { type: 'deploy', runId, secret: SECRET, programs, hosts: [{ id: 'h0', url }], iterations, cycles: lastStartCycle(ig) + iterations, pes, buffers };
}

/** A logged-in coordinator connection: send a message, wait for the agent's answer of given types. */
class Session {
  private inbox: FromAgent[] = [];
  private wake: (() => void) | null = null;
  closed: string | null = null;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (d) => {
      this.inbox.push(JSON.parse(String(d)) as FromAgent);
      this.wake?.();
    });
    ws.on('close', (code, reason) => {
      this.closed = `${code} ${String(reason)}`;
      this.wake?.();
    });
  }

  static async open(url: string): Promise<Session> {
    const ws = new WebSocket(url);
    const s = new Session(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: TOKEN }));
    await s.next(['welcome']);
    return s;
  }

  async next(types: string[]): Promise<FromAgent> {
    for (;;) {
      const i = this.inbox.findIndex((m) => types.includes(m.type));
      if (i >= 0) return this.inbox.splice(i, 1)[0];
      if (this.closed) throw new Error(`connection closed: ${this.closed}`);
      await new Promise<void>((r) => (this.wake = r));
    }
  }

  async ask(m: unknown, types = ['deployed', 'error']): Promise<FromAgent> {
    this.ws.send(JSON.stringify(m));
    return this.next(types);
  }

  close() {
    this.ws.close();
  }
}

/** The error an agent answers a deploy with (fails the test if it deployed). */
async function refusal(s: Session, m: unknown): Promise<string> {
  const r = await s.ask(m);
  if (r.type !== 'error') throw new Error(`expected a refusal, got ${JSON.stringify(r).slice(0, 300)}`);
  return r.message;
}

/** Deploys `ig`, checks what the agent reports allocated, runs it to the end and frees it. */
async function runsClean(s: Session, url: string, runId: string): Promise<void> {
  const m = deployFor(url, runId);
  const deployed = await s.ask(m);
  if (deployed.type !== 'deployed') throw new Error(`deploy failed: ${JSON.stringify(deployed).slice(0, 500)}`);
  // What was truly allocated: every colour's slots, 4-byte aligned, per PE.
  const expected: Record<string, number> = {};
  for (const p of m.programs as unknown as { pe: string; allocations: { bytes: number; depth: number }[] }[]) {
    expected[p.pe] = p.allocations.reduce((sum, a) => sum + align4(a.bytes) * a.depth, 0);
  }
  expect(deployed.allocated).toEqual(expected);
  const done = await s.ask({ type: 'start', runId }, ['done', 'failed', 'error']);
  expect(done.type, JSON.stringify(done).slice(0, 500)).toBe('done');
  expect(await s.ask({ type: 'stop', runId, reason: 'test over' }, ['stopped'])).toMatchObject({ type: 'stopped', freed: true });
}

describe('deploys the agent cannot hold are refused before anything is allocated', () => {
  it('a 400-byte deploy asking a million slots is refused at once naming buffer, PE and limit; memory stays flat and the next deploy runs', async () => {
    const s = await Session.open(agent.url);
    try {
      const tiny = {
        type: 'deploy',
        runId: 'r-depth',
        secret: SECRET,
        hosts: [{ id: 'h0', url: agent.url }],
        iterations: 1,
        cycles: 1,
        pes: { 'cpu@h0': { host: 'h0', kind: 'cpu' } },
        buffers: { bn_0: { element: 'u8', bytes: 4 } },
        programs: [{ pe: 'cpu@h0', host: 'h0', kind: 'cpu', allocations: [{ color: 0, bytes: 4, depth: 1e6, buffers: ['bn_0'] }], phases: [] }],
      };
      expect(JSON.stringify(tiny).length).toBeLessThanOrEqual(400);
      const rss = process.memoryUsage().rss;
      const t0 = performance.now();
      const why = await refusal(s, tiny);
      const ms = performance.now() - t0;
      expect(why).toBe(
        'deploy on h0: malformed deploy: programs[0].allocations[0].depth asks 1000000 slots for buffer "bn_0" (colour 0) on "cpu@h0"; at most 256 are allowed (maxDepth)',
      );
      // Before the check a million shared buffers took minutes and 1.6 GB; a refusal is a few checks.
      expect(ms).toBeLessThan(2000);
      expect(process.memoryUsage().rss - rss).toBeLessThan(64 << 20);
      expect(log.some((l) => l.includes('maxDepth'))).toBe(true);
      await runsClean(s, agent.url, 'r-after-depth');
    } finally {
      s.close();
    }
  });

  it('a 64 GiB GPU buffer is refused naming the buffer, the PE and maxBufferSize', async () => {
    const s = await Session.open(agent.url);
    try {
      const m = deployFor(agent.url, 'r-64g');
      const gpu = m.programs.find((p) => p.kind === 'gpu') as { pe: string; allocations: { color: number; bytes: number; depth: number; buffers: string[] }[] };
      const a = gpu.allocations[0];
      a.bytes = 64 * GiB;
      a.depth = 2;
      const limit = devices.pes.find((p) => p.id === gpu.pe)!.limits!.maxBufferSize;
      const others = a.buffers.length > 1 ? ` (+${a.buffers.length - 1} sharing colour ${a.color})` : ` (colour ${a.color})`;
      expect(await refusal(s, m)).toBe(
        `deploy on h0: deploy refused: buffer ${a.buffers[0]}${others} on ${gpu.pe} needs 2 x 68,719,476,736 bytes; ${gpu.pe} allows ${limit.toLocaleString('en-US')} per buffer (maxBufferSize)`,
      );
      await runsClean(s, agent.url, 'r-after-64g');
    } finally {
      s.close();
    }
  });

  it('a GPU buffer that WebGPU does not create refuses the deploy instead of being reported allocated', async () => {
    // The boasting agent's PEs claim 1 TiB buffers: the deploy passes the check and meets the real adapter.
    const s = await Session.open(boasting.url);
    try {
      const m = deployFor(boasting.url, 'r-real');
      const gpu = m.programs.find((p) => p.kind === 'gpu') as { pe: string; allocations: { color: number; bytes: number; depth: number; buffers: string[] }[] };
      const a = gpu.allocations[0];
      a.bytes = 64 * GiB;
      const why = await refusal(s, m);
      expect(why).toContain(`deploy on h0: buffer ${a.buffers[0]} (colour ${a.color}) on ${gpu.pe}: ${a.depth} x 68,719,476,736 bytes could not be created (`);
      expect(why).not.toMatch(/\n|    at /);
      await runsClean(s, boasting.url, 'r-after-real');
    } finally {
      s.close();
    }
  });

  it('null or text sizes are refused naming the element, never deployed with allocated: null', async () => {
    const s = await Session.open(agent.url);
    try {
      const nullBytes = deployFor(agent.url, 'r-null');
      (nullBytes.programs[1].allocations as Message[])[0].bytes = null;
      expect(await refusal(s, nullBytes)).toBe(
        'deploy on h0: malformed deploy: programs[1].allocations[0].bytes must be an integer from 1 to 9007199254740991 (got null)',
      );
      const textBytes = deployFor(agent.url, 'r-text');
      const first = Object.keys(textBytes.buffers)[0];
      textBytes.buffers[first].bytes = '16384';
      expect(await refusal(s, textBytes)).toBe(
        `deploy on h0: malformed deploy: buffers["${first}"].bytes must be an integer from 1 to 9007199254740991 (got text "16384")`,
      );
      const textDepth = deployFor(agent.url, 'r-text-depth');
      (textDepth.programs[0].allocations as Message[])[0].depth = 'two';
      expect(await refusal(s, textDepth)).toBe(
        'deploy on h0: malformed deploy: programs[0].allocations[0].depth must be an integer from 1 to 9007199254740991 (got text "two")',
      );
      await runsClean(s, agent.url, 'r-after-null');
    } finally {
      s.close();
    }
  });

  it('malformed nested fields get a reason naming the path, never a raw internal error', async () => {
    const s = await Session.open(agent.url);
    const spoil: [string, (m: ReturnType<typeof deployFor>) => void][] = [
      ['programs[0] must be an object (got null)', (m) => (m.programs[0] = null as never)],
      ['programs[1].phases must be a list (got text "fire")', (m) => (m.programs[1].phases = 'fire')],
      ['programs[2].phases[0].actions[0] must be an object (got null)', (m) => (m.programs[2].phases as { actions: unknown[] }[])[0].actions.unshift(null)],
      ['hosts[0] must be an object (got null)', (m) => (m.hosts = [null])],
      ['pes must be an object (got null)', (m) => (m.pes = null)],
      ['programs[0].allocations must be a list (got an object)', (m) => (m.programs[0].allocations = {})],
      ['iterations must be an integer from 1 to 2147483647 (got text "3")', (m) => (m.iterations = '3')],
    ];
    try {
      for (const [why, fn] of spoil) {
        const m = deployFor(agent.url, 'r-nested');
        fn(m);
        const r = await refusal(s, m);
        expect(r).toBe(`deploy on h0: malformed deploy: ${why}`);
        expect(r).not.toContain('Cannot read properties');
      }
      // A fire's inputs, somewhere in the programs.
      const m = deployFor(agent.url, 'r-inputs');
      const at = m.programs
        .flatMap((p, i) =>
          (p.phases as { actions: Message[] }[]).flatMap((f, j) => f.actions.map((a, k) => ({ a, path: `programs[${i}].phases[${j}].actions[${k}]` }))),
        )
        .find((x) => x.a.op === 'fire')!;
      at.a.inputs = { in: null };
      expect(await refusal(s, m)).toBe(`deploy on h0: malformed deploy: ${at.path}.inputs["in"] must be an object (got null)`);
      await runsClean(s, agent.url, 'r-after-nested');
    } finally {
      s.close();
    }
  });

  it('an initial token (a delay) from a kernel this agent lacks or from one with inputs is refused naming buffer and PE; constants deploy and run', async () => {
    const s = await Session.open(agent.url);
    try {
      for (const [i, program] of [0, 1].entries()) {
        const m = deployFor(agent.url, `r-initial-${i}`);
        const p = m.programs[program] as unknown as { pe: string; allocations: { buffers: string[] }[]; initial?: unknown[] };
        const id = p.allocations[0].buffers[0];
        p.initial = [
          { buffer: id, slot: 0, value: 0 },
          i === 0 ? { buffer: id, slot: 0, kernel: 'acme.seed', token: 1 } : { buffer: id, slot: 0, kernel: 'matrix.add' },
        ];
        expect(await refusal(s, m)).toBe(
          i === 0
            ? `deploy on h0: initial token 1 of buffer ${id} (slot 0) on ${p.pe}: agent h0 has no kernel "acme.seed": start it with --kernels naming the package that defines it`
            : `deploy on h0: initial of buffer ${id} (slot 0) on ${p.pe}: kernel "matrix.add" has inputs (a, b); an initial token comes from a source kernel, one without inputs`,
        );
      }
      // A constant in a slot the run overwrites before it reads it: deployed (CPU and GPU programs alike) and run.
      const m = deployFor(agent.url, 'r-initial-ok');
      for (const p of m.programs as unknown as { allocations: { buffers: string[] }[]; initial?: unknown[] }[])
        p.initial = [{ buffer: p.allocations[0].buffers[0], slot: 0, value: 7 }];
      expect(await s.ask(m)).toMatchObject({ type: 'deployed' });
      expect(await s.ask({ type: 'start', runId: 'r-initial-ok' }, ['done', 'failed', 'error'])).toMatchObject({ type: 'done' });
      expect(await s.ask({ type: 'stop', runId: 'r-initial-ok', reason: 'test over' }, ['stopped'])).toMatchObject({ type: 'stopped', freed: true });
      await runsClean(s, agent.url, 'r-after-initial');
    } finally {
      s.close();
    }
  });
});

describe("deployRefusal: the agent's own PEs", () => {
  const cpu: PeReport = { id: 'cpu@h7', kind: 'cpu', name: 'cpu', vendor: 'x', memory: 1 << 20 };
  const gpu: PeReport = {
    id: 'gpu0@h7',
    kind: 'gpu',
    name: 'gpu',
    vendor: 'x',
    memory: 1 << 30,
    limits: { maxBufferSize: 1 << 24, maxStorageBufferBindingSize: 1 << 22 },
  };
  const here: Devices = { host: 'h7', pes: [cpu, gpu], gpus: new Map() };
  const deploy = (programs: { pe: string; kind: string; bytes: number; depth: number }[], host = 'h7') => ({
    type: 'deploy',
    runId: 'r',
    hosts: [{ id: host, url: 'ws://127.0.0.1:1' }],
    iterations: 1,
    cycles: 1,
    pes: Object.fromEntries(programs.map((p) => [p.pe, { host, kind: p.kind }])),
    buffers: Object.fromEntries(programs.map((p, i) => [`bn_${i}`, { element: 'u8', bytes: p.bytes }])),
    programs: programs.map((p, i) => ({
      pe: p.pe,
      host,
      kind: p.kind,
      allocations: [{ color: 0, bytes: p.bytes, depth: p.depth, buffers: [`bn_${i}`] }],
      phases: [],
    })),
  });

  it('accepts what fits', () => {
    expect(
      deployRefusal(
        deploy([
          { pe: 'cpu@h7', kind: 'cpu', bytes: 1000, depth: 2 },
          { pe: 'gpu0@h7', kind: 'gpu', bytes: 1 << 22, depth: 2 },
        ]),
        here,
      ),
    ).toBeNull();
  });

  it('names a PE the agent does not serve, and a PE of another kind', () => {
    expect(deployRefusal(deploy([{ pe: 'gpu3@h7', kind: 'gpu', bytes: 4, depth: 1 }]), here)).toBe(
      'deploy refused: programs[0] is for PE "gpu3@h7", which agent h7 does not serve (it serves cpu@h7, gpu0@h7)',
    );
    expect(deployRefusal(deploy([{ pe: 'gpu0@h7', kind: 'cpu', bytes: 4, depth: 1 }]), here)).toBe(
      'deploy refused: programs[0] runs gpu0@h7 as a cpu; on agent h7 it is a gpu',
    );
    expect(deployRefusal(deploy([{ pe: 'cpu@h7', kind: 'cpu', bytes: 4, depth: 1 }], 'h8'), here)).toBe(
      'deploy refused: programs[0] ("cpu@h7") is for host "h8"; this agent is h7',
    );
  });

  it("counts every slot, 4-byte aligned, against the PE's memory", () => {
    // 2 x 524,289 -> 2 x 524,292 bytes: past the CPU's 1 MiB only once aligned.
    expect(deployRefusal(deploy([{ pe: 'cpu@h7', kind: 'cpu', bytes: 524_289, depth: 2 }]), here)).toBe(
      'deploy refused: buffers on cpu@h7 need 1,048,584 bytes; cpu@h7 offers 1,048,576 (its memory); the largest: buffer bn_0 (colour 0) on cpu@h7 needs 2 x 524,292 bytes',
    );
  });

  it('holds each GPU slot to maxStorageBufferBindingSize as well as maxBufferSize', () => {
    expect(deployRefusal(deploy([{ pe: 'gpu0@h7', kind: 'gpu', bytes: (1 << 22) + 1, depth: 1 }]), here)).toBe(
      'deploy refused: buffer bn_0 (colour 0) on gpu0@h7 needs 1 x 4,194,308 bytes; gpu0@h7 allows 4,194,304 per buffer (maxStorageBufferBindingSize)',
    );
  });

  it("an agent's cores share its memory: a document's cpu@h7 is cpu0@h7, the two in one deploy are refused, and the cores' buffers together fit what each reports", () => {
    const cores: Devices = { host: 'h7', pes: [0, 1].map((i) => ({ ...cpu, id: `cpu${i}@h7` })), gpus: new Map() };
    expect(
      deployRefusal(
        deploy([
          { pe: 'cpu@h7', kind: 'cpu', bytes: 1000, depth: 2 },
          { pe: 'cpu1@h7', kind: 'cpu', bytes: 1000, depth: 2 },
        ]),
        cores,
      ),
    ).toBeNull();
    expect(
      deployRefusal(
        deploy([
          { pe: 'cpu@h7', kind: 'cpu', bytes: 4, depth: 1 },
          { pe: 'cpu0@h7', kind: 'cpu', bytes: 4, depth: 1 },
        ]),
        cores,
      ),
    ).toBe('deploy refused: programs[1] ("cpu0@h7") and "cpu@h7" are both for cpu0@h7 of agent h7');
    // 3 x 400,000 bytes on each core: each fits its 1 MiB, the two together do not.
    expect(
      deployRefusal(
        deploy([
          { pe: 'cpu0@h7', kind: 'cpu', bytes: 400_000, depth: 2 },
          { pe: 'cpu1@h7', kind: 'cpu', bytes: 400_000, depth: 1 },
        ]),
        cores,
      ),
    ).toBe("deploy refused: the buffers on agent h7's CPU PEs need 1,200,000 bytes together; its cores share 1,048,576 (--cpu-memory)");
  });

  it("caps a run's host memory (maxHostBytes)", () => {
    expect(deployRefusal(deploy([{ pe: 'cpu@h7', kind: 'cpu', bytes: 1000, depth: 1 }]), here, { ...DEPLOY_LIMITS, maxHostBytes: 512 })).toBe(
      "deploy refused: the run's host buffers need 1,000 bytes on h7; the agent allows 512 per run (maxHostBytes)",
    );
  });

  it('never throws, whatever arrives (mutated valid deploys and arbitrary values)', () => {
    const valid = deployFor('ws://127.0.0.1:1', 'r-fuzz');
    const spoilt = fc.record({
      program: fc.nat({ max: valid.programs.length - 1 }),
      field: fc.constantFrom('pe', 'host', 'kind', 'allocations', 'phases', 'initial'),
      value: fc.jsonValue({ maxDepth: 2 }),
    });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          spoilt.map((x) => ({ spoilt: x })),
        ),
        (input) => {
          let m: unknown = input;
          if (input && typeof input === 'object' && 'spoilt' in input) {
            const { program, field, value } = (input as { spoilt: { program: number; field: string; value: unknown } }).spoilt;
            const d = structuredClone(valid);
            d.programs[program][field] = value;
            m = d;
          }
          const r = deployRefusal(m, devices);
          expect(r === null || typeof r === 'string').toBe(true);
        },
      ),
      { numRuns: 1000, seed: 6 },
    );
    expect(deployRefusal(valid, devices)).toBeNull();
  });
});

describe('pipeloom agent --cpu-memory', () => {
  it('caps what the CPU PE offers: the agent reports it, and a run needing more is refused naming the PE', async () => {
    const { spawnLocalAgents } = await import('../local/spawn.js');
    const { connect, piic } = await import('../testing/fixtures.js');
    const local = await spawnLocalAgents(['h0', 'h1'], { args: ['--cpu-memory', '4096'] });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      expect(c.agents.map((a) => a.pes.find((p) => p.kind === 'cpu')?.memory)).toEqual([4096, 4096]);
      // 64 x 64 f32 matrices: 16 KiB each, four times what the CPU PEs offer.
      const r = await c.run(compileOrThrow(piic({ size: 64, iterations: 2 }), true), { iterations: 2 }).done;
      c.close();
      expect(r.ok).toBe(false);
      // The coordinator checks the memory the agents report before it deploys; the agent checks again on arrival.
      expect(r.failure?.message).toMatch(/buffers on cpu@h[01] need \d+ bytes/);
    } finally {
      await local.stop();
    }
  });
});
