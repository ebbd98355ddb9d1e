import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CALLER_CODES, ERROR_CODE_LIST } from '../../src/common/error-codes';

/*
 * What a caller does with openapi.json: generate a typed client (openapi-typescript, the most used
 * generator for TypeScript) and write a program against it, compiled with tsc --strict.
 */

const root = path.resolve(__dirname, '..', '..');
const committed = path.join(root, 'openapi.json');
const bin = (pkg: string, file: string) => path.join(root, 'node_modules', pkg, file);

function compile(dir: string): string {
  try {
    execFileSync(
      process.execPath,
      [
        bin('typescript', 'bin/tsc'),
        '--strict',
        '--noEmit',
        '--target',
        'es2022',
        '--module',
        'commonjs',
        '--skipLibCheck',
        path.join(dir, 'program.ts'),
      ],
      { encoding: 'utf8', stdio: 'pipe' },
    );
    return '';
  } catch (err) {
    return String((err as { stdout?: string }).stdout ?? err);
  }
}

describe('a client generated from openapi.json', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-client-'));
    execFileSync(
      process.execPath,
      [bin('openapi-typescript', 'bin/cli.js'), committed, '-o', path.join(dir, 'api.ts')],
      { stdio: 'pipe' },
    );
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('compiles with tsc --strict against every error code, target codes included, and no other', () => {
    const program = `import type { components } from './api';
type Code = components['schemas']['ErrorCode'];
type Result = components['schemas']['TargetResultDto'];
type Failure = components['schemas']['ErrorResponseDto'];

// Every code, and only those: a missing key or an unknown one is a compile error.
export const every: Record<Code, true> = {
${CALLER_CODES.map((c) => `  ${c}: true,`).join('\n')}
};

export function explain(r: Result, f: Failure): string {
${CALLER_CODES.map((c) => `  if (r.error?.code === '${c}' || f.error.code === '${c}') return '${c}';`).join('\n')}
  return '';
}

// A code sift never sends does not compile (and were the enum a plain string, this line would fail
// the compile as an unused expectation).
// @ts-expect-error
export const unknown: Code = 'no_such_code';
`;
    fs.writeFileSync(path.join(dir, 'program.ts'), program);
    expect(compile(dir)).toBe('');
  }, 120_000);

  it('lists the target codes beside the answered ones, and never `cancelled` (the caller has gone)', () => {
    const doc = JSON.parse(fs.readFileSync(committed, 'utf8'));
    const codes: string[] = doc.components.schemas.ErrorCode.enum;
    expect(codes).toEqual(
      expect.arrayContaining(['invalid_url', 'server_restarted', 'instance_lost', 'robots_denied']),
    );
    expect(codes).not.toContain('cancelled');
    expect(codes.length).toBe(ERROR_CODE_LIST.length - 1 + 3);
  });

  it('says bearer tokens are opaque, and documents every error answer as the JSON envelope only', () => {
    const doc = JSON.parse(fs.readFileSync(committed, 'utf8'));
    expect(doc.components.securitySchemes.bearer.bearerFormat).toBeUndefined();
    const errorTypes = new Set<string>();
    let errors = 0;
    for (const item of Object.values<Record<string, { responses: Record<string, { content?: object }> }>>(
      doc.paths,
    )) {
      for (const op of Object.values(item)) {
        for (const [status, res] of Object.entries(op.responses)) {
          if (Number(status) < 400 || !res.content) continue;
          errors++;
          for (const type of Object.keys(res.content)) errorTypes.add(type);
        }
      }
    }
    expect(errors).toBeGreaterThan(20);
    expect([...errorTypes]).toEqual(['application/json']);
  });
});
