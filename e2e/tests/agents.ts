import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

// Real local agents for the run tests: `pipeloom agent` processes on loopback, one per host,
// stopped by pid when the tests finish.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LocalAgents {
  token: string;
  urls: string[];
  /** `?agent=…&token=…` for the designer. */
  query: string;
  logs: () => string;
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** `args`: more `pipeloom agent` options for every agent (e.g. `--kernels DIR`). */
export async function startAgents(names: string[], basePort: number, token = 'e2e-token-0123456789', args: string[] = []): Promise<LocalAgents> {
  const procs: ChildProcess[] = [];
  let log = '';
  const urls: string[] = [];
  for (const [i, name] of names.entries()) {
    const port = basePort + i;
    const p = spawn(process.execPath, ['apps/agent/bin/pipeloom.js', 'agent', '--name', name, '--port', String(port), '--token', token, ...args], {
      cwd: ROOT,
      env: { ...process.env, EGL_PLATFORM: 'surfaceless' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout!.on('data', (d) => (log += `[${name}] ${d}`));
    p.stderr!.on('data', (d) => (log += `[${name}] ${d}`));
    procs.push(p);
    urls.push(`ws://127.0.0.1:${port}`);
  }
  const stop = async () => {
    for (const p of procs) {
      if (p.exitCode === null && p.pid) {
        p.kill('SIGTERM');
        await new Promise((r) => {
          const t = setTimeout(() => {
            p.kill('SIGKILL');
            r(null);
          }, 3000);
          p.once('exit', () => {
            clearTimeout(t);
            r(null);
          });
        });
      }
    }
  };
  const deadline = Date.now() + 30_000;
  for (const [i, p] of procs.entries()) {
    while (!(await portOpen(basePort + i))) {
      if (p.exitCode !== null || Date.now() > deadline) {
        await stop();
        throw new Error(`agent ${names[i]} did not start listening on ${basePort + i}:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { token, urls, query: `?agent=${urls.join(',')}&token=${token}`, logs: () => log, stop };
}
