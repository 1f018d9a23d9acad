import { randomBytes } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { defaultCpus, discover, MAX_CPUS } from '../devices/discover.js';
import { startAgent, type AgentServer } from '../server/server.js';
import { DEFAULT_KERNEL_TIMEOUT_MS } from '../runtime/host-run.js';
import { DEFAULT_LIMITS, MIN_TOKEN_LENGTH } from '../server/security.js';
import { parseCommandArgs, seconds } from './args.js';
import { cpusFlag } from './agents.js';
import { compileCheck, loadKernelPackages, loadTimeoutFlag, shareWithThreads } from '../kernels/load.js';
import { kernelManifest, listKernels } from '@pipeloom/kernels';
import { openDevice } from '../devices/discover.js';
import { kernelsHelp, loadTimeoutHelp } from './option-help.js';
import { DATA_ENV, DATA_QUOTA_ENV, parseDataFlags } from '../io/roots.js';

// `pipeloom agent`: serve this host's PEs to coordinators.

const HELP = `usage: pipeloom agent --name h0 [--port 7070] --token-file FILE [options]

  --name NAME          host id this agent serves (the document's host id)
  --port N             TCP port (default 7070; 0 picks a free one)
  --token-file FILE    file holding the shared secret every coordinator and peer agent must
                       present (at least ${MIN_TOKEN_LENGTH} characters; or env PIPELOOM_TOKEN; without
                       either, a random one is made and printed)
  --token T            the secret on the command line: visible to every local user (ps,
                       /proc); prefer --token-file or PIPELOOM_TOKEN
  --host ADDR          interface to bind (default 127.0.0.1; 0.0.0.0 to serve a network)
  --cert FILE --key FILE   serve wss:// (TLS) with these PEM files
  --allow-origin LIST  comma-separated browser origins allowed (default http://127.0.0.1:*,http://localhost:*)
  --backend NAME       WebGPU backend: opengl (default, reaches llvmpipe), vulkan, metal, d3d12
  --emulate-gpus N     serve N GPU PEs sharing the first adapter (local runs of multi-GPU documents)
  --cpus N             CPU PEs to serve, cpu0@NAME .. cpu{N-1}@NAME, one per core given to the
                       agent, each its own thread in a run (default: the cores left after one for
                       the agent itself, at least 1; at most ${MAX_CPUS}). A document's cpu@NAME is cpu0@NAME
  --cpu-only           serve the CPU PEs only, whatever adapters the machine has
  --cpu-memory BYTES   bytes the CPU PEs offer for a run's buffers, together (default: half the
                       memory free at start); a deploy needing more is refused, naming the buffer
  --link-rate BYTES    cap host-to-host sends at BYTES per second (to mimic a slower network)
  --max-message BYTES  largest text message accepted (default 16 MiB)
  --max-rate N         text messages per second per connection (default 2000)
  --login-timeout S    seconds from connecting to a completed login (default ${DEFAULT_LIMITS.loginTimeoutMs / 1000})
  --max-pending N      connections not logged in yet, in total (default ${DEFAULT_LIMITS.maxPending})
  --max-pending-per-address N   the same from one address (default ${DEFAULT_LIMITS.maxPendingPerAddress})
${kernelsHelp(23, ' from this machine', '. Only the operator names packages, never a document')}
${loadTimeoutHelp(23, ' for a deploy, which runs off the main thread', ': a call past it fails that deploy, naming package, kernel, function and params')}
  --allow-wgsl         run custom.wgsl nodes (WGSL written in the document, not in the kernel
                       registry); off by default: such deploys are refused
  --data [NAME=]DIR    serve the files under DIR to io.read and io.write as NAME (default: the
                       directory's name); repeatable. Documents name files NAME:relative/path
                       and never reach outside DIR (.., absolute paths, symlinks out are refused)
  --data-ro [NAME=]DIR the same, read-only: io.write nodes naming it are refused
  --data-quota BYTES   most bytes one io.write node writes in one run (default: no limit but the
                       disk's); past it the run fails naming the node, files written stay whole
  --kernel-timeout S   time limit of one firing in seconds (default 60; 0 for none). A firing
                       past it fails the run, naming the node; the thread inside the kernel
                       cannot be stopped, so the agent then kills itself (SIGKILL) for its
                       supervisor (systemd, Docker, Kubernetes) to restart it`;

