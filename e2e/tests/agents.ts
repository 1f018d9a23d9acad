import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// The built CLI of this test run where there is one (npm test builds it once), else the checkout's.
import { pipeloomBin } from '@pipeloom/agent/local/spawn';

// Real local agents for the run tests: `pipeloom agent` processes on loopback, one per host,
// stopped by pid when the tests finish (tests that need h0 and h1 as they start take the
// `agents` fixture of fixtures.ts instead).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface LocalAgents {
  token: string;
  urls: string[];
  /** `?agent=…&token=…` for the designer. */
  query: string;
  logs: () => string;
  stop(): Promise<void>;
}

/**
 * `args`: more `pipeloom agent` options for every agent (e.g. `--kernels DIR`). Each agent
 * listens on a port the system picks (`--port 0`) and says which: two test runs on one machine
 * never meet each other's agents.
 */
export async function startAgents(names: string[], token = 'e2e-token-0123456789', args: string[] = []): Promise<LocalAgents> {
  const procs: ChildProcess[] = [];
  let log = '';
  const listening: Promise<string>[] = [];
  for (const name of names) {
    const p = spawn(process.execPath, [pipeloomBin(), 'agent', '--name', name, '--port', '0', '--token', token, ...args], {
      cwd: ROOT,
      env: { ...process.env, EGL_PLATFORM: 'surfaceless' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    p.stdout!.on('data', (d) => (log += `[${name}] ${d}`));
    p.stderr!.on('data', (d) => (log += `[${name}] ${d}`));
    procs.push(p);
    listening.push(
      new Promise((resolve, reject) => {
        createInterface({ input: p.stdout! }).once('line', (line) => {
          const m = /^listening (\S+)/.exec(line);
          if (m) resolve(m[1]);
          else reject(new Error(`agent ${name} did not start: ${line}\n${log}`));
        });
        p.once('exit', (code) => reject(new Error(`agent ${name} exited (${code}) before listening:\n${log}`)));
      }),
    );
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
  let urls: string[];
  try {
    urls = await Promise.all(listening);
  } catch (e) {
    await stop();
    throw e;
  }
  return { token, urls, query: `?agent=${urls.join(',')}&token=${token}`, logs: () => log, stop };
}
