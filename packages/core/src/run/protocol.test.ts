import { describe, expect, it } from 'vitest';
import { parseMessage, PROTOCOL_VERSION } from './protocol.js';

describe('protocol messages are validated on receipt', () => {
  it('accepts a well-formed message of an allowed type', () => {
    expect(parseMessage(JSON.stringify({ type: 'start', runId: 'r1' }))).toEqual({ ok: true, message: { type: 'start', runId: 'r1' } });
  });

  it('names what is wrong, never throws', () => {
    expect(parseMessage('{')).toEqual({ ok: false, reason: 'malformed message: not JSON' });
    expect(parseMessage('[1]')).toEqual({ ok: false, reason: 'malformed message: not an object' });
    expect(parseMessage('{"type":"rm -rf"}')).toEqual({ ok: false, reason: 'malformed message: unknown type "rm -rf"' });
    expect(parseMessage('{"type":"deploy","runId":"r"}')).toEqual({ ok: false, reason: 'malformed message: "deploy" lacks "secret"' });
    expect(parseMessage(JSON.stringify({ type: 'start', runId: 'r' }), ['auth'])).toEqual({ ok: false, reason: 'unexpected message "start" here' });
  });

  it('refuses another protocol version', () => {
    const r = parseMessage(JSON.stringify({ type: 'auth', version: PROTOCOL_VERSION + 1, token: 't' }));
    expect(r).toEqual({ ok: false, reason: `protocol version ${PROTOCOL_VERSION + 1} is not supported (this side speaks ${PROTOCOL_VERSION})` });
  });
});