/** Why the agent cannot read a PEM file it was given, or undefined when it can. */
function unreadable(file: string): string | undefined {
  try {
    accessSync(file, constants.R_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES') return 'not readable by this user';
    return code ?? String(e);
  }
}

/**
 * The token from --token, --token-file or PIPELOOM_TOKEN; '' when none is given (a random
 * one is made), undefined after a message when it cannot be used.
 */
function readToken(flag: string | undefined, file: string | undefined): string | undefined {
  if (flag !== undefined && file !== undefined) {
    console.error('pipeloom agent: give the token once: --token-file or --token, not both');
    return undefined;
  }
  let token = flag ?? process.env.PIPELOOM_TOKEN ?? '';
  let from = flag !== undefined ? '--token' : 'PIPELOOM_TOKEN';
  if (file !== undefined) {
    from = `--token-file ${file}`;
    try {
      if (statSync(file).size > 4096) {
        console.error(`pipeloom agent: ${from}: the file is larger than 4 KiB; it must hold only the token`);
        return undefined;
      }
      token = readFileSync(file, 'utf8').trim();
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      console.error(`pipeloom agent: ${from}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'not readable by this user' : (code ?? String(e))}`);
      return undefined;
    }
    if (!token) {
      console.error(`pipeloom agent: ${from}: the file is empty; write the token in it (e.g. openssl rand -hex 16 > ${file})`);
      return undefined;
    }
    if (statSync(file).mode & 0o077) console.error(`pipeloom agent: warning: ${from} can be read by other users (chmod 600 ${file})`);
  }
  if (token && token.length < MIN_TOKEN_LENGTH) {
    console.error(
      `pipeloom agent: the token from ${from} has ${token.length} character${token.length === 1 ? '' : 's'}; it needs at least ${MIN_TOKEN_LENGTH} (make one with: openssl rand -hex 16)`,
    );
    return undefined;
  }
  return token;
}

export async function main(argv: string[]): Promise<number> {
  const str = { type: 'string' } as const;
  const args = parseCommandArgs(
    'agent',
    argv,
    {
      name: str,
      port: str,
      token: str,
      'token-file': str,
      host: str,
      cert: str,
      key: str,
      'allow-origin': str,
      backend: str,
      'emulate-gpus': str,
      'cpu-memory': str,
      cpus: str,
      'link-rate': str,
      'max-message': str,
      'max-rate': str,
      'login-timeout': str,
      'max-pending': str,
      'max-pending-per-address': str,
      'allow-wgsl': { type: 'boolean' },
      'cpu-only': { type: 'boolean' },
      'kernel-timeout': str,
      'kernel-load-timeout': str,
      kernels: { type: 'string', multiple: true },
      data: { type: 'string', multiple: true },
      'data-ro': { type: 'string', multiple: true },
      'data-quota': str,
    },
    HELP,
  );
  if (!args.ok) return args.code;
  const f = new Map(Object.entries(args.values).filter(([, v]) => v !== undefined && !Array.isArray(v))) as Map<string, string>;
  const allowWgsl = args.values['allow-wgsl'] === true;
  const name = f.get('name');
  if (name === undefined) {
    console.error(`pipeloom agent: --name is required\n\n${HELP}`);
    return 1;
  }
  if (!name.trim()) {
    // Usually a deploy file's variable that expands to nothing (the systemd unit's PIPELOOM_HOST_ID).
    console.error(
      `pipeloom agent: --name is empty: give this host's id in the documents (in the systemd unit: PIPELOOM_HOST_ID=... in /etc/pipeloom/agent.env)`,
    );
    return 1;
  }
  const given = readToken(f.get('token'), f.get('token-file'));
  if (given === undefined) return 1;
  let token = given;
  if (!token) {
    token = randomBytes(16).toString('hex');
    console.error(`pipeloom agent: no --token-file, PIPELOOM_TOKEN or --token given; generated ${token}`);
  }
  const nums: Record<string, number> = {};
  for (const [flag, def] of [
    ['port', 7070],
    ['emulate-gpus', 0],
    ['link-rate', 0],
    ['cpu-memory', 0],
    ['max-message', 16 << 20],
    ['max-rate', 2000],
    ['max-pending', DEFAULT_LIMITS.maxPending],
    ['max-pending-per-address', DEFAULT_LIMITS.maxPendingPerAddress],
    ['data-quota', 0],
  ] as const) {
    const raw = f.get(flag);
    const v = raw === undefined ? def : Number(raw);
    if (!Number.isInteger(v) || v < 0) {
      console.error(`pipeloom agent: --${flag} must be a whole number of at least 0, not "${raw}"`);
      return 1;
    }
    nums[flag] = v;
  }
  const cpus = cpusFlag('agent', f.get('cpus'));
  if (cpus === undefined) return 1;
  const timeoutFlag = seconds('agent', 'kernel-timeout', f.get('kernel-timeout'));
  if (timeoutFlag === undefined) return 1;
  const kernelTimeout = timeoutFlag ?? DEFAULT_KERNEL_TIMEOUT_MS / 1000;
  const rawLogin = f.get('login-timeout');
  const loginTimeout = rawLogin === undefined ? null : Number(rawLogin);
  if (loginTimeout !== null && !(rawLogin!.trim() !== '' && loginTimeout > 0 && loginTimeout <= 3600)) {
    // No "0 for none": a connection that never logs in must not be kept.
    console.error(`pipeloom agent: --login-timeout must be a number of seconds above 0 and at most 3600, not "${rawLogin}"`);
    return 1;
  }
  if (Boolean(f.get('cert')) !== Boolean(f.get('key'))) {
    console.error('pipeloom agent: --cert and --key go together');
    return 1;
  }
  for (const flag of ['cert', 'key'] as const) {
    const file = f.get(flag);
    const problem = file === undefined ? undefined : unreadable(file);
    if (problem) {
      console.error(
        `pipeloom agent: --${flag} ${file}: ${problem}. Give the PEM files of this host's certificate and key, or make a self-signed pair with: openssl req -x509 -newkey rsa:2048 -nodes -days 365 -keyout key.pem -out cert.pem -subj /CN=HOST -addext subjectAltName=DNS:HOST (HOST: the name coordinators dial)`,
      );
      return 1;
    }
  }
  const data = parseDataFlags(
    (args.values.data as unknown as string[] | undefined) ?? [],
    process.cwd(),
    (args.values['data-ro'] as unknown as string[] | undefined) ?? [],
  );
  if ('error' in data) {
    console.error(`pipeloom agent: ${data.error}`);
    return 2;
  }
  // PE threads read and write through the same roots (io/host.ts).
  process.env[DATA_ENV] = JSON.stringify(data.roots);
  process.env[DATA_QUOTA_ENV] = String(nums['data-quota']);
  const loadTimeoutMs = loadTimeoutFlag('agent', f.get('kernel-load-timeout'));
  if (loadTimeoutMs === undefined) return 1;
  const packages = await loadKernelPackages((args.values.kernels as unknown as string[] | undefined) ?? [], process.cwd(), { loadTimeoutMs, restart: true });
  for (const p of packages.problems) console.error(`pipeloom agent: ${p}`);
  if (packages.problems.length) return 2;
  const devices = await discover({
    host: name,
    backend: f.get('backend'),
    emulateGpus: nums['emulate-gpus'],
    cpuOnly: args.values['cpu-only'] === true,
    cpuMemory: nums['cpu-memory'] || undefined,
    cpus: cpus ?? defaultCpus(),
  });
  if (packages.packages.length) {
    // PE threads load the same files (runtime/pe-worker-boot.mjs).
    shareWithThreads(packages);
    const gpu = devices.gpus.values().next().value;
    if (gpu) {
      const device = await openDevice(gpu);
      const bad = await compileCheck(packages.packages, device);
      device.destroy();
      for (const p of bad) console.error(`pipeloom agent: ${p}`);
      if (bad.length) return 2;
    }
  }
  let server: AgentServer | undefined;
  try {
    server = await startAgent({
      devices,
      token,
      port: nums.port,
      bind: f.get('host'),
      cert: f.get('cert'),
      key: f.get('key'),
      allowOrigins: f.get('allow-origin')
        ? f
            .get('allow-origin')!
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
      linkRate: nums['link-rate'],
      allowWgsl,
      kernels: listKernels().map(kernelManifest),
      kernelTimeoutMs: kernelTimeout * 1000,
      data: data.roots,
      onStuck: (reason) => {
        // Any orderly exit joins the worker threads, and one held inside a native GPU call
        // cannot be joined: terminating it aborts the process with a native stack. So the
        // agent kills itself once the coordinator has the failure; supervisors restart it.
        console.error(`[${name}] ${reason}: the agent kills itself (SIGKILL) so that its supervisor restarts it`);
        void server?.close().finally(() => process.kill(process.pid, 'SIGKILL'));
      },
      limits: {
        maxMessage: nums['max-message'],
        messagesPerSecond: nums['max-rate'],
        maxPending: nums['max-pending'],
        maxPendingPerAddress: nums['max-pending-per-address'],
        ...(loginTimeout === null ? {} : { loginTimeoutMs: loginTimeout * 1000 }),
      },
      log: (line) => console.error(`[${name}] ${line}`),
    });
  } catch (e) {
    console.error(`pipeloom agent: cannot listen on port ${nums.port}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  // First stdout line is machine-readable: local runs read the URL from it.
  console.log(`listening ${server.url}`);
  if (allowWgsl) console.error(`[${name}] --allow-wgsl: custom WGSL from documents will run on this host's GPUs`);
  const cores = devices.pes.filter((pe) => pe.kind === 'cpu');
  // The cores in one line: they differ only by number.
  if (cores.length)
    console.error(`[${name}] ${cores.length > 1 ? `${cores[0].id} .. ${cores.at(-1)!.id}` : cores[0].id}: ${cores[0].name} (${cores.length} of its cores)`);
  for (const pe of devices.pes) if (pe.kind !== 'cpu') console.error(`[${name}] ${pe.id}: ${pe.name}${pe.backend ? ` (${pe.backend})` : ''}`);
  for (const r of data.roots) console.error(`[${name}] data ${r.name}: ${r.dir}`);
  for (const p of packages.packages) console.error(`[${name}] kernels from ${p.name}: ${p.kernels.join(', ')}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  // Dawn keeps native handles alive; leave promptly once the server is closed.
  process.exit(0);
}
