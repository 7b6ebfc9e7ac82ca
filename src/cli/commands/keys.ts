/**
 * `npm run keys -- create|list|update|revoke`: the API keys of third-party apps. The key is
 * printed once, by `create`; the database holds only its hash. Creating, updating and revoking
 * notify every running server in the same transaction (docs/api-keys.md).
 */

import { insertApiKey, listApiKeys, revokeApiKey, setApiKeyDocumentsOnly } from '../../db/api-key-queries.js';
import type { ApiKeyRow } from '../../db/schema.js';
import { generateApiKey, generateApiKeyId, hashApiKey } from '../../limits/api-key-credentials.js';
import {
  type Command,
  CommandError,
  type CommandIo,
  commandConfig,
  parseArguments,
  UsageError,
  withCommandDatabase,
} from '../command.js';

const HELP = {
  usage:
    'npm run keys -- create --name <text> [--profile-limit N/min] [--owner-check-limit N/min] [--documents-only] | list | update <id> --documents-only on|off | revoke <id>',
  details: `
API keys let a third-party app past the per-IP limits, up to limits of its own. An app sends its
key in \`Authorization: Bearer <key>\` or \`X-API-Key: <key>\` (graphql-ws: \`apiKey\` in the
connection_init payload).

  create --name <text>        Makes a key and prints it once: keep it, it cannot be shown again.
    --profile-limit N/min     Profile lookups per minute (default: API_KEY_PROFILE_LIMIT).
    --owner-check-limit N/min Owner checks per minute (default: API_KEY_OWNER_CHECK_LIMIT).
    --documents-only          The key may run only persisted documents (a \`documentId\` of the
                              PERSISTED_DOCUMENTS manifests), never a \`query\` of its own.
  list                        One line per key: id, name, limits, created, last used (to about a
                              minute), revoked, documents-only. Never the key.
  update <id> --documents-only on|off
                              Turns documents-only on or off; every running server applies it
                              within a second.
  revoke <id>                 Revokes the key; every running server refuses it within a second.

Works on the configured database (DATABASE_URL, or the embedded one in DATA_DIR). The embedded
database serves one process at a time: stop the server first, and start it again after.`,
};

const MAX_NAME_LENGTH = 200;

export const keysCommand: Command = { help: HELP, main: manageKeys };

async function manageKeys(io: CommandIo): Promise<number> {
  // `--documents-only` is a switch of create and takes on|off with update.
  const updating = io.args.find((arg) => !arg.startsWith('-')) === 'update';
  const { positionals, values } = parseArguments(io, {
    strict: true,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'profile-limit': { type: 'string' },
      'owner-check-limit': { type: 'string' },
      'documents-only': { type: updating ? 'string' : 'boolean' },
    },
  });
  const [action, ...rest] = positionals;
  const documentsOnly = values['documents-only'];
  if (action === 'create') {
    if (rest.length > 0) throw new UsageError(`create takes no arguments besides its options: ${rest.join(' ')}`);
    return create(io, values.name, values['profile-limit'], values['owner-check-limit'], documentsOnly === true);
  }
  if (values.name !== undefined || values['profile-limit'] !== undefined || values['owner-check-limit'] !== undefined) {
    throw new UsageError('--name, --profile-limit and --owner-check-limit go with create');
  }
  if (action === 'update') {
    const [id, ...others] = rest;
    if (id === undefined || others.length > 0) throw new UsageError('update takes one key id (see `keys list`)');
    return update(io, id, onOff(documentsOnly));
  }
  if (documentsOnly !== undefined) throw new UsageError('--documents-only goes with create or update');
  if (action === 'list' && rest.length === 0) return list(io);
  if (action === 'revoke' && rest.length === 1 && rest[0] !== undefined) return revoke(io, rest[0]);
  if (action === 'revoke') throw new UsageError('revoke takes one key id (see `keys list`)');
  throw new UsageError(
    action === undefined ? 'Say what to do: create, list, update or revoke' : `Unknown action: ${action}`,
  );
}

/** The value of update's `--documents-only`: on or off. */
function onOff(value: string | boolean | undefined): boolean {
  if (value === 'on' || value === 'off') return value === 'on';
  if (value === undefined) throw new UsageError('update needs --documents-only on|off: what to change');
  throw new UsageError(`--documents-only must be on or off (got "${String(value)}")`);
}

