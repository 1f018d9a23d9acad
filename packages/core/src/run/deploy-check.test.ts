import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { compile } from '../compile/compile.js';
import type { ProjectDocument } from '../document/types.js';
import { layeredDocument, splitJoinDocument } from '../testing/generate.js';
import { registerExampleKernels } from '../../../../examples/kernels/register.js';
import { fakeAgents } from '../testing/fake-agent.js';
import { Coordinator } from './coordinator.js';
import { checkDeploy, DEPLOY_SHAPE_LIMITS, quote, type Deploy } from './deploy-check.js';

// The positive cases are the deploy messages the coordinator itself sends: a real Coordinator
// talks to in-memory agents that report the document's PEs and keep what they are sent.

// Every examples/*.json, including ones added later (sobel.json's kernels from the example package).
registerExampleKernels();
const dir = new URL('../../../../examples/', import.meta.url);
const EXAMPLES: Record<string, unknown> = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(new URL(f, dir), 'utf8'))]),
);
const piicDoc = EXAMPLES.piic;

/** Every deploy message a coordinator sends to run `doc` (one per host). */
async function deploysOf(doc: ProjectDocument, overlap: boolean, iterations = 5): Promise<Deploy[]> {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('; '));
  const ig = r.ig;
  const hosts = [...new Set(ig.programs.pes.map((p) => p.host as string))];
  const sent: Deploy[] = [];
  const clock = { now: () => Date.now(), setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms), clearTimeout: (h: never) => clearTimeout(h) };
  const socket = fakeAgents(ig, clock, (m, { send }) => {
    if (m.type !== 'deploy') return;
    sent.push(m);
    // Failing the run ends it at once: only the deploy is wanted.
    send({ type: 'error', message: 'kept' });
  });
  const c = await Coordinator.connect(
    hosts.map((h) => `mem://${h}`),
    { token: 't', connect: socket, clock },
  );
  await c.run(ig, { iterations }).done;
  c.close();
  expect(sent).toHaveLength(hosts.length);
  return JSON.parse(JSON.stringify(sent)) as Deploy[];
}

const reasonOf = (m: unknown) => {
  const r = checkDeploy(m);
  return r.ok ? 'ok' : r.reason;
};

describe('deploy messages the coordinator sends pass the check', () => {
  for (const [name, doc] of Object.entries(EXAMPLES)) {
    for (const overlap of [false, true]) {
      it(`examples/${name}.json ${overlap ? 'with' : 'without'} overlap`, async () => {
        for (const d of await deploysOf(structuredClone(doc) as ProjectDocument, overlap)) expect(reasonOf(d)).toBe('ok');
      });
    }
  }

  it('a 2,000-node layered graph on four hosts (buffers up to several slots deep)', async () => {
    const deploys = await deploysOf(layeredDocument(5, { nodes: 2000, hosts: 4, gpus: 2 }), true, 100);
    const depth = Math.max(...deploys.flatMap((d) => d.programs.flatMap((p) => p.allocations.map((a) => a.depth))));
    expect(depth).toBeGreaterThan(2);
    for (const d of deploys) expect(reasonOf(d)).toBe('ok');
  });
});

