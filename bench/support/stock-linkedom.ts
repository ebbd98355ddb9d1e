import * as path from 'node:path';
// sift's extraction first: it loads linkedom with sift's tuning (src/tuning/linkedom.ts).
import '../../src/extract/extract';

/**
 * linkedom as a user's script loads it: a copy of its own, without sift's tuning, so that the
 * baselines sift is measured against get nothing of it (the tuning changes linkedom's classes).
 */
function loadStock(): typeof import('linkedom') {
  const root = path.dirname(require.resolve('linkedom/package.json'));
  for (const file of Object.keys(require.cache)) {
    if (file.startsWith(root + path.sep)) delete require.cache[file];
  }
  return require('linkedom') as typeof import('linkedom');
}

export const { parseHTML } = loadStock();
