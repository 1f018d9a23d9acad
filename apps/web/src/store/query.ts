// `?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071&token=T` prefills the Run view's
// connections (`npm start` opens the designer that way beside its local agents). The token
// leaves the address bar as the page loads (`hideToken`): it is kept in this tab's session
// storage, so it is in no bookmark, history entry or screenshot, and a reload still connects.
export interface AgentTarget {
  url: string;
  token?: string;
}

const TOKEN_KEY = 'pipeloom.agent-token';
// Where session storage is unavailable (blocked by the browser's settings), the token lives here
// for the page's life.
let remembered: string | undefined;

/** The agents a query string names; `storedToken` stands in for a token it does not carry. */
export function parseAgents(search: string, storedToken?: string): AgentTarget[] {
  const q = new URLSearchParams(search);
  const urls = q
    .getAll('agent')
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const tokens = (q.get('token') ?? storedToken ?? '').split(',').map((s) => s.trim());
  return urls.map((url, i) => ({ url, token: tokens[i] || tokens[0] || undefined }));
}

/** The query string without its token, every other parameter as written (the agents' URLs stay readable). */
export function withoutToken(search: string): string {
  const kept = search
    .replace(/^\?/, '')
    .split('&')
    .filter((part) => part && !new URLSearchParams(part).has('token'));
  return kept.length ? `?${kept.join('&')}` : '';
}

function storedToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return remembered;
  }
}

/** Moves a token in the address bar into this tab's session storage and out of the address (history.replaceState). Call once, before the agents are read. */
export function hideToken(): void {
  if (typeof location === 'undefined') return;
  const q = new URLSearchParams(location.search);
  if (!q.has('token')) return;
  const token = q.get('token')!;
  if (token) {
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      // Kept in memory only: a reload asks for the token again.
      remembered = token;
    }
  }
  history.replaceState(history.state, '', `${location.pathname}${withoutToken(location.search)}${location.hash}`);
}

export const agentsFromQuery = () => parseAgents(typeof location === 'undefined' ? '' : location.search, storedToken());
