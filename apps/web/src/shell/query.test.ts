import { describe, expect, it } from 'vitest';
import { parseAgents } from './query.js';

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
});
