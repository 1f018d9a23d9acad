import { describe, expect, it } from 'vitest';
import { formatDiagnostic, type ProjectDocument } from '@pipeloom/core';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, piic, pipeloomAsync } from './testing/fixtures.js';

// Capability requirements against real agents on loopback: each PE reports its capabilities at
// login (the CPU its cores and memory; the GPU PE its WebGPU adapter, here Mesa's llvmpipe,
// reported as software), and a node's `requires` is checked against the PE it is mapped onto
// before anything is deployed.

const agentsOf = agentsForSuite(['h0', 'h1']);

function withRequires(requires: Record<string, string[]>): ProjectDocument {
  const doc = piic({ size: 64, iterations: 4 });
  for (const n of doc.app.nodes) if (requires[n.id]) n.requires = requires[n.id];
  return doc;
}

describe('requires, against what the agents report', () => {
  it('each PE reports its capabilities and the machine at login: the CPU its cores, the GPU its adapter (llvmpipe: software, and why)', async () => {
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const [h0] = c.agents;
      expect(h0.machine?.id).toMatch(/^[0-9a-f]{16}$/);
      const cpu = h0.pes.find((p) => p.kind === 'cpu')!.capabilities!;
      expect(cpu).toMatchObject({ kind: 'cpu', cores: expect.any(Number), memory: expect.any(Number) });
      const gpu = h0.pes.find((p) => p.kind === 'gpu')!.capabilities!;
      expect(gpu).toMatchObject({
        kind: 'gpu',
        backend: expect.any(String),
        featureLevel: expect.stringMatching(/^(compatibility|core)$/),
        software: expect.any(Boolean),
      });
      expect(gpu.limits?.maxStorageBufferBindingSize).toBeGreaterThan(0);
      expect(gpu.softwareWhy).toBeTruthy();
    } finally {
      c.close();
    }
  });

  it('a mapping that meets every requirement runs; one onto a PE failing a clause is refused before deploy, naming the node, the PE, the clause and what the PE reports', async () => {
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const software = c.agents[0].pes.find((p) => p.kind === 'gpu')!.capabilities!.software;
      // I1 on gpu0@h0: kind=gpu holds; C on cpu@h1: cores>=1 holds.
      const ok = compileOrThrow(withRequires({ I1: ['kind=gpu', 'limit.maxStorageBufferBindingSize>=16KiB'], C: ['kind=cpu', 'cores>=1'] }), true);
      expect(c.check(ok).map(formatDiagnostic)).toEqual([]);
      const r = await c.run(ok, { iterations: 4 }).done;
      expect(r.ok, r.failure?.message).toBe(true);
      // A software adapter where hardware is required (in CI the only adapter is llvmpipe).
      const hardware = compileOrThrow(withRequires({ I1: [`software=${!software}`] }), true);
      const problems = c.check(hardware).map(formatDiagnostic);
      expect(problems).toEqual([
        expect.stringMatching(new RegExp(`^mapping\\.I1: node "I1" requires software=${!software}, but gpu0@h0 on agent h0 fails it: software is ${software}`)),
      ]);
      const refused = await c.run(hardware, { iterations: 4 }).done;
      expect(refused.ok).toBe(false);
      expect(refused.failure?.message).toContain('requires software=');
      // A limit no adapter has.
      const huge = compileOrThrow(withRequires({ I2: ['limit.maxComputeWorkgroupSizeX>=1000000'] }), true);
      expect(c.check(huge).map(formatDiagnostic)[0]).toMatch(
        /^mapping\.I2: node "I2" requires limit\.maxComputeWorkgroupSizeX>=1000000, but gpu0@h1 on agent h1 fails it: limit\.maxComputeWorkgroupSizeX is \d+/,
      );
    } finally {
      c.close();
    }
  });
});

describe('pipeloom agents', () => {
  it("lists the agents' PEs with their capabilities and, with --match, which meet the clauses (exit 1 when none does)", async () => {
    const urls = agentsOf()
      .agents.map((a) => a.url)
      .join(',');
    const r = await pipeloomAsync('agents', '--agents', urls, '--token', agentsOf().token, '--match', 'kind=gpu', '--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      agents: { host: string; pes: { id: string; matches: boolean; reason?: string; capabilities: { kind: string } }[] }[];
    };
    expect(out.agents.map((a) => a.host).sort()).toEqual(['h0', 'h1']);
    for (const pe of out.agents.flatMap((a) => a.pes)) {
      expect(pe.matches).toBe(pe.capabilities.kind === 'gpu');
      if (!pe.matches) expect(pe.reason).toBe('fails kind=gpu: kind is cpu');
    }
    const none = await pipeloomAsync('agents', '--agents', urls, '--token', agentsOf().token, '--match', 'limit.maxComputeWorkgroupSizeX>=1000000');
    expect(none.status).toBe(1);
    expect(none.stdout).toMatch(/gpu0@h0 .* fails limit\.maxComputeWorkgroupSizeX>=1000000: limit\.maxComputeWorkgroupSizeX is \d+/);
  });

  it('a clause it cannot read is named with the fix, exit 2, before any agent is asked', async () => {
    const r = await pipeloomAsync('agents', '--agents', 'ws://127.0.0.1:1', '--token', 't', '--match', 'knd=gpu');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--match[0]: unknown key "knd" (did you mean "kind"?)');
  });
});
