import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type PeReport } from '@pipeloom/core';
import { exited, stopAgent } from './local/spawn.js';
import { root } from './testing/fixtures.js';
import { selfSignedCert } from './testing/tls.js';

// The files in deploy/ exercised for real: each one's own command line (the systemd unit's
// ExecStart, the image's ENTRYPOINT + CMD, the DaemonSet's args on that image) starts an agent
// from this checkout, and a client authenticates and reads its PE report. The image's install
// step is replayed in a temp dir (its COPY lines and its npm install of the tarballs that
// scripts/pack.mjs makes, as its build stage does), so a file the image lacks or a dependency
// it does not install shows here, and the agent runs as built JavaScript. The health probes
// (the image's HEALTHCHECK, the DaemonSet's httpGet probes) run against those agents. What cannot run here: the image's
// apt-get (the test machine has the same Mesa packages from setup), a Docker daemon, a cluster,
// systemd as PID 1 (the unit's sandbox is rated by `systemd-analyze security`, and strace shows
// the agent's system calls and socket families fit the unit's filters).

const TOKEN = 'deploy-test-token-0123456789';
const children: ChildProcess[] = [];
let tmp: string;
let cert: string;
let key: string;

beforeAll(() => {
  tmp = mkdtempSync(join(os.tmpdir(), 'pipeloom-deploy-'));
  ({ cert, key } = selfSignedCert(tmp));
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
function start(
  argv: string[],
  opts: { cwd: string; env: Record<string, string>; paths?: Record<string, string> },
): Promise<{ url: string; child: ChildProcess }> {
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
    // 'close', not 'exit': by then every line of stderr has been read.
    child.once('close', (code) => reject(new Error(`${args.join(' ')} exited (${code}):\n${err.join('\n')}`)));
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
  // Its first core (a document's cpu@host).
  expect(report.pes.map((p) => p.id)).toContain(`cpu0@${host}`);
  expect(report.pes.some((p) => p.kind === 'gpu')).toBe(true);
}

/** `${VAR}` (systemd) or `$(VAR)` (Kubernetes) replaced from env. */
const expand = (s: string, env: Record<string, string>) => s.replace(/\$\{(\w+)\}|\$\((\w+)\)/g, (_, a, b) => env[a ?? b] ?? '');

/** A command's exit code, once it has exited. */
function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(cmd, args, { cwd: opts.cwd ?? root, env: { PATH: process.env.PATH ?? '', ...opts.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

/** GET over https without checking the certificate, as the kubelet's HTTPS probes do. */
function probe(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    httpsGet(url, { rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    }).on('error', reject);
  });
}

const port = (url: string) => new URL(url).port;

describe('deploy/pipeloom-agent.service', () => {
  const text = read('deploy/pipeloom-agent.service');
  const values = (k: string) => [...text.matchAll(new RegExp(`^${k}=(.*)$`, 'gm'))].map((m) => m[1].trim());
  const unit = join(root, 'deploy/pipeloom-agent.service');
  let creds: string;

  beforeAll(() => {
    // LoadCredential=token:/etc/pipeloom/token: systemd copies the file into the service's
    // credentials directory; here a directory holding the token stands in for it.
    creds = join(tmp, 'credentials');
    mkdirSync(creds);
    writeFileSync(join(creds, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  });

  /** The unit's ExecStart as systemd would run it, its paths mapped onto this machine. */
  function execStart(env: Record<string, string>) {
    const all: Record<string, string> = { CREDENTIALS_DIRECTORY: creds, ...env };
    for (const e of values('Environment')) {
      const [k, v] = e.split('=');
      all[k] = v;
    }
    // systemd splits first: `${VAR}` as a word of its own is one argument, empty if VAR is unset.
    const argv = values('ExecStart')[0]
      .split(/\s+/)
      .map((w) => expand(w, all));
    const paths = { '/usr/bin/node': process.execPath, '/etc/pipeloom/tls/cert.pem': cert, '/etc/pipeloom/tls/key.pem': key };
    return { argv, env: all, paths };
  }

  it('passes systemd-analyze verify', () => {
    const r = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    expect(r.error, 'systemd-analyze is missing: apt-get install systemd').toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.trim()).toBe('');
  });

  it('systemd-analyze security rates its sandbox under 5', () => {
    const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--no-pager', unit], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const level = /Overall exposure level for pipeloom-agent\.service: ([\d.]+)/.exec(r.stdout);
    expect(level, r.stdout).not.toBeNull();
    expect(Number(level![1])).toBeLessThan(5);
  });

  it('its ExecStart, with its environment and the token credential, serves this host over wss', async () => {
    expect(values('ExecStart')[0]).not.toMatch(/--token(\s|=)/); // a token on the command line shows in ps
    expect(values('LoadCredential')).toEqual(['token:/etc/pipeloom/token']);
    expect(values('WorkingDirectory')[0]).toBe('/opt/pipeloom');
    expect(values('Restart')[0]).toBe('on-failure');
    const { argv, env, paths } = execStart({ PIPELOOM_HOST_ID: 'h7' });
    expect(argv[0]).toBe('/usr/bin/node');
    const { url } = await start(argv, { cwd: root, env, paths });
    expect(url).toMatch(/^wss:/);
    expectServes(await welcome(url, cert), 'h7');
  });

  it('without PIPELOOM_HOST_ID or the TLS files, the agent refuses to start and names what is missing', async () => {
    const noHost = execStart({});
    await expect(start(noHost.argv, { cwd: root, env: noHost.env, paths: noHost.paths })).rejects.toThrow(
      /--name is empty.*PIPELOOM_HOST_ID=\.\.\. in \/etc\/pipeloom\/agent\.env/,
    );
    const noCert = execStart({ PIPELOOM_HOST_ID: 'h7' });
    const missing = join(tmp, 'absent', 'cert.pem');
    await expect(start(noCert.argv, { cwd: root, env: noCert.env, paths: { ...noCert.paths, '/etc/pipeloom/tls/cert.pem': missing } })).rejects.toThrow(
      new RegExp(`--cert ${missing}: no such file\\. .*openssl req -x509`),
    );
  });

  // The sandbox itself needs systemd as PID 1; what it would refuse can be seen with strace.
  it('the agent serving a client makes only system calls and sockets the unit allows (strace)', async () => {
    const out = join(tmp, 'strace');
    const { argv, env, paths } = execStart({ PIPELOOM_HOST_ID: 'h7' });
    const { url, child } = await start(['strace', '-f', '-qq', '-o', out, ...argv], { cwd: root, env, paths: { ...paths, '/usr/bin/node': process.execPath } });
    try {
      expectServes(await welcome(url, cert), 'h7');
      expect((await probe(url.replace(/^wss:/, 'https:') + '/healthz')).status).toBe(200);
    } finally {
      // SIGTERM to the agent (the first pid in the trace), not to strace, which would detach and
      // leave it running past the test.
      process.kill(Number(/^\d+/.exec(readFileSync(out, 'utf8'))![0]), 'SIGTERM');
      await exited(child);
    }
    const trace = readFileSync(out, 'utf8');
    const calls = new Set([...trace.matchAll(/^\d+ +([a-z0-9_]+)\(/gm)].map((m) => m[1]));
    const families = new Set([...trace.matchAll(/socket\((AF_\w+)/g)].map((m) => m[1]));
    // The unit's allow list (groups expanded by systemd-analyze), less its ~ lines.
    const expandSet = (names: string[]): Set<string> => {
      const out = new Set<string>();
      for (const n of names) {
        if (!n.startsWith('@')) out.add(n);
        else
          for (const line of execFileSync('systemd-analyze', ['syscall-filter', n], { encoding: 'utf8' }).split('\n').slice(1)) {
            const name = line.trim();
            if (name && !name.startsWith('#')) for (const x of expandSet([name])) out.add(x);
          }
      }
      return out;
    };
    const filters = values('SystemCallFilter');
    const allowed = expandSet(filters.filter((f) => !f.startsWith('~')).flatMap((f) => f.split(/\s+/)));
    for (const x of expandSet(filters.filter((f) => f.startsWith('~')).flatMap((f) => f.slice(1).split(/\s+/)))) allowed.delete(x);
    expect(calls.size).toBeGreaterThan(20);
    expect([...calls].filter((c) => !allowed.has(c))).toEqual([]);
    const allowedFamilies = values('RestrictAddressFamilies')[0].split(/\s+/);
    expect([...families].filter((f) => !allowedFamilies.includes(f))).toEqual([]);
  }, 120_000);
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
  // HEALTHCHECK [options] CMD ["node", "-e", "..."]: the exec form, run as the image would.
  const healthcheck = JSON.parse(/CMD\s+(\[.*\])$/.exec(one('HEALTHCHECK')[0] ?? '')?.[1] ?? 'null') as string[] | null;
  /** The HEALTHCHECK's exit code against an agent on `agentPort` (the image's own port is 7070). */
  const healthcheckExit = async (agentPort: string) => {
    const [cmd, ...args] = healthcheck!;
    expect(cmd).toBe('node');
    return (
      await run(
        process.execPath,
        args.map((a) => a.replaceAll(`127.0.0.1:${one('EXPOSE')[0]}/`, `127.0.0.1:${agentPort}/`)),
        { cwd: image },
      )
    ).code;
  };
  const imageEnv: Record<string, string> = {};
  for (const e of one('ENV')) for (const kv of e.split(/\s+/)) imageEnv[kv.split('=')[0]] = kv.split('=')[1];
  let image: string;

  beforeAll(() => {
    // Replays the image's final stage: the build stage's tarballs are scripts/pack.mjs's (what
    // its RUN does), its COPY lines go into WORKDIR, then its npm install of the tarballs.
    image = join(tmp, 'image');
    mkdirSync(image);
    const from = steps.map((s) => s.op).lastIndexOf('FROM');
    const mapped: Record<string, string> = {};
    for (const step of steps.slice(from + 1)) {
      if (step.op === 'COPY' && step.arg.startsWith('--from=build ')) {
        const [src, dst] = step.arg.split(/\s+/).slice(1);
        expect(src).toBe('/packages/');
        mapped[dst.replace(/\/$/, '')] = join(tmp, 'packages');
        execFileSync(process.execPath, [join(root, 'scripts/pack.mjs'), '--out', join(tmp, 'packages')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      } else if (step.op === 'COPY') {
        const parts = step.arg.split(/\s+/);
        const dst = parts.pop()!;
        for (const src of parts) {
          const to = dst.endsWith('/') || parts.length > 1 || dst === '.' || dst === './' ? join(image, dst, src.split('/').pop()!) : join(image, dst);
          mkdirSync(dirname(to), { recursive: true });
          cpSync(join(root, src), to, { recursive: true });
        }
      } else if (step.op === 'RUN' && step.arg.startsWith('npm ')) {
        // The install itself; what follows `&&` tidies the image.
        const args = step.arg
          .split('&&')[0]
          .trim()
          .split(/\s+/)
          .slice(1)
          .flatMap((a) => {
            const dir = Object.keys(mapped).find((d) => a.startsWith(`${d}/`));
            if (!dir || !a.endsWith('/*.tgz')) return [a];
            return readdirSync(mapped[dir])
              .filter((f) => f.endsWith('.tgz'))
              .map((f) => join(mapped[dir], f));
          });
        // --prefix: the image's WORKDIR has no package.json above it; a temp dir might.
        const r = spawnSync('npm', [...args, '--prefix', image, '--prefer-offline'], { cwd: image, encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      }
    }
  }, 300_000);

  it('the image built from it serves this host: its ENTRYPOINT + CMD', async () => {
    // The image's own (the last; the build stage's comes first).
    expect(one('WORKDIR').at(-1)).toBe('/opt/pipeloom');
    expect(one('USER')).toEqual(['node']);
    // The port it listens on is the one it exposes.
    expect(entrypoint[entrypoint.indexOf('--port') + 1]).toBe(one('EXPOSE')[0]);
    const { url } = await start([...entrypoint, ...cmd], {
      cwd: image,
      env: { ...imageEnv, PIPELOOM_TOKEN: TOKEN, TMPDIR: mkdtempSync(join(tmp, 't-')) },
      paths: { node: process.execPath },
    });
    expectServes(await welcome(url), 'h0');
  });

  it('its HEALTHCHECK passes against the agent the image starts (ws and wss) and fails once that agent has stopped', async () => {
    expect(healthcheck, 'deploy/Dockerfile has no HEALTHCHECK CMD ["node", "-e", ...]').not.toBeNull();
    expect(healthcheck!.join(' ')).toContain(`127.0.0.1:${one('EXPOSE')[0]}/healthz`);
    expect(one('HEALTHCHECK')[0]).toMatch(/--timeout=\d+s/);
    const env = { ...imageEnv, PIPELOOM_TOKEN: TOKEN, TMPDIR: mkdtempSync(join(tmp, 't-')) };
    const plain = await start([...entrypoint, ...cmd], { cwd: image, env, paths: { node: process.execPath } });
    const tls = await start([...entrypoint, ...cmd, '--cert', cert, '--key', key], { cwd: image, env, paths: { node: process.execPath } });
    expect(tls.url).toMatch(/^wss:/);
    expect(await healthcheckExit(port(plain.url))).toBe(0);
    expect(await healthcheckExit(port(tls.url))).toBe(0);
    await stopAgent(plain.child);
    await stopAgent(tls.child);
    expect(await healthcheckExit(port(plain.url))).toBe(1);
    expect(await healthcheckExit(port(tls.url))).toBe(1);
  });

  it('the DaemonSet runs that image with its args and env and agrees with it on port, token, TLS and GPUs', async () => {
    const [ns, ds] = parseAllDocuments(read('deploy/daemonset.yaml')).map((d) => d.toJS());
    expect(ds.kind).toBe('DaemonSet');
    // hostNetwork is beyond the "baseline" Pod Security level: the agent's own namespace allows it.
    expect(ns.kind).toBe('Namespace');
    expect(ns.metadata.name).toBe(ds.metadata.namespace);
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
    const pod = ds.spec.template.spec;
    const [c] = pod.containers;
    expect(pod.hostNetwork).toBe(true);
    expect(c.ports[0].containerPort).toBe(Number(one('EXPOSE')[0]));
    expect(c.ports[0].hostPort).toBe(c.ports[0].containerPort);
    // Nodes reserved for Pipeloom: its own label and a toleration of its own taint.
    expect(pod.nodeSelector).toEqual({ 'pipeloom.dev/agent': 'true' });
    expect(pod.tolerations).toContainEqual({ key: 'pipeloom.dev/dedicated', operator: 'Equal', value: 'true', effect: 'NoSchedule' });
    // GPUs through the device plugin; cpu and memory requested and bounded.
    expect(pod.runtimeClassName).toBe('nvidia');
    expect(c.resources.limits['nvidia.com/gpu']).toBeGreaterThanOrEqual(1);
    for (const r of ['cpu', 'memory']) {
      expect(c.resources.requests[r], `resources.requests.${r}`).toBeTruthy();
      expect(c.resources.limits[r], `resources.limits.${r}`).toBeTruthy();
    }
    // Locked down: the image's non-root user, no privilege escalation, no capabilities, seccomp.
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const env: Record<string, string> = { NODE_NAME: 'gpu-node-3' };
    for (const e of c.env) {
      if (e.value !== undefined) env[e.name] = e.value;
      else if (e.valueFrom?.secretKeyRef) env[e.name] = TOKEN;
    }
    // Every GPU of the node is the commented opt-in, not the default.
    expect(env.NVIDIA_VISIBLE_DEVICES).toBeUndefined();
    expect(read('deploy/daemonset.yaml')).toMatch(/^ *# +- name: NVIDIA_VISIBLE_DEVICES\n *# +value: all$/m);
    expect(c.env.find((e: { name: string }) => e.name === 'PIPELOOM_TOKEN')?.valueFrom?.secretKeyRef).toBeTruthy();
    expect(c.args.join(' ')).not.toMatch(/--token(\s|=|$)/);
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
    // Each probe, as the kubelet would send it, on the port it names: 200 {"status":"ok"}.
    const tls = c.args.includes('--cert');
    for (const kind of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const get = c[kind]?.httpGet;
      expect(get, `${kind}.httpGet`).toBeTruthy();
      expect(get.path).toBe('/healthz');
      expect(c.ports.find((p: { name: string }) => p.name === get.port)?.containerPort ?? get.port).toBe(c.ports[0].containerPort);
      expect(get.scheme).toBe(tls ? 'HTTPS' : 'HTTP');
      const res = await probe(`https://127.0.0.1:${port(url)}${get.path}`);
      expect(res).toEqual({ status: 200, type: 'application/json', body: '{"status":"ok"}' });
    }
  });
});
