// A command's flags: node's parseArgs, with every mistake turned into one line of usage (exit 2).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usage } from './client';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `args` for `cmd` strictly: an unknown option, a missing value, a value given to a switch,
 * or one positional too many is a usage error naming the flag, never parseArgs' own stack trace.
 */
export function parse<O extends Options>(cmd: string, args: string[], options: O, maxPositionals = 1) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    const e = err as Error & { code?: string };
    const flag = /'(--?[^ ']+)/.exec(e.message)?.[1] ?? '';
    const name = flag.replace(/^-+/, '');
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') usage(`unknown option ${flag} for ${cmd}; see sift help`);
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      const o = options[name] ?? Object.values(options).find((v) => v.short === name);
      usage(
        o?.type === 'boolean'
          ? `${flag} for ${cmd} takes no value; see sift help`
          : `${flag} for ${cmd} needs a value; see sift help`,
      );
    }
    usage(`${cmd}: ${e.message.split('.')[0]}; see sift help`);
  }
  const extra = parsed.positionals[maxPositionals];
  if (extra !== undefined) usage(`unexpected argument "${extra}" for ${cmd}; see sift help`);
  return parsed;
}

/** A flag's whole number, or a usage error saying what it must be. */
export function int(flag: string, value: string | undefined, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || !Number.isSafeInteger(Number(value)))
    usage(`--${flag} needs a whole number${min > 0 ? ` of at least ${min}` : ''}, not "${value}"`);
  return Number(value);
}

/** `Name: value` flags as a header map, or a usage error. */
export function headerMap(values: string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const headers: Record<string, string> = {};
  for (const v of values) {
    const i = v.indexOf(':');
    if (i <= 0) usage(`--header needs "Name: value", not "${v}"`);
    headers[v.slice(0, i).trim()] = v.slice(i + 1).trim();
  }
  return headers;
}

/** `--action` flags, each one action as a JSON object, as a list; a usage error for one that is not JSON. */
export function actionList(values: string[] | undefined): unknown[] | undefined {
  if (!values?.length) return undefined;
  return values.map((v) => {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return usage(
        `--action needs one action as JSON, like '{"type":"click","selector":"#more"}', not "${v.slice(0, 80)}"`,
      );
    }
  });
}