describe('split/join deploys (views, parts, ranges)', () => {
  const doc = () =>
    splitJoinDocument({
      slices: 4,
      width: 2,
      height: 8,
      arch: (piicDoc as ProjectDocument).arch,
      pe: (id) => (id.startsWith('slice') && Number(id.slice(6)) % 2 ? 'cpu@h1' : 'cpu@h0'),
    });
  it('pass the check, and a view or a range past its storage is refused', async () => {
    const one = await deploysOf(splitJoinDocument({ slices: 4, width: 2, height: 8, arch: (piicDoc as ProjectDocument).arch, pe: () => 'cpu@h0' }), false);
    const two = await deploysOf(doc(), false);
    for (const d of [...one, ...two]) expect(reasonOf(d)).toBe('ok');
    const views = one.find((d) => d.programs.some((p) => p.allocations.some((a) => a.offsets)))!;
    const bad = structuredClone(views);
    const unit = bad.programs.flatMap((p) => p.allocations).find((a) => a.offsets)!;
    unit.offsets![unit.offsets!.length - 1] += 4;
    expect(reasonOf(bad)).toMatch(/allocations\[\d+\]\.buffers\[3\] is buffer "bn_\d+" of 16 bytes at offset 52, past the end of its allocation \(64\)/);
    const far = structuredClone(views);
    const slice = far.programs.flatMap((p) => p.phases.flatMap((ph) => ph.actions)).find((a) => a.op === 'fire' && a.node === 'slice#3')!;
    if (slice.op === 'fire') slice.inputs.in.offset = 64;
    expect(reasonOf(far)).toMatch(/inputs\["in"\] reads bytes 64\.\.79 of buffer "bn_0", past the 64 bytes of its storage/);
  });
});

