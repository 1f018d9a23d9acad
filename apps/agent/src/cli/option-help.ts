import { DEFAULT_KERNEL_LOAD_TIMEOUT_S } from '../kernels/package-host.js';

// The help of the options several commands take (--param, --kernels, --kernel-load-timeout):
// one wording, laid out at each command's description column, with what differs by command
// (where the packages load, what a time-out does) passed in.

/** Help lines stay within this many characters. */
const WIDTH = 98;

/** `  FLAG  description`: the description from `column` on, wrapped at word breaks. */
export function optionHelp(flag: string, description: string, column: number): string {
  const head = `  ${flag}`;
  const lines: string[] = [];
  let line = head.length + 2 > column ? `${head}  ` : head.padEnd(column);
  let empty = true;
  for (const word of description.split(' ')) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = ' '.repeat(column);
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}

/** `--param NAME=VALUE` (read-document.ts reads it). */
export function paramHelp(column: number): string {
  return optionHelp('--param NAME=VALUE', "the value of the document's parameter NAME (a number) in place of the document's; repeatable", column);
}

/** `--kernels PATH_OR_PACKAGE` (kernels/load.ts): `where` the packages load, `note` after the rest. */
export function kernelsHelp(column: number, where = '', note = ''): string {
  return optionHelp(
    '--kernels PATH_OR_PACKAGE',
    `load a kernel package (an ES module exporting defineKernel kernels: a file, a folder or an installed npm package)${where}; repeatable${note}`,
    column,
  );
}

/** `--kernel-load-timeout S` (kernels/load.ts loadTimeoutFlag): `where` it applies, `then` what a time-out does. */
export function loadTimeoutHelp(column: number, where = '', then = ''): string {
  return optionHelp(
    '--kernel-load-timeout S',
    `time limit in seconds of importing each --kernels package and of any one call of its kernels' functions (port types, rates, cost; default ${DEFAULT_KERNEL_LOAD_TIMEOUT_S})${where}${then}`,
    column,
  );
}
