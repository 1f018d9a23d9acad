import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

// For tests (Node only): the modules an entry really loads, whatever imports them. A fresh Node
// process (tsx compiles the .ts) imports the entry under a module.register hook that writes
// every URL the loader resolves to a file.

const run = promisify(execFile);

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.RESOLVED_LOG, r.url + '\\n');
  return r;
}`;

/** Every URL resolved while importing the module at `file` (an absolute path), `node:` builtins included. */
export async function loadedModules(file: string, cwd: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'pipeloom-loaded-'));
  try {
    const log = join(dir, 'resolved.log');
    writeFileSync(log, '');
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
    );
    const entry = pathToFileURL(file).href;
    await run(
      process.execPath,
      ['--import', 'tsx', '--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', `await import(${JSON.stringify(entry)});`],
      {
        cwd,
        env: { ...process.env, RESOLVED_LOG: log },
      },
    );
    return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