describe('a malformed deploy is refused naming the element', () => {
  let good: Deploy;
  const mutate = async (fn: (d: Deploy & Record<string, unknown>) => void) => {
    good ??= (await deploysOf(structuredClone(piicDoc) as ProjectDocument, true))[0];
    const d = structuredClone(good) as Deploy & Record<string, unknown>;
    fn(d);
    return reasonOf(JSON.parse(JSON.stringify(d)));
  };

  it('depth out of range, null or text sizes', async () => {
    expect(await mutate((d) => (d.programs[0].allocations[1].depth = 1e6))).toBe(
      `malformed deploy: programs[0].allocations[1].depth asks 1000000 slots for buffer "${good.programs[0].allocations[1].buffers[0]}" (colour ${good.programs[0].allocations[1].color}) on "${good.programs[0].pe}"; at most 256 are allowed (maxDepth)`,
    );
    expect(await mutate((d) => (d.programs[0].allocations[1].depth = 0))).toBe(
      'malformed deploy: programs[0].allocations[1].depth must be an integer from 1 to 9007199254740991 (got 0)',
    );
    expect(await mutate((d) => ((d.programs[0].allocations[0] as { bytes: unknown }).bytes = null))).toBe(
      'malformed deploy: programs[0].allocations[0].bytes must be an integer from 1 to 9007199254740991 (got null)',
    );
    expect(await mutate((d) => ((d.programs[0].allocations[0] as { bytes: unknown }).bytes = 'lots'))).toBe(
      'malformed deploy: programs[0].allocations[0].bytes must be an integer from 1 to 9007199254740991 (got text "lots")',
    );
    expect(await mutate((d) => ((Object.values(d.buffers)[0] as { bytes: unknown }).bytes = 2.5))).toMatch(
      /^malformed deploy: buffers\["bn_\d+"\]\.bytes must be an integer/,
    );
    expect(await mutate((d) => (d.iterations = 0))).toBe('malformed deploy: iterations must be an integer from 1 to 2147483647 (got 0)');
    // The slowed-PE emulation's factors: 1 to 1000 per PE.
    expect(await mutate((d) => (d.slow = { [d.programs[0].pe]: 4 }))).toBe('ok');
    expect(await mutate((d) => (d.slow = { [d.programs[0].pe]: 0.5 }))).toMatch(/^malformed deploy: slow\[?.*must be a number from 1 to 1000 \(got 0.5\)$/);
    // Deploy progress reports: every 10 ms to a minute, whole milliseconds.
    expect(good.progressMs).toBeGreaterThan(0);
    expect(await mutate((d) => (d.progressMs = 60_000))).toBe('ok');
    expect(await mutate((d) => (d.progressMs = 1))).toBe('malformed deploy: progressMs must be an integer from 10 to 60000 (got 1)');
    expect(await mutate((d) => ((d as { progressMs: unknown }).progressMs = 'often'))).toBe(
      'malformed deploy: progressMs must be an integer from 10 to 60000 (got text "often")',
    );
  });

  it('nested fields of the wrong kind', async () => {
    expect(await mutate((d) => ((d.programs as unknown[])[1] = null))).toBe('malformed deploy: programs[1] must be an object (got null)');
    expect(await mutate((d) => ((d.programs[0] as { phases: unknown }).phases = 'fire'))).toBe(
      'malformed deploy: programs[0].phases must be a list (got text "fire")',
    );
    const busy = good.programs[0].phases.findIndex((f) => f.actions.length > 0);
    expect(await mutate((d) => ((d.programs[0].phases[busy].actions as unknown[])[0] = 7))).toBe(
      `malformed deploy: programs[0].phases[${busy}].actions[0] must be an object (got 7)`,
    );
    expect(await mutate((d) => (d.hosts = {} as never))).toBe('malformed deploy: hosts must be a list (got an object)');
    expect(await mutate((d) => delete (d as { pes?: unknown }).pes)).toBe('malformed deploy: pes must be an object (got undefined)');
  });

  it('a self-timed plan whose counters, phases or actions do not match the programs', async () => {
    expect(good.sync).toBe('self-timed');
    const pe = good.programs[0].pe;
    const busy = good.programs[0].phases.findIndex((f) => f.actions.length > 0);
    const n = good.plan!.counters.length;
    expect(
      await mutate((d) =>
        (d.plan!.actions[pe][busy][0].access ?? d.plan!.actions[pe][busy][0].send ?? d.plan!.actions[pe][busy][0].receive)!.waits.push({
          counter: n,
          offset: 1,
        }),
      ),
    ).toMatch(
      new RegExp(
        `^malformed deploy: plan\\.actions\\["${pe}"\\]\\[${busy}\\]\\[0\\]\\.(access|send|receive)\\.waits\\[\\d+\\]\\.counter must be an integer from 0 to ${n - 1} \\(got ${n}\\)$`,
      ),
    );
    expect(await mutate((d) => d.plan!.actions[pe].pop())).toBe(
      `malformed deploy: plan.actions["${pe}"] must list the ${good.programs[0].phases.length} phases of "${pe}"'s program (got a list)`,
    );
    expect(await mutate((d) => delete (d as { plan?: unknown }).plan)).toBe('malformed deploy: plan must be an object (got undefined)');
    expect(await mutate((d) => ((d as { sync: unknown }).sync = 'eventually'))).toMatch(/^malformed deploy: sync must be one of/);
  });

  it('references to buffers and PEs the deploy does not declare', async () => {
    expect(await mutate((d) => (d.programs[0].allocations[0].buffers[0] = 'constructor' as never))).toBe(
      'malformed deploy: programs[0].allocations[0].buffers[0] must name a buffer in the deploy\'s buffers (got text "constructor")',
    );
    expect(await mutate((d) => (d.programs[0].pe = 'gpu7@h0' as never))).toBe(
      'malformed deploy: programs[0].pe names PE "gpu7@h0", which is not in the deploy\'s pes',
    );
  });

  it('never quotes more than 64 characters of a sender string', async () => {
    const long = 'A'.repeat(100_000);
    for (const reason of [
      await mutate((d) => (d.programs[0].pe = long as never)),
      await mutate((d) => (d.programs[0].allocations[0].buffers[0] = long.slice(0, 200) as never)),
      await mutate((d) => ((d.programs[0].allocations[0] as { depth: unknown }).depth = long)),
      reasonOf({ type: 'deploy', runId: long }),
    ]) {
      expect(reason.length).toBeLessThan(300);
      expect(reason).not.toContain('A'.repeat(65));
    }
    expect(quote('x'.repeat(70))).toBe(JSON.stringify(`${'x'.repeat(64)}...`));
  });

  it('bounds the slots of all allocations together', async () => {
    const reason = await mutate((d) => {
      for (const a of d.programs[0].allocations) a.depth = DEPLOY_SHAPE_LIMITS.maxDepth;
      const p = d.programs[0];
      d.programs = Array.from({ length: DEPLOY_SHAPE_LIMITS.maxPrograms }, () => p);
    });
    expect(reason).toMatch(
      new RegExp(`depth \\(256 slots for buffer .*\\) brings the deploy's buffer slots past ${DEPLOY_SHAPE_LIMITS.maxSlots} \\(maxSlots\\)$`),
    );
  });
});

/** Initial fills (delays) on a deploy's first program: a constant, a range, a source kernel's token. */
function withInitial(d: Deploy): Deploy {
  const out = structuredClone(d);
  const p = out.programs[0];
  const a = p.allocations[0];
  const id = a.buffers[0];
  const bytes = out.buffers[id].bytes;
  p.initial = [
    { buffer: id, slot: 0, value: 0 },
    { buffer: id, slot: a.depth - 1, offset: 4, bytes: bytes - 8, value: -2.5 },
    { buffer: id, slot: 0, kernel: 'matrix.produce', params: { width: 4, height: 2 }, port: 'out', token: 1 },
  ];
  return out;
}

describe('initial fills (delays) are bounded like allocations', () => {
  let good: Deploy;
  const base = async () => (good ??= withInitial((await deploysOf(structuredClone(piicDoc) as ProjectDocument, true))[0]));
  const mutate = async (fn: (d: Deploy) => void, limits = DEPLOY_SHAPE_LIMITS) => {
    const d = structuredClone(await base());
    fn(d);
    const r = checkDeploy(JSON.parse(JSON.stringify(d)), limits);
    return r.ok ? 'ok' : r.reason;
  };
  const fills = (d: Deploy) => d.programs[0].initial as unknown as Record<string, unknown>[];

  it('a constant, a range of a slot and a source kernel token pass', async () => {
    expect(await mutate(() => {})).toBe('ok');
    expect(await mutate((d) => delete d.programs[0].initial)).toBe('ok');
    expect(await mutate((d) => (d.programs[0].initial = []))).toBe('ok');
  });

  it('refuses a slot past the allocation, a buffer of no allocation of the program, and ranges past the buffer', async () => {
    const depth = (await base()).programs[0].allocations[0].depth;
    const bytes = (await base()).buffers[(await base()).programs[0].allocations[0].buffers[0]].bytes;
    expect(await mutate((d) => (fills(d)[2].slot = depth))).toBe(
      `malformed deploy: programs[0].initial[2].slot must be an integer from 0 to ${depth - 1} (got ${depth})`,
    );
    expect(await mutate((d) => (fills(d)[0].slot = -1))).toBe(
      `malformed deploy: programs[0].initial[0].slot must be an integer from 0 to ${depth - 1} (got -1)`,
    );
    const other = (await base()).programs[1].allocations[0].buffers[0];
    expect(await mutate((d) => (fills(d)[1].buffer = other))).toBe(
      `malformed deploy: programs[0].initial[1].buffer names buffer "${other}", which is not among "${(await base()).programs[0].pe}"'s allocations`,
    );
    expect(await mutate((d) => (fills(d)[1].buffer = 'bn_999999'))).toMatch(
      /^malformed deploy: programs\[0\]\.initial\[1\]\.buffer names buffer "bn_999999", which is not among/,
    );
    expect(await mutate((d) => (fills(d)[1].offset = -4))).toBe(
      `malformed deploy: programs[0].initial[1].offset must be an integer from 0 to ${bytes - 1} (got -4)`,
    );
    expect(await mutate((d) => (fills(d)[1].offset = bytes))).toBe(
      `malformed deploy: programs[0].initial[1].offset must be an integer from 0 to ${bytes - 1} (got ${bytes})`,
    );
    expect(await mutate((d) => (fills(d)[1].bytes = bytes))).toBe(
      `malformed deploy: programs[0].initial[1].bytes must be an integer from 1 to ${bytes - 4} (got ${bytes})`,
    );
    expect(await mutate((d) => (fills(d)[1].bytes = 0))).toBe(
      `malformed deploy: programs[0].initial[1].bytes must be an integer from 1 to ${bytes - 4} (got 0)`,
    );
    expect(await mutate((d) => (fills(d)[0].bytes = 2.5))).toBe(
      `malformed deploy: programs[0].initial[0].bytes must be an integer from 1 to ${bytes} (got 2.5)`,
    );
  });

  it("a range of slots (a delay's initial iterations) stays inside its allocation", async () => {
    const depth = (await base()).programs[0].allocations[0].depth;
    expect(await mutate((d) => (fills(d)[0].count = depth))).toBe('ok');
    expect(await mutate((d) => (fills(d)[0].count = depth + 1))).toBe(
      `malformed deploy: programs[0].initial[0].count must be an integer from 1 to ${depth} (got ${depth + 1})`,
    );
    expect(await mutate((d) => (fills(d)[1].count = 2))).toBe('malformed deploy: programs[0].initial[1].count must be an integer from 1 to 1 (got 2)');
    expect(await mutate((d) => (fills(d)[0].count = 0))).toBe(`malformed deploy: programs[0].initial[0].count must be an integer from 1 to ${depth} (got 0)`);
    expect(await mutate((d) => (fills(d)[0].count = 2 ** 31))).toBe(
      `malformed deploy: programs[0].initial[0].count must be an integer from 1 to ${depth} (got 2147483648)`,
    );
  });

  it("wants exactly one of value and kernel, a finite value in the buffer's element, a non-negative safe integer token", async () => {
    expect(await mutate((d) => (fills(d)[2].value = 1))).toBe('malformed deploy: programs[0].initial[2] has both a value and a kernel; a fill has exactly one');
    expect(await mutate((d) => delete fills(d)[0].value)).toBe(
      'malformed deploy: programs[0].initial[0] has neither a value nor a kernel; a fill has exactly one',
    );
    // NaN and Infinity travel as null in JSON
    expect(await mutate((d) => (fills(d)[1].value = Number.NaN))).toBe('malformed deploy: programs[0].initial[1].value must be a finite number (got null)');
    expect(await mutate((d) => (fills(d)[1].value = '1'))).toBe('malformed deploy: programs[0].initial[1].value must be a finite number (got text "1")');
    const id = (await base()).programs[0].allocations[0].buffers[0];
    expect(await mutate((d) => ((d.buffers[id].element = 'u8'), (fills(d)[1].value = 256)))).toBe(
      'malformed deploy: programs[0].initial[1].value must be an integer from 0 to 255 (got 256)',
    );
    expect(await mutate((d) => ((d.buffers[id].element = 'i32'), (fills(d)[1].value = 0.5)))).toBe(
      'malformed deploy: programs[0].initial[1].value must be an integer from -2147483648 to 2147483647 (got 0.5)',
    );
    expect(await mutate((d) => ((d.buffers[id].element = 'u32'), (fills(d)[1].value = 7)))).toBe('ok');
    expect(await mutate((d) => (fills(d)[2].token = -1))).toBe(
      'malformed deploy: programs[0].initial[2].token must be an integer from 0 to 9007199254740991 (got -1)',
    );
    expect(await mutate((d) => (fills(d)[2].token = 2 ** 53))).toBe(
      'malformed deploy: programs[0].initial[2].token must be an integer from 0 to 9007199254740991 (got 9007199254740992)',
    );
  });

  it("bounds the kernel id, the port and the params as a fire action's", async () => {
    expect(await mutate((d) => (fills(d)[2].kernel = 'k'.repeat(300)))).toBe(
      'malformed deploy: programs[0].initial[2].kernel is 300 characters long; at most 256 are allowed',
    );
    expect(await mutate((d) => (fills(d)[2].kernel = 7))).toBe('malformed deploy: programs[0].initial[2].kernel must be a non-empty string (got 7)');
    expect(await mutate((d) => (fills(d)[2].port = ''))).toBe('malformed deploy: programs[0].initial[2].port must be a non-empty string (got text "")');
    expect(await mutate((d) => (fills(d)[2].params = { width: { deep: 1 } }))).toBe(
      'malformed deploy: programs[0].initial[2].params["width"] must be a number, a boolean or text (got an object)',
    );
    expect(await mutate((d) => (fills(d)[2].params = 'width=4'))).toBe(
      'malformed deploy: programs[0].initial[2].params must be an object (got text "width=4")',
    );
    expect(await mutate((d) => (fills(d)[2].params = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, i]))))).toBe(
      'malformed deploy: programs[0].initial[2].params has 300 entries; at most 256 are allowed',
    );
    expect(await mutate((d) => (fills(d)[2].params = { source: 'x'.repeat(2 ** 20 + 1) }))).toBe(
      'malformed deploy: programs[0].initial[2].params["source"] is 1048577 characters long; at most 1048576 are allowed',
    );
  });

  it('bounds the list, per program and over the deploy (maxInitial)', async () => {
    expect(await mutate((d) => ((d.programs[0] as { initial: unknown }).initial = { 0: {} }))).toBe(
      'malformed deploy: programs[0].initial must be a list (got an object)',
    );
    expect(await mutate((d) => ((d.programs[0].initial as unknown[])[1] = 'zero'))).toBe(
      'malformed deploy: programs[0].initial[1] must be an object (got text "zero")',
    );
    const limits = { ...DEPLOY_SHAPE_LIMITS, maxInitial: 4 };
    expect(await mutate((d) => d.programs[0].initial!.push(...d.programs[0].initial!), limits)).toBe(
      'malformed deploy: programs[0].initial has 6 entries; at most 4 are allowed',
    );
    expect(
      await mutate((d) => {
        const q = d.programs[1];
        q.initial = [
          { buffer: q.allocations[0].buffers[0], slot: 0, value: 1 },
          { buffer: q.allocations[0].buffers[0], slot: 0, value: 1 },
        ];
      }, limits),
    ).toBe("malformed deploy: programs[1].initial brings the deploy's initial fills past 4 (maxInitial)");
  });
});