/** `N/min` or `N`: a whole number of requests per minute, at least 1. */
function parseLimit(option: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  const match = /^(\d{1,9})(?:\/min)?$/.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[1]);
  if (!Number.isInteger(value) || value < 1) {
    throw new UsageError(`--${option} must be a number of requests per minute, e.g. 1000/min (got "${text}")`);
  }
  return value;
}

async function create(
  io: CommandIo,
  name: string | undefined,
  profile: string | undefined,
  ownerCheck: string | undefined,
  documentsOnly: boolean,
) {
  const trimmed = name?.trim() ?? '';
  if (trimmed === '') throw new UsageError('create needs --name <text>: who the key is for');
  if (trimmed.length > MAX_NAME_LENGTH) throw new UsageError(`--name is longer than ${MAX_NAME_LENGTH} characters`);
  if (/[\p{Cc}]/u.test(trimmed)) throw new UsageError('--name must not contain control characters');
  const profileLimit = parseLimit('profile-limit', profile);
  const ownerCheckLimit = parseLimit('owner-check-limit', ownerCheck);
  const config = commandConfig(io);
  await withCommandDatabase(config, async (database) => {
    const key = generateApiKey();
    const row = await insertApiKey(database.db, {
      id: generateApiKeyId(),
      name: trimmed,
      keyHash: hashApiKey(key),
      profileLimit,
      ownerCheckLimit,
      documentsOnly,
    });
    // Printed at once, before the database is closed: a key stored is a key shown.
    io.stdout.write(`${key}\n`);
    io.stderr.write(
      `Created ${row.id} (${limitsText(row, config)}${row.documentsOnly ? ', documents only' : ''}). The key above is shown only now: give it to the app, keep no copy.\n`,
    );
  });
  return 0;
}

async function list(io: CommandIo) {
  const config = commandConfig(io);
  await withCommandDatabase(config, async (database) => {
    for (const row of await listApiKeys(database.db)) io.stdout.write(`${listLine(row, config)}\n`);
  });
  return 0;
}

async function update(io: CommandIo, id: string, documentsOnly: boolean) {
  await withCommandDatabase(commandConfig(io), async (database) => {
    const result = await setApiKeyDocumentsOnly(database.db, id, documentsOnly);
    if (result === 'unknown') throw new CommandError(`No API key has the id ${JSON.stringify(id)} (see \`keys list\`)`);
    if (result === 'revoked') throw new CommandError(`${id} is revoked: there is nothing to update`);
    io.stdout.write(`Updated ${id}: documents-only ${documentsOnly ? 'on' : 'off'}.\n`);
  });
  return 0;
}

async function revoke(io: CommandIo, id: string) {
  await withCommandDatabase(commandConfig(io), async (database) => {
    const result = await revokeApiKey(database.db, id);
    if (result === 'unknown') throw new CommandError(`No API key has the id ${JSON.stringify(id)} (see \`keys list\`)`);
    io.stdout.write(result === 'revoked' ? `Revoked ${id}.\n` : `${id} was already revoked.\n`);
  });
  return 0;
}

type Defaults = { apiKeyProfileLimit: number; apiKeyOwnerCheckLimit: number };

function limitsText(row: ApiKeyRow, config: Defaults): string {
  const limit = (own: number | null, fallback: number) => (own === null ? `${fallback}/min (default)` : `${own}/min`);
  return `profile ${limit(row.profileLimit, config.apiKeyProfileLimit)}, owner check ${limit(row.ownerCheckLimit, config.apiKeyOwnerCheckLimit)}`;
}

/**
 * `<id>  <name as JSON>  <limits>  created <time>  last used <time|never>  revoked <time|no>
 * documents-only <on|off>`, tab-separated.
 */
function listLine(row: ApiKeyRow, config: Defaults): string {
  const time = (value: Date | null, none: string) => (value === null ? none : value.toISOString());
  return [
    row.id,
    JSON.stringify(row.name),
    limitsText(row, config),
    `created ${time(row.createdAt, '-')}`,
    `last used ${time(row.lastUsedAt, 'never')}`,
    `revoked ${time(row.revokedAt, 'no')}`,
    `documents-only ${row.documentsOnly ? 'on' : 'off'}`,
  ].join('\t');
}
