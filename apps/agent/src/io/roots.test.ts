import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DataPathError, inside, parseDataFlags, realFile, splitDataPath, writeDir, MAX_DATA_ROOTS, type DataRoot } from './roots.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'pipeloom-roots-')));
const images = join(base, 'images');
const outside = join(base, 'outside');
mkdirSync(join(images, 'frames'), { recursive: true });
mkdirSync(outside);
const digits = join(base, '9lives');
mkdirSync(digits);
writeFileSync(join(images, 'a.npy'), 'x');
writeFileSync(join(outside, 'secret'), 'secret');
symlinkSync(join(outside, 'secret'), join(images, 'out-link'));
symlinkSync(outside, join(images, 'out-dir'));
symlinkSync(join(images, 'a.npy'), join(images, 'in-link'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const roots = (): DataRoot[] => {
  const r = parseDataFlags([`images=${images}`]);
  if ('error' in r) throw new Error(r.error);
  return r.roots;
};

describe('--data flags', () => {
  it('name each root, by NAME= or by the directory', () => {
    expect(parseDataFlags([`im=${images}`, outside])).toEqual({
      roots: [
        { name: 'im', dir: images },
        { name: 'outside', dir: outside },
      ],
    });
  });

  it('refuse a missing directory, a file, two roots of one name, a bad name and too many, naming the flag', () => {
    expect(parseDataFlags([`x=${join(base, 'nope')}`])).toEqual({
      error: expect.stringMatching(/--data x=.*nope: no such directory; create it or name another/),
    });
    expect(parseDataFlags([`x=${join(images, 'a.npy')}`])).toEqual({ error: expect.stringMatching(/a\.npy is not a directory/) });
    expect(parseDataFlags([`x=${images}`, `x=${outside}`])).toEqual({ error: expect.stringMatching(/two roots are named "x"/) });
    expect(parseDataFlags([digits])).toEqual({ error: expect.stringMatching(/is not a root name/) });
    expect(parseDataFlags(Array.from({ length: MAX_DATA_ROOTS + 1 }, (_, i) => `r${i}=${images}`))).toEqual({ error: expect.stringMatching(/more than 32/) });
  });

  it('--data-ro marks a root read-only', () => {
    expect(parseDataFlags([], base, [`im=${images}`])).toEqual({ roots: [{ name: 'im', dir: images, readOnly: true }] });
  });
});

describe('root:relative/path', () => {
  it('names a file inside its root', () => {
    expect(splitDataPath(roots(), 'images:frames/%05d.png').file).toBe(join(images, 'frames/%05d.png'));
    expect(realFile(roots()[0], 'images:in-link', join(images, 'in-link'))).toBe(join(images, 'a.npy'));
  });

  it('refuses an unknown root, naming the roots served', () => {
    expect(() => splitDataPath(roots(), 'video:a.y4m')).toThrow('data root "video" is unknown to this agent');
    try {
      splitDataPath(roots(), 'video:a.y4m');
    } catch (e) {
      expect((e as DataPathError).hint).toBe('this agent serves "images"');
    }
    expect(() => splitDataPath([], 'video:a.y4m')).toThrow(DataPathError);
  });

  it('refuses .., absolute paths, no root and no file', () => {
    for (const p of ['images:../outside/secret', 'images:frames/../../x', 'images:/etc/passwd', 'images:\\x', 'a.npy', 'images:'])
      expect(() => splitDataPath(roots(), p), p).toThrow(DataPathError);
  });

  it('refuses a symlink that leaves the root, for reading and writing', () => {
    const r = roots()[0];
    expect(() => realFile(r, 'images:out-link', splitDataPath(roots(), 'images:out-link').file)).toThrow('a symbolic link points outside it');
    expect(() => writeDir(r, 'images:out-dir/new.npy', splitDataPath(roots(), 'images:out-dir/new.npy').file)).toThrow('a symbolic link points outside it');
    expect(writeDir(r, 'images:new/deeper/x.npy', join(images, 'new/deeper/x.npy'))).toBe(join(images, 'new/deeper'));
  });

  it('whatever the path, what it names is inside the root or refused (fuzz)', () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', '', 'frames', 'out-link', 'out-dir', 'in-link', 'a.npy', '%05d', '/', '\\', 'C:'),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 6 }), fc.constantFrom('images:', 'images:/', 'x:', ''), (parts, prefix) => {
        const written = prefix + parts.join('/');
        let file: string;
        try {
          file = splitDataPath(roots(), written).file;
        } catch (e) {
          expect(e).toBeInstanceOf(DataPathError);
          return;
        }
        expect(inside(images, file)).toBe(true);
        try {
          expect(inside(images, realFile(roots()[0], written, file))).toBe(true);
        } catch (e) {
          if (!(e instanceof DataPathError)) expect((e as NodeJS.ErrnoException).code).toMatch(/ENOENT|ENOTDIR|ENAMETOOLONG|EINVAL/);
        }
        try {
          expect(inside(images, writeDir(roots()[0], written, file))).toBe(true);
        } catch (e) {
          if (!(e instanceof DataPathError)) expect((e as NodeJS.ErrnoException).code).toMatch(/ENOENT|ENOTDIR|ENAMETOOLONG|EINVAL/);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
