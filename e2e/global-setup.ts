import { existsSync } from 'node:fs';

// An e2e run that cannot start the browser must fail, not skip: check the binary up front
// and say how to install it.
export default async function globalSetup() {
  if (!existsSync('/usr/bin/chromium')) {
    throw new Error('Debian Chromium not found at /usr/bin/chromium: run `node scripts/setup.mjs` (apt-get install chromium)');
  }
}
