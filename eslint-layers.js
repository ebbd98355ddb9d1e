// @ts-check
/**
 * The house's two import rules, as ESLint rules (see SPEC "The house"):
 *   layers:       a file imports only from its own folder or a layer below it;
 *   private-paths: only src/tuning/ reaches into a library's private files (an import of a path
 *                  inside a package, such as `undici/lib/...`).
 */
const fs = require('node:fs');
const path = require('node:path');

/**
 * Lowest first. `commands` (the DTOs and the validation pipe) sits under `mcp` and `api`, which sit
 * side by side, so both validate with one copy of each rule; `cli/` (the command line's parts) and
 * then `src/*.ts` (main, cli, the app) are on top.
 */
const LAYERS = [
  ['tuning'],
  ['common'],
  ['config'],
  ['migrations'],
  ['dcache'],
  ['fetch'],
  ['extract'],
  ['documents'],
  ['render'],
  ['profiles'],
  ['pages'],
  ['crawl'],
  ['batch'],
  ['webhooks'],
  ['cluster'],
  ['runner'],
  ['monitors'],
  ['commands'],
  ['mcp', 'api'],
  ['cli'],
];
const RANK = new Map(LAYERS.flatMap((names, rank) => names.map((n) => [n, rank])));
const ROOT = __dirname;

const isDir = (p) => fs.existsSync(p) && fs.statSync(p).isDirectory();

/** A file's layer: its folder under src/ (or migrations/), or the top for src/*.ts. */
function layerOf(file) {
  const rel = path.relative(ROOT, file).split(path.sep);
  if (rel[0] === 'migrations') return { name: 'migrations', rank: RANK.get('migrations') };
  if (rel[0] !== 'src') return undefined;
  if (rel.length === 2 && !isDir(file)) return { name: 'src', rank: LAYERS.length };
  const rank = RANK.get(rel[1]);
  return { name: rel[1], rank: rank ?? -2 };
}

/** The module specifier of an import, export-from, require() or import() node. */
function specifiers(context, report) {
  const check = (node, source) => {
    if (source && source.type === 'Literal' && typeof source.value === 'string') report(node, source.value);
  };
  return {
    ImportDeclaration: (node) => check(node, node.source),
    ExportNamedDeclaration: (node) => check(node, node.source),
    ExportAllDeclaration: (node) => check(node, node.source),
    ImportExpression: (node) => check(node, node.source),
    CallExpression: (node) => {
      if (node.callee.type === 'Identifier' && node.callee.name === 'require') check(node, node.arguments[0]);
    },
  };
}

const layers = {
  meta: { type: 'problem', schema: [], messages: { climbs: '{{from}} may not import {{to}}: {{why}}' } },
  create(context) {
    const file = context.filename;
    const own = layerOf(file);
    if (!own) return {};
    return specifiers(context, (node, spec) => {
      if (!spec.startsWith('.')) return;
      const target = layerOf(path.resolve(path.dirname(file), spec));
      if (!target || target.name === own.name) return;
      let why;
      if (own.rank === -2) why = `src/${own.name} is not a layer of SPEC "The house"`;
      else if (target.rank === -2) why = `src/${target.name} is not a layer of SPEC "The house"`;
      else if (target.rank > own.rank) why = `${target.name} sits above ${own.name}`;
      else if (target.rank === own.rank) why = `${target.name} and ${own.name} sit side by side`;
      if (why) {
        context.report({ node, messageId: 'climbs', data: { from: own.name, to: spec, why } });
      }
    });
  },
};

/** Public subpaths some packages document; any other path inside a package is private. */
const PUBLIC_SUBPATHS = [/^@modelcontextprotocol\/sdk\//, /^kysely\/helpers\//];

const privatePaths = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { private: "'{{spec}}' is inside a package: reach for it from src/tuning/ (see its README)" },
  },
  create(context) {
    const rel = path.relative(ROOT, context.filename).split(path.sep);
    if (rel[0] === 'src' && rel[1] === 'tuning') return {};
    return specifiers(context, (node, spec) => {
      if (spec.startsWith('.') || spec.startsWith('node:')) return;
      const parts = spec.split('/');
      const inside = spec.startsWith('@') ? parts.length > 2 : parts.length > 1;
      if (inside && !PUBLIC_SUBPATHS.some((re) => re.test(spec))) {
        context.report({ node, messageId: 'private', data: { spec } });
      }
    });
  },
};

module.exports = { rules: { layers, 'private-paths': privatePaths } };
