import { describe, expect, it } from 'vitest';
import type { AppNode, WrittenDocument } from '@pipeloom/core';
import { emptyDocument } from './documents.js';
import { selectionForDiagnostic } from './selection.js';
import { dataPathProblem, ioProblems, ioView } from './io.js';

const read = (id: string, params: AppNode['params']): AppNode => ({ id, kernel: 'io.read', params });
const write = (id: string, params: AppNode['params']): AppNode => ({ id, kernel: 'io.write', params });

describe('sources and sinks as the designer shows them', () => {
  it('a source shows its path as written and its shape, or where the shape comes from', () => {
    expect(ioView(read('clip', { path: 'videos:clip.y4m', shape: '48x64' }))).toEqual({ role: 'source', path: 'videos:clip.y4m', shape: '48x64' });
    expect(ioView(read('sino', { path: 'data:sino.npy' }))).toEqual({ role: 'source', path: 'data:sino.npy', shape: "from the file's header" });
    expect(ioView(write('maps', { path: 'out:maps/%05d.png' }))).toEqual({ role: 'sink', path: 'out:maps/%05d.png', shape: 'from its input' });
    expect(ioView({ id: 'p', kernel: 'matrix.produce' })).toBeUndefined();
  });

  it('a shape written as an expression shows evaluated', () => {
    expect(ioView(read('s', { path: 'd:a.raw', shape: 'HxW' }), read('s', { path: 'd:a.raw', shape: '48x64' }))?.shape).toBe('48x64');
  });

  it('a path names a file under a root, or says what is wrong and the fix', () => {
    expect(dataPathProblem('images:frames/%05d.png', 'source')).toBeUndefined();
    expect(dataPathProblem('frames/a.png', 'source')).toEqual({
      message: 'path "frames/a.png" names no data root',
      hint: 'write root:relative/path (e.g. "data:frames/%05d.png"), a root the agent serves (pipeloom agent --data NAME=DIR)',
    });
    expect(dataPathProblem('/srv/a.png', 'sink')?.message).toBe('path "/srv/a.png" names no data root');
    expect(dataPathProblem('', 'sink')?.message).toBe('names no file (its path is empty)');
    expect(dataPathProblem('out:', 'sink')?.message).toBe('path "out:" names root "out" but no file in it');
    expect(dataPathProblem('out:/etc/passwd', 'sink')).toEqual({
      message: 'path "out:/etc/passwd" is absolute inside root "out"',
      hint: 'write the file relative to the root: "out:etc/passwd"',
    });
    expect(dataPathProblem('out:../x.npy', 'sink')?.message).toBe('path "out:../x.npy" climbs out of root "out" (..)');
  });

  it('a path without a root is a problem on the node where it is written (app, def, inline graph), which selects that node', () => {
    const doc: WrittenDocument = {
      ...emptyDocument(),
      app: {
        nodes: [
          read('src', { path: 'frames/a.png' }),
          write('ok', { path: 'out:a.npy' }),
          { id: 'g', graph: { nodes: [write('inner', { path: 'a.npy' })], edges: [] } },
        ],
        edges: [],
      },
      defs: { stage: { nodes: [write('save', { path: 'b.npy' })], edges: [] } },
    };
    const ds = ioProblems(doc);
    expect(ds.map((d) => [d.path, d.message, d.severity])).toEqual([
      ['app.nodes[0].params.path', 'source src: path "frames/a.png" names no data root', 'error'],
      ['app.nodes[2].graph.nodes[0].params.path', 'sink inner: path "a.npy" names no data root', 'error'],
      ['defs.stage.nodes[0].params.path', 'sink save: path "b.npy" names no data root', 'error'],
    ]);
    expect(ds.map((d) => selectionForDiagnostic(doc, d))).toEqual([
      { kind: 'node', id: 'src' },
      { kind: 'node', id: 'inner', at: { inline: ['g'] } },
      { kind: 'node', id: 'save', at: { def: 'stage' } },
    ]);
  });
});
