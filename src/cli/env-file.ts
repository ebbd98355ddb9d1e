import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Loads the environment file `make run` starts sift with: `.env` in the working directory if there
 * is one, else `.env.example`. A variable already set in the process environment keeps its value
 * (as with `node --env-file`). Every CLI command sees what the server run the same way sees, so
 * `token create` checks a new caller against the SIFT_TOKENS the server has. Returns the file
 * loaded, if any.
 */
export function loadEnvFile(dir: string = process.cwd()): string | undefined {
  for (const name of ['.env', '.env.example']) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) {
      process.loadEnvFile(file);
      return file;
    }
  }
  return undefined;
}
