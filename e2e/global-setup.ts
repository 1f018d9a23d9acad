import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the run serving the designer on `port` builds it. */
export function designerOut(port: number): string {
  return join(tmpdir(), `pipeloom-e2e-designer-${port}`);
}

// An e2e run that cannot start the browser must fail, not skip: check the binary up front
// and say how to install it. The teardown removes the run's build of the designer.
export default async function globalSetup() {
  if (!existsSync('/usr/bin/chromium')) {
    throw new Error('Debian Chromium not found at /usr/bin/chromium: run `node scripts/setup.mjs` (apt-get install chromium)');
  }
  const out = designerOut(Number(process.env.PIPELOOM_E2E_PORT));
  return () => rmSync(out, { recursive: true, force: true });
}
