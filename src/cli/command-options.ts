/** The options of a command's arguments, `--name value` or `--name=value`, read the same way by every command. */

/**
 * `--name value` options among the arguments, the rest positional; an unknown option or one without its value is
 * `fail`'s error (a usage error of the caller's).
 */
export function readOptions(args: readonly string[], known: readonly string[], fail: (message: string) => Error): { positional: string[]; values: Map<string, string> } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!known.includes(name)) throw fail(`unknown option --${name.slice(0, 40)}`);
    const value = inline ?? args[++index];
    if (value === undefined) throw fail(`--${name} needs a value`);
    values.set(name, value);
  }
  return { positional, values };
}
