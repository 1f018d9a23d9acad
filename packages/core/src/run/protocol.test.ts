import { describe, expect, it } from 'vitest';
import { MAX_DEPLOY_STEPS, MAX_SINK_WRITES, parseMessage, PROTOCOL_VERSION } from './protocol.js';

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

  it("a ping's id is a safe integer and its t a finite number, or the ping is refused quoting a few characters", () => {
    expect(parseMessage('{"type":"ping","id":-1,"t":1.5}')).toEqual({ ok: true, message: { type: 'ping', id: -1, t: 1.5 } });
    expect(parseMessage(JSON.stringify({ type: 'ping', id: 'x'.repeat(1 << 20), t: 0 }))).toEqual({
      ok: false,
      reason: 'malformed message: "ping" id must be a safe integer, not "xxxxxxxxxxxxxxxxxxxxxxxx..."',
    });
    expect(parseMessage('{"type":"ping","id":9007199254740993,"t":0}')).toEqual({
      ok: false,
      reason: 'malformed message: "ping" id must be a safe integer, not 9007199254740992',
    });
    expect(parseMessage('{"type":"ping","id":1.5,"t":0}')).toMatchObject({ ok: false });
    expect(parseMessage('{"type":"ping","id":1,"t":1e400}')).toEqual({
      ok: false,
      reason: 'malformed message: "ping" t must be a finite number, not Infinity',
    });
    expect(parseMessage('{"type":"ping","id":1,"t":{"a":[1]}}')).toEqual({
      ok: false,
      reason: 'malformed message: "ping" t must be a finite number, not an object',
    });
    expect(parseMessage('{"type":"ping","id":1,"t":"0"}')).toMatchObject({ ok: false });
  });
});

describe('deploy progress is bounded and validated like every message', () => {
  const progress = (steps: unknown, runId: unknown = 'r1') => parseMessage(JSON.stringify({ type: 'deploy-progress', runId, steps }));

  it('accepts known steps, host-wide or of a PE', () => {
    const steps = [{ step: 'links' }, { step: 'device', pe: 'gpu0@h1' }, { step: 'kernels', pe: 'cpu@h1' }];
    expect(progress(steps)).toEqual({ ok: true, message: { type: 'deploy-progress', runId: 'r1', steps } });
    expect(progress([])).toMatchObject({ ok: true });
  });

  it('refuses unknown steps, too many, long or empty PE ids and long run ids, quoting at most a few characters', () => {
    expect(progress([{ step: 'x'.repeat(1000) }])).toEqual({
      ok: false,
      reason:
        'malformed message: "deploy-progress" steps[0].step must be one of links, freeing, allocation, device, kernels, not "xxxxxxxxxxxxxxxxxxxxxxxx..."',
    });
    expect(progress(Array.from({ length: MAX_DEPLOY_STEPS + 1 }, () => ({ step: 'links' })))).toEqual({
      ok: false,
      reason: `malformed message: "deploy-progress" steps must be a list of at most ${MAX_DEPLOY_STEPS}`,
    });
    expect(progress([{ step: 'device', pe: 'p'.repeat(257) }])).toEqual({
      ok: false,
      reason: 'malformed message: "deploy-progress" steps[0].pe must be a PE id of 1 to 256 characters',
    });
    expect(progress([{ step: 'device', pe: '' }])).toMatchObject({ ok: false });
    expect(progress([null])).toEqual({ ok: false, reason: 'malformed message: "deploy-progress" steps[0] must be an object' });
    expect(progress({ step: 'links' })).toMatchObject({ ok: false });
    expect(progress([], 'r'.repeat(300))).toEqual({
      ok: false,
      reason: 'malformed message: "deploy-progress" runId must be a string of at most 256 characters',
    });
    expect(parseMessage(JSON.stringify({ type: 'deploy-progress', runId: 'r' }))).toEqual({
      ok: false,
      reason: 'malformed message: "deploy-progress" lacks "steps"',
    });
  });
});

describe("what sinks wrote (done's writes) is bounded and validated like every field", () => {
  const done = (writes: unknown) => parseMessage(JSON.stringify({ type: 'done', runId: 'r1', cycles: 3, barrierPerCycle: 0, reports: [], writes }));
  const w = { node: 'snk', host: 'h0', pe: 'cpu@h0', path: 'out:frames/%05d.png', bytes: 4096, files: 3, iterations: 3 };

  it('takes a list of SinkWrite', () => {
    expect(done([w])).toMatchObject({ ok: true, message: { writes: [w] } });
  });

  it('refuses a list too long, a string too long, a count that is not a whole number', () => {
    expect(done(Array.from({ length: MAX_SINK_WRITES + 1 }, () => w))).toEqual({
      ok: false,
      reason: `malformed message: "done" writes must be a list of at most ${MAX_SINK_WRITES}`,
    });
    expect(done([{ ...w, path: 'x'.repeat(2000) }])).toEqual({
      ok: false,
      reason: 'malformed message: "done" writes[0].path must be a string of at most 1024 characters',
    });
    expect(done([{ ...w, bytes: -1 }])).toEqual({ ok: false, reason: 'malformed message: "done" writes[0].bytes must be a whole number of at least 0' });
    expect(done([{ ...w, files: 1.5 }])).toEqual({ ok: false, reason: 'malformed message: "done" writes[0].files must be a whole number of at least 0' });
    expect(done('nope')).toEqual({ ok: false, reason: `malformed message: "done" writes must be a list of at most ${MAX_SINK_WRITES}` });
    expect(done([null])).toEqual({ ok: false, reason: 'malformed message: "done" writes[0] must be an object' });
  });
});