describe('the check is total', () => {
  it('gives ok or a reason for any JSON value and any mutation of a valid deploy, never throwing', async () => {
    // One more deploy carries initial fills (delays), so that mutations reach them too.
    const valid = await deploysOf(structuredClone(piicDoc) as ProjectDocument, true);
    valid.push(withInitial(valid[0]));
    /** Every path in a JSON value, to one of which a mutation applies. */
    const paths = (v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []) => {
      out.push(at);
      if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) paths(x, [...at, Array.isArray(v) ? Number(k) : k], out);
      return out;
    };
    const all = valid.map((d) => paths(d).filter((p) => p.length));
    const mutation = fc.record({
      which: fc.nat({ max: valid.length - 1 }),
      pick: fc.nat(),
      how: fc.constantFrom('replace', 'delete', 'wrap'),
      value: fc.jsonValue({ maxDepth: 3 }),
    });
    let refused = 0;
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.anything(),
          mutation.map((m) => ({ mutation: m })),
        ),
        (input) => {
          let m: unknown = input;
          if (input && typeof input === 'object' && 'mutation' in input && Object.keys(input).length === 1) {
            const { which, pick, how, value } = (input as { mutation: { which: number; pick: number; how: string; value: unknown } }).mutation;
            const d = structuredClone(valid[which]) as unknown as Record<string | number, unknown>;
            const path = all[which][pick % all[which].length];
            let parent = d;
            for (const s of path.slice(0, -1)) parent = parent[s] as Record<string | number, unknown>;
            const last = path[path.length - 1];
            if (how === 'delete') delete parent[last];
            else parent[last] = how === 'wrap' ? [parent[last]] : value;
            m = d;
          }
          const r = checkDeploy(m);
          if (!r.ok) {
            refused++;
            expect(r.reason).toMatch(/^malformed deploy/);
            expect(r.reason.length).toBeLessThan(1000);
          }
        },
      ),
      { numRuns: 3000, seed: 17 },
    );
    expect(refused).toBeGreaterThan(1000);
  });
});
