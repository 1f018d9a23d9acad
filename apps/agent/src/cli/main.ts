import { VERSION } from '../version.js';

// Dispatches `pipeloom <command>` to one module per command; each exports
// `main(argv): Promise<number>` returning the exit code (0 ok, 1 failure, 2 invalid document;
// 2 as well for a command that does not exist, and for no command at all: the usage goes to
// stderr then, as a usage error). `pipeloom help CMD` is `pipeloom CMD --help`.
type Command = { summary: string; load: () => Promise<{ main: (argv: string[]) => Promise<number> }> };

const commands: Record<string, Command> = {
  compile: { summary: 'compile a project document into its implementation graph', load: () => import('./compile.js') },
  predict: { summary: 'predict cycle time and timeline for both strategies', load: () => import('./predict.js') },
  run: { summary: 'run a project on agents (local ones by default)', load: () => import('./run.js') },
  calibrate: { summary: 'measure firing and transfer times on agents for calibrated predictions', load: () => import('./calibrate.js') },
  kernels: { summary: 'list the kernels (built-in and from --kernels packages) with ports, params and docs', load: () => import('./kernels.js') },
  agent: { summary: "start an agent serving this host's processing elements", load: () => import('./agent.js') },
  agents: { summary: 'list the PEs agents serve, their capabilities, and which meet --match clauses', load: () => import('./list-agents.js') },
  import: { summary: 'import a PREESM project (.pi, .slam, .scenario) as a document', load: () => import('./import.js') },
};

export function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`);
  return `usage: pipeloom <command> [options]\n       pipeloom help <command>\n       pipeloom --version\n\ncommands:\n${lines.join('\n')}\n\nRun \`pipeloom help <command>\` (or \`pipeloom <command> --help\`) for a command's options.`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    console.error(usage());
    return 2;
  }
  if (name === '--help' || name === '-h') {
    console.log(usage());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(`pipeloom ${VERSION}`);
    return 0;
  }
  if (name === 'help') {
    if (!rest[0]) {
      console.log(usage());
      return 0;
    }
    const command = lookup(rest[0]);
    return command ? (await command.load()).main(['--help']) : 2;
  }
  const command = lookup(name);
  return command ? (await command.load()).main(rest) : 2;
}

/** The command named `name`, or undefined after printing that there is none. */
function lookup(name: string): Command | undefined {
  // Own commands only: `constructor` or `toString` are names a user types, not commands.
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) console.error(`pipeloom: unknown command "${name.slice(0, 60)}"\n\n${usage()}`);
  return command;
}
