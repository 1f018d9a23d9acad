// `?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071&token=T` prefills the Run view's
// connections (`npm start` opens the designer that way beside its local agent).
export interface AgentTarget {
  url: string;
  token?: string;
}

export function parseAgents(search: string): AgentTarget[] {
  const q = new URLSearchParams(search);
  const urls = q.getAll('agent').flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
  const tokens = (q.get('token') ?? '').split(',').map((s) => s.trim());
  return urls.map((url, i) => ({ url, token: tokens[i] || tokens[0] || undefined }));
}

export const agentsFromQuery = () => parseAgents(typeof location === 'undefined' ? '' : location.search);
