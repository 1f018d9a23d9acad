import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type PeReport } from '@pipeloom/core/coordinator/protocol';
import { root } from './testing/fixtures.js';

// The files in deploy/ exercised for real: each one's own command line (the systemd unit's
// ExecStart, the image's ENTRYPOINT + CMD, the DaemonSet's args on that image) starts an agent
// from this checkout, and a client authenticates and reads its PE report. The image's install
// step is replayed in a temp dir (its COPY lines and its `npm ci`), so a file the image lacks
// or a dependency it does not install shows here. What cannot run here: the image's apt-get
// (the test machine has the same Mesa packages from setup), a Docker daemon, a cluster.

const TOKEN = 'deploy-test-token';
const children: ChildProcess[] = [];
let tmp: string;
let cert: string;
let key: string;

beforeAll(() => {
  tmp = mkdtempSync(join(os.tmpdir(), 'pipeloom-deploy-'));
  cert = join(tmp, 'cert.pem');
  key = join(tmp, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
});

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

const read = (path: string) => readFileSync(join(root, path), 'utf8');

/**
 * Starts a deploy file's command line here: the port becomes 0 (a free one; the file's own is
 * checked separately) and the file's paths are mapped onto this machine.
 */
function start(argv: string[], opts: { cwd: string; env: Record<string, string>; paths?: Record<string, string> }): Promise<{ url: string; child: ChildProcess }> {
  const args = argv.map((a, i) => (argv[i - 1] === '--port' ? '0' : (opts.paths?.[a] ?? a)));
  const [cmd, ...rest] = args;
  const child = spawn(cmd, rest, { cwd: opts.cwd, env: { PATH: process.env.PATH ?? '', ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const err: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => err.push(l));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (line) => {
      const m = /^listening (\S+)/.exec(line);
      if (m) resolve({ url: m[1].replace('0.0.0.0', '127.0.0.1'), child });
      else reject(new Error(`unexpected first line: ${line}`));
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code}):\n${err.join('\n')}`)));
  });
}

/** Authenticates with the token and returns the agent's PE report. */
function welcome(url: string, ca?: string): Promise<{ host: string; pes: PeReport[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ca ? { ca: readFileSync(ca) } : {});
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION, token: TOKEN })));
    ws.on('message', (d) => {
      resolve(JSON.parse(String(d)));
      ws.close();
    });
    ws.on('error', reject);
  });
}

function expectServes(report: { host: string; pes: PeReport[] }, host: string) {
  expect(report.host).toBe(host);
  expect(report.pes.map((p) => p.id)).toContain(`cpu@${host}`);
  expect(report.pes.some((p) => p.kind === 'gpu')).toBe(true);
}

/** `${VAR}` (systemd) or `$(VAR)` (Kubernetes) replaced from env. */
const expand = (s: string, env: Record<string, string>) => s.replace(/\$\{(\w+)\}|\$\((\w+)\)/g, (_, a, b) => env[a ?? b] ?? '');

describe('deploy/pipeloom-agent.service', () => {
  const text = read('deploy/pipeloom-agent.service');
  const values = (k: string) => [...text.matchAll(new RegExp(`^${k}=(.*)$`, 'gm'))].map((m) => m[1].trim());

  it('passes systemd-analyze verify', () => {
    const r = spawnSync('systemd-analyze', ['verify', join(root, 'deploy/pipeloom-agent.service')], { encoding: 'utf8' });
    expect(r.error, 'systemd-analyze is missing: apt-get install systemd').toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
  });

  it('its ExecStart, with its environment, serves this host over wss', async () => {
    const env: Record<string, string> = { PIPELOOM_TOKEN: TOKEN, PIPELOOM_HOST_ID: 'h7' };
    for (const e of values('Environment')) {
      const [k, v] = e.split('=');
      env[k] = v;
    }
    const argv = expand(values('ExecStart')[0], env).split(/\s+/);
    expect(argv[0]).toBe('/usr/bin/node');
    expect(values('WorkingDirectory')[0]).toBe('/opt/pipeloom');
    expect(values('Restart')[0]).toBe('on-failure');
    const { url } = await start(argv, { cwd: root, env, paths: { '/usr/bin/node': process.execPath, '/etc/pipeloom/tls/cert.pem': cert, '/etc/pipeloom/tls/key.pem': key } });
    expect(url).toMatch(/^wss:/);
    expectServes(await welcome(url, cert), 'h7');
  });
});

/** The Dockerfile's instructions, continuation lines joined. */
function dockerfile(): { op: string; arg: string }[] {
  return read('deploy/Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op, arg: rest.join(' ') };
    });
}

describe('deploy/Dockerfile and deploy/daemonset.yaml', () => {
  const steps = dockerfile();
  const one = (op: string) => steps.filter((s) => s.op === op).map((s) => s.arg);
  const entrypoint = JSON.parse(one('ENTRYPOINT')[0]) as string[];
  const cmd = JSON.parse(one('CMD')[0]) as string[];
  const imageEnv: Record<string, string> = {};
  for (const e of one('ENV')) for (const kv of e.split(/\s+/)) imageEnv[kv.split('=')[0]] = kv.split('=')[1];
  let image: string;

  beforeAll(() => {
    // Replays the image's build: its COPY lines into WORKDIR, then its npm install step.
    image = join(tmp, 'image');
    mkdirSync(image);
    for (const step of steps) {
      if (step.op === 'COPY') {
        const parts = step.arg.split(/\s+/);
        const dst = parts.pop()!;
        for (const src of parts) {
          const to = dst.endsWith('/') || parts.length > 1 || dst === '.' || dst === './' ? join(image, dst, src.split('/').pop()!) : join(image, dst);
          mkdirSync(dirname(to), { recursive: true });
          cpSync(join(root, src), to, { recursive: true });
        }
      } else if (step.op === 'RUN' && step.arg.startsWith('npm ')) {
        const r = spawnSync('npm', [...step.arg.split(/\s+/).slice(1), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: image, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      }
    }
  }, 120_000);

  it('the image built from it serves this host: its ENTRYPOINT + CMD', async () => {
    expect(one('WORKDIR')).toEqual(['/opt/pipeloom']);
    expect(one('USER')).toEqual(['node']);
    // The port it listens on is the one it exposes.
    expect(entrypoint[entrypoint.indexOf('--port') + 1]).toBe(one('EXPOSE')[0]);
    const { url } = await start([...entrypoint, ...cmd], { cwd: image, env: { ...imageEnv, PIPELOOM_TOKEN: TOKEN, TMPDIR: mkdtempSync(join(tmp, 't-')) }, paths: { node: process.execPath } });
    expectServes(await welcome(url), 'h0');
  });

  it('the DaemonSet runs that image with its args and env and agrees with it on port, token, TLS and GPUs', async () => {
    const ds = parseYaml(read('deploy/daemonset.yaml'));
    expect(ds.kind).toBe('DaemonSet');
    const pod = ds.spec.template.spec;
    const [c] = pod.containers;
    expect(pod.hostNetwork).toBe(true);
    expect(c.ports[0].containerPort).toBe(Number(one('EXPOSE')[0]));
    expect(c.ports[0].hostPort).toBe(c.ports[0].containerPort);
    // Every GPU of the node: no per-pod GPU limit, the NVIDIA runtime showing all devices.
    expect(c.resources?.limits?.['nvidia.com/gpu']).toBeUndefined();
    expect(pod.runtimeClassName).toBe('nvidia');
    const env: Record<string, string> = { NODE_NAME: 'gpu-node-3' };
    for (const e of c.env) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.secretKeyRef) env[e.name] = TOKEN;
    }
    expect(env.NVIDIA_VISIBLE_DEVICES).toBe('all');
    expect(c.env.find((e: { name: string }) => e.name === 'PIPELOOM_TOKEN')?.valueFrom?.secretKeyRef).toBeTruthy();
    const mounts = new Map<string, string>(c.volumeMounts.map((m: { name: string; mountPath: string }) => [m.mountPath, m.name]));
    // A read-only root filesystem needs a writable temp dir (tsx's cache).
    if (c.securityContext?.readOnlyRootFilesystem) expect(pod.volumes.find((v: { name: string }) => v.name === mounts.get('/tmp'))?.emptyDir).toBeTruthy();
    expect(pod.volumes.find((v: { name: string }) => v.name === mounts.get('/tls'))?.secret?.secretName).toBe('pipeloom-agent-tls');
    const args = (c.args as string[]).map((a) => expand(a, env));
    const { url } = await start([...entrypoint, ...args], {
      cwd: image,
      env: { ...imageEnv, ...env, TMPDIR: mkdtempSync(join(tmp, 't-')) },
      paths: { node: process.execPath, '/tls/tls.crt': cert, '/tls/tls.key': key },
    });
    expectServes(await welcome(url, cert), 'gpu-node-3');
  });
});
