import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// The designer lives in apps/web; the workspace packages are TS source, bundled by Vite. The
// build ships the bundled libraries' licences as licenses.txt (MIT asks for the notice to travel
// with the code; the toolbar links it).
const root = fileURLToPath(new URL('./apps/web', import.meta.url));
// `npm start` opens the designer with its agents' token in the query string: no request the page
// makes (a link, an image, the licences page) may carry the page's URL to anyone as a referrer.
const SECURITY_HEADERS = { 'Referrer-Policy': 'no-referrer' };

export default defineConfig({
  root,
  plugins: [react()],
  worker: { format: 'es' },
  build: {
    outDir: fileURLToPath(new URL('./apps/web/dist', import.meta.url)),
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    license: { fileName: 'licenses.txt' },
  },
  server: { host: '127.0.0.1', headers: SECURITY_HEADERS, fs: { allow: [fileURLToPath(new URL('.', import.meta.url))] } },
  preview: { host: '127.0.0.1', headers: SECURITY_HEADERS },
});
