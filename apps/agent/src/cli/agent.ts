import { randomBytes } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { discover } from '../devices/discover.js';
import { startAgent, type AgentServer } from '../server/server.js';
import { DEFAULT_KERNEL_TIMEOUT_MS } from '../runtime/run.js';
import { parseCommandArgs, seconds } from './args.js';

// `pipeloom agent`: serve this host's PEs to coordinators.


const HELP = `usage: pipeloom agent --name h0 [--port 7070] --token T [options]

  --name NAME          host id this agent serves (the document's host id)
  --port N             TCP port (default 7070; 0 picks a free one)
  --token T            shared secret every coordinator and peer agent must present
                       (or env PIPELOOM_TOKEN)
  --host ADDR          interface to bind (default 127.0.0.1; 0.0.0.0 to serve a network)
  --cert FILE --key FILE   serve wss:// (TLS) with these PEM files
  --allow-origin LIST  comma-separated browser origins allowed (default http://127.0.0.1:*,http://localhost:*)
  --backend NAME       WebGPU backend: opengl (default, reaches llvmpipe), vulkan, metal, d3d12
  --emulate-gpus N     serve N GPU PEs sharing the first adapter (local runs of multi-GPU documents)
  --link-rate BYTES    cap host-to-host sends at BYTES per second (to mimic a slower network)
  --max-message BYTES  largest text message accepted (default 16 MiB)
  --max-rate N         text messages per second per connection (default 2000)
  --allow-wgsl         run custom.wgsl nodes (WGSL written in the document, not in the kernel
                       registry); off by default: such deploys are refused
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

export async function main(argv: string[]): Promise<number> {
  const str = { type: 'string' } as const;
  const args = parseCommandArgs(
    'agent',
    argv,
    { name: str, port: str, token: str, host: str, cert: str, key: str, 'allow-origin': str, backend: str, 'emulate-gpus': str, 'link-rate': str, 'max-message': str, 'max-rate': str, 'allow-wgsl': { type: 'boolean' }, 'kernel-timeout': str },
    HELP,
  );
  if (!args.ok) return args.code;
  const f = new Map(Object.entries(args.values).filter(([, v]) => v !== undefined)) as Map<string, string>;
  const allowWgsl = args.values['allow-wgsl'] === true;
  const name = f.get('name');
  if (name === undefined) {
    console.error(`pipeloom agent: --name is required\n\n${HELP}`);
    return 1;
  }
  if (!name.trim()) {
    // Usually a deploy file's variable that expands to nothing (the systemd unit's PIPELOOM_HOST_ID).
    console.error(`pipeloom agent: --name is empty: give this host's id in the documents (in the systemd unit: PIPELOOM_HOST_ID=... in /etc/pipeloom/agent.env)`);
    return 1;
  }
  let token = f.get('token') ?? process.env.PIPELOOM_TOKEN;
  if (!token) {
    token = randomBytes(16).toString('hex');
    console.error(`pipeloom agent: no --token given; generated ${token}`);
  }
  const nums: Record<string, number> = {};
  for (const [flag, def] of [['port', 7070], ['emulate-gpus', 0], ['link-rate', 0], ['max-message', 16 << 20], ['max-rate', 2000]] as const) {
    const raw = f.get(flag);
    const v = raw === undefined ? def : Number(raw);
    if (!Number.isInteger(v) || v < 0) {
      console.error(`pipeloom agent: --${flag} must be a whole number of at least 0, not "${raw}"`);
      return 1;
    }
    nums[flag] = v;
  }
  const timeoutFlag = seconds('agent', 'kernel-timeout', f.get('kernel-timeout'));
  if (timeoutFlag === undefined) return 1;
  const kernelTimeout = timeoutFlag ?? DEFAULT_KERNEL_TIMEOUT_MS / 1000;
  if (Boolean(f.get('cert')) !== Boolean(f.get('key'))) {
    console.error('pipeloom agent: --cert and --key go together');
    return 1;
  }
  for (const flag of ['cert', 'key'] as const) {
    const file = f.get(flag);
    const problem = file === undefined ? undefined : unreadable(file);
    if (problem) {
      console.error(`pipeloom agent: --${flag} ${file}: ${problem}. Give the PEM files of this host's certificate and key, or make a self-signed pair with: openssl req -x509 -newkey rsa:2048 -nodes -days 365 -keyout key.pem -out cert.pem -subj /CN=HOST -addext subjectAltName=DNS:HOST (HOST: the name coordinators dial)`);
      return 1;
    }
  }
  const devices = await discover({ host: name, backend: f.get('backend'), emulateGpus: nums['emulate-gpus'] });
  let server: AgentServer | undefined;
  try {
    server = await startAgent({
      devices,
      token,
      port: nums.port,
      bind: f.get('host'),
      cert: f.get('cert'),
      key: f.get('key'),
      allowOrigins: f.get('allow-origin') ? f.get('allow-origin')!.split(',').map((s) => s.trim()).filter(Boolean) : undefined,
      linkRate: nums['link-rate'],
      allowWgsl,
      kernelTimeoutMs: kernelTimeout * 1000,
      onStuck: (reason) => {
        // Any orderly exit joins the worker threads, and one held inside a native GPU call
        // cannot be joined: terminating it aborts the process with a native stack. So the
        // agent kills itself once the coordinator has the failure; supervisors restart it.
        console.error(`[${name}] ${reason}: the agent kills itself (SIGKILL) so that its supervisor restarts it`);
        void server?.close().finally(() => process.kill(process.pid, 'SIGKILL'));
      },
      limits: { maxMessage: nums['max-message'], messagesPerSecond: nums['max-rate'] },
      log: (line) => console.error(`[${name}] ${line}`),
    });
  } catch (e) {
    console.error(`pipeloom agent: cannot listen on port ${nums.port}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  // First stdout line is machine-readable: local runs read the URL from it.
  console.log(`listening ${server.url}`);
  if (allowWgsl) console.error(`[${name}] --allow-wgsl: custom WGSL from documents will run on this host's GPUs`);
  for (const pe of devices.pes) console.error(`[${name}] ${pe.id}: ${pe.name}${pe.backend ? ` (${pe.backend})` : ''}`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  // Dawn keeps native handles alive; leave promptly once the server is closed.
  process.exit(0);
}
