import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { pipeloomBin, spawnLocalAgents } from '../local/spawn.js';
import { pipeloomAsync as pipeloom, root } from '../testing/fixtures.js';

// The CLI as a person or a script meets it, each case a real process: --version, help, the
// usage error, Ctrl-C, npx, JSON units, the progress lines and Dawn's start-up notices. In a
// test run, the CLI built for it (npx runs the checkout's).

const BIN = pipeloomBin();
const version = (JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')) as { version: string }).version;
const DAWN_NOTICE = /artificially reduced/;

/** Resolves with the first line of `lines` that matches, rejects when the stream ends first. */
function lineMatching(lines: ReturnType<typeof createInterface>, re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const onLine = (line: string) => {
      const m = re.exec(line);
      if (!m) return;
      lines.off('line', onLine);
      resolve(m);
    };
    lines.on('line', onLine);
    lines.once('close', () => reject(new Error(`the stream ended before a line matching ${re}`)));
  });
}

/** True when nothing listens on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

describe('pipeloom CLI conventions', () => {
  it('--version prints "pipeloom VERSION" alone on stdout and exits 0', async () => {
    const r = await pipeloom('--version');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`pipeloom ${version}\n`);
    expect(r.stderr).toBe('');
  });

  it('help CMD prints what CMD --help prints, exit 0; help of an unknown command is a usage error, exit 2', async () => {
    const help = await pipeloom('help', 'run');
    expect(help.status).toBe(0);
    expect(help.stdout).toBe((await pipeloom('run', '--help')).stdout);
    expect(help.stdout).toMatch(/^usage: pipeloom run FILE/);
    const bare = await pipeloom('help');
    expect(bare.status).toBe(0);
    expect(bare.stdout).toContain('pipeloom help <command>');
    const unknown = await pipeloom('help', 'nope');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^pipeloom: unknown command "nope"/);
  });

  it('bare pipeloom prints the usage on stderr, nothing on stdout, and exits 2', async () => {
    const r = await pipeloom();
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^usage: pipeloom <command> \[options\]/);
  });

  it("npx pipeloom (the README's form) prints only the command's own output on stdout, so it pipes", async () => {
    const r = spawnSync('npx', ['--no', 'pipeloom', 'compile', 'examples/piic.json', '--format', 'json'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).schedule).toEqual({ P: 0, I1: 1, I2: 2, C: 3 });
  });

  it('Ctrl-C during a run stops the run and its local agents, then exits 130', async () => {
    const child = spawn(process.execPath, [BIN, 'run', 'examples/piic.json', '--iterations', '100000'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const stdout: string[] = [];
    child.stdout.on('data', (d) => stdout.push(String(d)));
    const stderr: string[] = [];
    const lines = createInterface({ input: child.stderr });
    lines.on('line', (l) => stderr.push(l));
    try {
      const started = await lineMatching(lines, /^started 2 local agent\(s\): (.*)$/);
      const ports = [...started[1].matchAll(/ws:\/\/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
      expect(ports).toHaveLength(2);
      // The run is going once the first progress line is out.
      await lineMatching(lines, /^progress: /);
      child.kill('SIGINT');
      expect(await exited, stderr.join('\n')).toBe(130);
      expect(stderr.join('\n')).toContain('pipeloom run: interrupted; stopping the run and the local agents');
      expect(stdout.join('')).toMatch(/run interrupted at cycle \d+ of 100\d\d\d/);
      // The command waited for its agents: nothing listens on their ports any more.
      for (const port of ports) expect(await refused(port)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('run --format json gives times in seconds (barrierPerCycle too); without a terminal the final progress line is printed once', async () => {
    const r = await pipeloom('run', 'examples/piic.json', '--iterations', '4', '--sync', 'barrier', '--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { barrierPerCycle: Record<string, number>; cycleTime: number; seconds: number };
    expect(Object.keys(summary.barrierPerCycle).sort()).toEqual(['h0', 'h1']);
    // In seconds, as the run's own duration: a barrier per cycle is a part of the run, so it is
    // shorter than the whole (in milliseconds it would be a thousand times larger). No bound in
    // wall-clock terms: a loaded machine stretches both.
    for (const t of Object.values(summary.barrierPerCycle)) {
      expect(t).toBeGreaterThan(0);
      expect(t).toBeLessThan(summary.seconds);
    }
    expect(summary.cycleTime).toBeLessThan(summary.seconds);
    const finals = r.stderr.split('\n').filter((l) => /^progress: 100%/.test(l));
    expect(finals, r.stderr).toHaveLength(1);
    expect(finals[0]).toMatch(/eta 0\.0 s$/);
  });

  it('an agent prints Dawn\'s "artificially reduced" notices once at start, and local agents\' reach the command once in all', async () => {
    const agent = spawn(process.execPath, [BIN, 'agent', '--name', 'h0', '--port', '0', '--token', 'conventions-token-0123456789', '--emulate-gpus', '2'], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const lines = createInterface({ input: agent.stderr });
      const seen: string[] = [];
      lines.on('line', (l) => seen.push(l));
      // Its last start-up line names the second GPU PE; the notices come before it.
      await lineMatching(lines, /^\[h0\] gpu1@h0: /);
      const notices = seen.filter((l) => DAWN_NOTICE.test(l));
      expect(new Set(notices).size).toBe(notices.length);
    } finally {
      agent.kill('SIGTERM');
    }
    const log: string[] = [];
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 }, log: (host, line) => log.push(line) });
    await local.stop();
    const notices = log.filter((l) => DAWN_NOTICE.test(l));
    expect(new Set(notices).size).toBe(notices.length);
  });
});
