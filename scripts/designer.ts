// Serving the designer, as `npm start` (a production build under `vite preview`) or `npm run
// dev` (Vite's dev server, modules transformed on request) do; bench:designer measures both.
// The dev server is for people changing the designer: a first visit there fetches ~180
// modules and reloads the page once Vite has optimised the dependencies.
import { build, createServer, preview } from 'vite';
import { fileURLToPath } from 'node:url';

const CONFIG = fileURLToPath(new URL('../vite.config.ts', import.meta.url));
export const DEFAULT_OUT = fileURLToPath(new URL('../apps/web/dist', import.meta.url));

export interface DesignerServer {
  /** The page's URL, ending in `/`. */
  url: string;
  /** Build time in ms (production only). */
  buildMs?: number;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Vite's dev server instead of the production build. */
  dev?: boolean;
  /** 0: any free port. Taken ports move on to the next one. */
  port?: number;
  /** Where the production build goes (default apps/web/dist). */
  outDir?: string;
  /** The dev server's dependency cache (default Vite's, node_modules/.vite); a fresh folder makes a first visit. */
  cacheDir?: string;
}

export async function serveDesigner(opts: ServeOptions = {}): Promise<DesignerServer> {
  const port = opts.port ?? 5173;
  const server = { port, strictPort: false, host: '127.0.0.1' };
  if (opts.dev) {
    const dev = await createServer({ configFile: CONFIG, server, cacheDir: opts.cacheDir, logLevel: 'warn' });
    await dev.listen();
    return { url: urlOf(dev.resolvedUrls?.local[0], dev.httpServer?.address()), close: () => dev.close() };
  }
  const outDir = opts.outDir ?? DEFAULT_OUT;
  const t0 = performance.now();
  // Rolldown's plugin timings are for whoever works on the build, not for someone starting the designer.
  await build({ configFile: CONFIG, logLevel: 'warn', build: { outDir, emptyOutDir: true, rolldownOptions: { checks: { bundlerTimings: false } } } });
  const buildMs = performance.now() - t0;
  return { ...(await previewDesigner(outDir, port)), buildMs };
}

/** Serves a build already in `outDir` with `vite preview`. */
export async function previewDesigner(outDir: string, port = 5173): Promise<DesignerServer> {
  const site = await preview({ configFile: CONFIG, logLevel: 'warn', preview: { port, strictPort: false, host: '127.0.0.1' }, build: { outDir } });
  return { url: urlOf(site.resolvedUrls?.local[0], site.httpServer.address()), close: () => site.close() };
}

// Vite reports the port it was asked for; with port 0 the one bound is the address's.
function urlOf(resolved: string | undefined, address: ReturnType<import('node:net').Server['address']> | undefined): string {
  if (address && typeof address === 'object') return `http://127.0.0.1:${address.port}/`;
  return resolved ?? 'http://127.0.0.1:5173/';
}
