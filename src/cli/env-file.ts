import * as fs from 'node:fs';
import * as path from 'node:path';

/** The file loadEnvFile read and the variables it set, to say where a value came from. */
let loaded: { file: string; names: Set<string> } | undefined;

/**
 * Loads the environment file `make run` starts sift with: `.env` in the working directory if there
 * is one, else `.env.example`. A variable already set in the process environment keeps its value
 * (as with `node --env-file`). Every CLI command sees what the server run the same way sees, so
 * `token create` checks a new caller against the SIFT_TOKENS the server has, and the client finds
 * the server at the SIFT_HOST and PORT it listens on. Returns the file loaded, if any.
 */
export function loadEnvFile(dir: string = process.cwd()): string | undefined {
  for (const name of ['.env', '.env.example']) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) {
      const before = new Set(Object.keys(process.env));
      process.loadEnvFile(file);
      loaded = { file, names: new Set(Object.keys(process.env).filter((k) => !before.has(k))) };
      return file;
    }
  }
  return undefined;
}

/** Where a variable's value came from: the file loadEnvFile read, or the environment it ran in. */
export function originOf(name: string): string | undefined {
  if (process.env[name] === undefined) return undefined;
  return loaded?.names.has(name) ? loaded.file : 'the environment';
}
