import { readFileSync } from 'node:fs';

/** This package's version (`pipeloom --version`, the agent's login): the package.json beside src/, in a checkout and installed alike. */
export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
