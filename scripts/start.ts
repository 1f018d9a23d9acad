// `npm start`: the designer served on loopback beside local agents for hosts h0 and h1 (each
// with three GPU PEs, the paper's Fig 6 cluster), so every example in the examples menu runs
// out of the box. The printed URL carries the agents and their token to the Run view.
import { createServer } from 'vite';
import { spawnLocalAgents } from '../apps/agent/src/local/spawn.js';

const HOSTS = ['h0', 'h1'];
const GPUS_PER_HOST = 3;
const port = Number(process.env.PORT ?? 5173);

const agents = await spawnLocalAgents(HOSTS, {
  gpus: Object.fromEntries(HOSTS.map((h) => [h, GPUS_PER_HOST])),
  log: (host, line) => {
    if (!/artificially reduced/.test(line)) console.error(`[agent ${host}] ${line}`);
  },
});

const server = await createServer({ configFile: new URL('../vite.config.ts', import.meta.url).pathname, server: { port, strictPort: false, host: '127.0.0.1' }, logLevel: 'warn' });
await server.listen();
const base = server.resolvedUrls?.local[0] ?? `http://127.0.0.1:${port}/`;
// Left unencoded so the URL stays readable; the Run view parses it with URLSearchParams.
const query = `agent=${agents.agents.map((a) => a.url).join(',')}&token=${agents.token}`;

console.log(`
  Pipeloom designer   ${base}?${query}
  local agents        ${agents.agents.map((a) => `${a.host} ${a.url}`).join(', ')} (${GPUS_PER_HOST} GPU PEs each)

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
