// @vitest-environment jsdom
import { beforeEach, describe, expect, it } from 'vitest';
import { agentsFromQuery, hideToken, parseAgents, withoutToken } from './query.js';

describe('agents named in the page URL', () => {
  it('one agent with its token', () => {
    expect(parseAgents('?agent=ws://127.0.0.1:7070&token=T')).toEqual([{ url: 'ws://127.0.0.1:7070', token: 'T' }]);
  });
  it('a comma-separated list shares one token', () => {
    expect(parseAgents('?agent=ws://a:1,ws://b:2&token=T')).toEqual([
      { url: 'ws://a:1', token: 'T' },
      { url: 'ws://b:2', token: 'T' },
    ]);
  });
  it('one token per agent when as many are given', () => {
    expect(parseAgents('?agent=ws://a:1,ws://b:2&token=T1,T2').map((a) => a.token)).toEqual(['T1', 'T2']);
  });
  it('no agent, no entries', () => {
    expect(parseAgents('')).toEqual([]);
    expect(parseAgents('?token=T')).toEqual([]);
  });
  it('a stored token stands in for one the URL does not carry', () => {
    expect(parseAgents('?agent=ws://a:1', 'S')).toEqual([{ url: 'ws://a:1', token: 'S' }]);
    expect(parseAgents('?agent=ws://a:1&token=T', 'S')).toEqual([{ url: 'ws://a:1', token: 'T' }]);
  });
  it('the token is taken out of a query string, every other parameter kept as written', () => {
    expect(withoutToken('?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071&token=abc&bench')).toBe('?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071&bench');
    expect(withoutToken('?token=abc')).toBe('');
    expect(withoutToken('?to%6Ben=abc&agent=x')).toBe('?agent=x');
    expect(withoutToken('')).toBe('');
  });
});

describe('the token leaves the address bar', () => {
  beforeEach(() => {
    sessionStorage.clear();
    history.replaceState(null, '', '/');
  });

  it("at load, and the agents still come with it from this tab's session storage (a reload too)", () => {
    history.replaceState(null, '', '/?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071&token=secret-1#x');
    hideToken();
    expect(location.href).not.toContain('secret-1');
    expect(`${location.pathname}${location.search}${location.hash}`).toBe('/?agent=ws://127.0.0.1:7070,ws://127.0.0.1:7071#x');
    const both = [
      { url: 'ws://127.0.0.1:7070', token: 'secret-1' },
      { url: 'ws://127.0.0.1:7071', token: 'secret-1' },
    ];
    expect(agentsFromQuery()).toEqual(both);
    // A reload of the tab: the same address, no token in it; session storage keeps it.
    hideToken();
    expect(agentsFromQuery()).toEqual(both);
  });

  it('a URL without a token is left as it is', () => {
    history.replaceState(null, '', '/?agent=ws://a:1');
    hideToken();
    expect(location.search).toBe('?agent=ws://a:1');
    expect(agentsFromQuery()).toEqual([{ url: 'ws://a:1', token: undefined }]);
  });
});
