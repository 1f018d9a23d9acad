// `npm start`: the designer served on loopback beside local agents for hosts h0 and h1 (each
// with three GPU PEs, the paper's Fig 6 cluster), so every example in the examples menu runs
// out of the box. The printed URL carries the agents and their token to the Run view. An agent
// that exits on its own is restarted on its port (local/spawn.ts supervises them).
//
// The designer is served as users get it: a production build (`vite build`) under `vite
// preview`. `npm run dev` (`--dev`) serves Vite's dev server instead, for people changing the
// designer. `--out DIR` puts the build elsewhere than apps/web/dist. `--data [NAME=]DIR`
// (repeatable) has the agents serve DIR to io.read and io.write nodes as NAME (docs/data.md);
// without a root named `data`, the data examples' files are made into .cache/example-data and
// served as `data`, so those examples run out of the box too.
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnLocalAgents } from '../apps/agent/src/local/spawn.js';
import { parseDataFlags } from '../apps/agent/src/io/roots.js';
import { serveDesigner } from './designer.js';
import { writeExampleData } from './data/examples.js';

const HOSTS = ['h0', 'h1'];
const GPUS_PER_HOST = 3;
const port = Number(process.env.PORT ?? 5173);
const args = process.argv.slice(2);
const dev = args.includes('--dev');
const out = args.indexOf('--out');
const valued = new Set(['--out', '--data']);
for (const [i, a] of args.entries()) {
  if (a !== '--dev' && !valued.has(a) && !valued.has(args[i - 1])) {
    console.error(`pipeloom start: unknown argument "${a}" (use --dev for the dev server, --out DIR for the build folder, --data NAME=DIR for data roots)`);
    process.exit(2);
  }
}
const data = parseDataFlags(args.flatMap((a, i) => (args[i - 1] === '--data' ? [a] : [])));
if ('error' in data) {
  console.error(`pipeloom start: ${data.error}`);
  process.exit(2);
}
if (!data.roots.some((r) => r.name === 'data')) {
  const dir = join(fileURLToPath(new URL('..', import.meta.url)), '.cache/example-data');
  writeExampleData(dir);
  data.roots.push({ name: 'data', dir });
}
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`pipeloom start: PORT must be a port number (0-65535), not "${process.env.PORT}"`);
  process.exit(2);
}
if (out >= 0 && !args[out + 1]) {
  console.error('pipeloom start: --out needs a folder');
  process.exit(2);
}

if (!dev) console.log('building the designer (vite build) and starting the agents ...');
// The build and the agents' start-up overlap; if either fails the other is stopped.
const [agentsR, serverR] = await Promise.allSettled([
  spawnLocalAgents(HOSTS, {
    gpus: Object.fromEntries(HOSTS.map((h) => [h, GPUS_PER_HOST])),
    args: data.roots.flatMap((r) => ['--data', `${r.name}=${r.dir}`]),
    log: (host, line) => {
      if (!/artificially reduced/.test(line)) console.error(`[agent ${host}] ${line}`);
    },
    // An agent that exits on its own (a kernel past its time limit ends it) comes back on its
    // URL with the same token, so the page already open keeps working.
    restart: true,
  }),
  serveDesigner({ dev, port, outDir: out >= 0 ? resolve(args[out + 1]) : undefined }),
]);
if (agentsR.status === 'rejected' || serverR.status === 'rejected') {
  const why = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? String((r.reason as Error)?.message ?? r.reason) : '');
  if (agentsR.status === 'rejected') console.error(`pipeloom start: the local agents did not start: ${why(agentsR)}`);
  if (serverR.status === 'rejected') console.error(`pipeloom start: the designer could not be ${dev ? 'served' : 'built and served'}: ${why(serverR)}`);
  await Promise.allSettled([agentsR.status === 'fulfilled' && agentsR.value.stop(), serverR.status === 'fulfilled' && serverR.value.close()]);
  process.exit(1);
}
const agents = agentsR.value;
const server = serverR.value;
const base = server.url;
// Left unencoded so the URL stays readable; the Run view parses it with URLSearchParams.
const query = `agent=${agents.agents.map((a) => a.url).join(',')}&token=${agents.token}`;

console.log(`
  Pipeloom designer   ${base}?${query}
  served              ${dev ? 'by the Vite dev server (npm run dev)' : `as a production build (built in ${((server.buildMs ?? 0) / 1000).toFixed(1)} s), vite preview`}
  local agents        ${agents.agents.map((a) => `${a.host} ${a.url}`).join(', ')} (${GPUS_PER_HOST} GPU PEs each)
  data roots          ${data.roots.map((r) => `${r.name} = ${r.dir}`).join(', ')}

  Open the URL, pick an example from the menu (P-I-I-C is loaded first), and press Run.
  Ctrl+C stops the designer and the agents.
`);

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([server.close(), agents.stop()]);
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
