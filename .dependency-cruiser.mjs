/**
 * The layer rules `npm run lint` checks (dependency-cruiser), made from one table: LAYERS, what
 * each folder of src/ is and which folders it may import. docs/design.md ("The layers, checked")
 * shows the same table; test/docs-layers.test.ts fails when the two differ.
 *
 * A folder imports its own files and the folders in its row, nothing else of src/. "(types)"
 * lets a folder import another's types only: the adapters name the types of the caches and
 * images the service hands them, but make and call none of them. src/app.ts (the composition
 * root) and src/main.ts may import every folder; no folder imports them.
 *
 * Besides the table: no import circle between modules, type-only imports included; Drizzle only
 * through src/db/drizzle.ts and PGlite only through src/db/pglite.ts.
 */

/** @typedef {{ folder: string; is: string; mayImport: string[] }} Layer */

/** @type {Layer[]} Bottom first: a folder imports only folders above it in this list. */
export const LAYERS = [
  { folder: 'config', is: 'the settings, read from the environment and checked', mayImport: [] },
  { folder: 'logging', is: 'the logger every layer writes to', mayImport: ['config'] },
  { folder: 'workers', is: "where a worker's module is; Buffers that own their memory", mayImport: [] },
  { folder: 'names', is: 'name ID, namespace, e-mail and look-alike rules', mayImport: [] },
  {
    folder: 'limits',
    is: 'rate limits: who a client is, its budgets, the API-key gate',
    mayImport: ['config', 'logging'],
  },
  { folder: 'errors', is: "the error model's base, the walk of a cause chain", mayImport: ['limits'] },
  {
    folder: 'profiles',
    is: 'the profile model: records, values, vCard, content hash',
    mayImport: ['names', 'workers'],
  },
  {
    folder: 'outbound',
    is: 'which addresses a request to a URL from data may reach',
    mayImport: ['config', 'logging'],
  },
  {
    folder: 'db',
    is: 'the database: schema, queries, drivers, replicas, the change feed',
    mayImport: ['config', 'logging', 'errors', 'names', 'profiles'],
  },
  {
    folder: 'loaders',
    is: "the service's way to the database: loaders, batching",
    mayImport: ['db', 'config', 'logging', 'errors', 'names', 'profiles'],
  },
  {
    folder: 'edge',
    is: 'caching headers and tags for shared caches, purging them',
    mayImport: ['db', 'config', 'logging'],
  },
  {
    folder: 'avatars',
    is: 'avatar images: fetch, resize, store variants',
    mayImport: ['outbound', 'config', 'logging', 'workers'],
  },
  {
    folder: 'service',
    is: 'the profiles service both surfaces call',
    mayImport: ['loaders', 'edge', 'avatars', 'limits', 'config', 'logging', 'errors', 'names', 'profiles'],
  },
  {
    folder: 'http',
    is: "the service's own HTTP layer every request enters",
    mayImport: ['service', 'limits', 'config', 'logging', 'errors'],
  },
  {
    folder: 'rest',
    is: 'the /api/… routes',
    mayImport: [
      'http',
      'service',
      'edge (types)',
      'avatars (types)',
      'limits',
      'config',
      'logging',
      'errors',
      'names',
      'profiles',
    ],
  },
  {
    folder: 'graphql',
    is: 'everything /graphql: transport, Yoga, the schema',
    mayImport: [
      'http',
      'service',
      'edge (types)',
      'avatars (types)',
      'limits',
      'config',
      'logging',
      'errors',
      'names',
      'profiles',
    ],
  },
  {
    folder: 'webhooks',
    is: 'delivering change events to apps',
    mayImport: ['service', 'db', 'outbound', 'config', 'logging', 'errors', 'profiles'],
  },
  {
    folder: 'ops',
    is: 'request logs, metrics, readiness, tracing, the cluster primary',
    mayImport: [
      'http',
      'service',
      'loaders',
      'db',
      'edge',
      'avatars',
      'webhooks',
      'limits',
      'config',
      'logging',
      'errors',
    ],
  },
  {
    folder: 'data',
    is: 'import, export, generation and seeding',
    mayImport: ['db', 'config', 'logging', 'errors', 'names', 'profiles', 'workers'],
  },
  {
    folder: 'cli',
    is: 'the commands',
    mayImport: ['data', 'db', 'graphql', 'limits', 'config', 'logging', 'errors'],
  },
];

const TYPES_ONLY = ' (types)';
const folderName = (entry) => (entry.endsWith(TYPES_ONLY) ? entry.slice(0, -TYPES_ONLY.length) : entry);
const anyOf = (folders) => `^src/(${folders.join('|')})/`;

/** Per folder: nothing of src/ outside its row, and values of no folder it may read types of. */
function layerRules({ folder, mayImport }) {
  const allowed = [folder, ...mayImport.map(folderName)];
  const typesOnly = mayImport.filter((entry) => entry.endsWith(TYPES_ONLY)).map(folderName);
  const rules = [
    {
      name: `layers-${folder}`,
      comment: `src/${folder} imports only ${mayImport.length > 0 ? mayImport.join(', ') : 'no other folder'} (docs/design.md, "The layers, checked").`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: '^src/', pathNot: anyOf(allowed) },
    },
  ];
  if (typesOnly.length > 0) {
    rules.push({
      name: `layers-${folder}-types-only`,
      comment: `src/${folder} imports only types of ${typesOnly.join(', ')}: the composition root makes them, the service calls them.`,
      severity: 'error',
      from: { path: `^src/${folder}/` },
      to: { path: anyOf(typesOnly), dependencyTypesNot: ['type-only'] },
    });
  }
  return rules;
}

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    ...LAYERS.flatMap(layerRules),
    {
      name: 'layers-unknown-folder',
      comment: 'Every folder of src/ has a row in the layer table (LAYERS above, docs/design.md).',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/', pathNot: [anyOf(LAYERS.map((layer) => layer.folder)), '^src/[^/]+$'] },
    },
    {
      name: 'composition-root',
      comment: 'src/app.ts and src/main.ts wire the folders together: no folder imports them.',
      severity: 'error',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+$' },
    },
    {
      name: 'no-circular',
      comment:
        'No import circle, type-only imports included: a circle makes two modules one, in an order nobody chose.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'drizzle-through-its-module',
      comment:
        "Import Drizzle from src/db/drizzle.ts: its CommonJS build spares Node 24's ES module loader most of its start-up work (docs/decisions.md, Drizzle through its CommonJS build).",
      severity: 'error',
      from: { pathNot: '^src/db/(drizzle|pglite|change-feed|statement-observer)[.]ts$' },
      to: { path: '^node_modules/drizzle-orm/' },
    },
    {
      name: 'pglite-when-opened',
      comment: 'The embedded database and its driver are loaded by src/db/pglite.ts only when it is opened.',
      severity: 'error',
      from: { pathNot: '^src/db/pglite[.]ts$' },
      to: {
        path: ['^node_modules/@electric-sql/pglite/', '^node_modules/drizzle-orm/pglite/'],
        // Types load nothing.
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API dependency-cruiser can use (tsPreCompilationDeps needs
    // one); swc parses the sources as they are written, type-only imports included, so the
    // circle rule sees those too (test/docs-layers.test.ts checks that it does).
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
