/**
 * `npm run webhooks -- list|disable <id>|enable <id>|delete <id>`: the operator's hand on every
 * API key's webhook endpoints (docs/webhooks.md), beside the API each key has for its own. Never
 * a secret: `list` shows what an endpoint is and whether it is delivered to, not how it signs.
 */
import type { EndpointRow } from '../../db/webhook-queries.js';
import { deleteEndpoint, findEndpoint, listEndpoints, setEndpointStatus } from '../../db/webhook-queries.js';
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
  usage: 'npm run webhooks -- list | disable <id> | enable <id> | delete <id>',
  details: `
The webhook endpoints apps made with their API keys (POST /api/webhooks), all keys together.

  list            One line per endpoint, oldest first: id, API key id, URL (as JSON), status,
                  why it was disabled (as JSON, or -), created. Never a secret.
  disable <id>    Nothing more is delivered to it (a delivery under way ends as it ends); its
                  changes are delivered once it is enabled again. The app sees
                  "status":"disabled" and the reason "disabled by an operator".
  enable <id>     Deliveries go on from where they stopped, within about 10 seconds on
                  running servers; its failures are forgotten.
  delete <id>     Removes it with its waiting events and its deliveries log.

Works on the configured database (DATABASE_URL, or the embedded one in DATA_DIR). The embedded
database serves one process at a time: stop the server first, and start it again after.`,
};

/** The reason an app reads on an endpoint an operator disabled. */
const OPERATOR_DISABLED_REASON = 'disabled by an operator';

const ACTIONS = ['disable', 'enable', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

export const webhooksCommand: Command = { help: HELP, main: manageWebhooks };

async function manageWebhooks(io: CommandIo): Promise<number> {
  const { positionals } = parseArguments(io, { strict: true, allowPositionals: true, options: {} });
  const [action, ...rest] = positionals;
  if (action === 'list') {
    if (rest.length > 0) throw new UsageError(`list takes no arguments: ${rest.join(' ')}`);
    return list(io);
  }
  if (isAction(action)) {
    const [id] = rest;
    if (rest.length !== 1 || id === undefined) throw new UsageError(`${action} takes one endpoint id (see \`list\`)`);
    return change(io, action, id);
  }
  throw new UsageError(
    action === undefined ? 'Say what to do: list, disable, enable or delete' : `Unknown action: ${action}`,
  );
}

const isAction = (action: string | undefined): action is Action => (ACTIONS as readonly unknown[]).includes(action);

async function list(io: CommandIo): Promise<number> {
  await withCommandDatabase(commandConfig(io), async (database) => {
    for (const row of await listEndpoints(database.db)) io.stdout.write(`${listLine(row)}\n`);
  });
  return 0;
}

async function change(io: CommandIo, action: Action, id: string): Promise<number> {
  await withCommandDatabase(commandConfig(io), async (database) => {
    const found = await findEndpoint(database.db, undefined, id);
    if (found === undefined) {
      throw new CommandError(`No webhook endpoint has the id ${JSON.stringify(id)} (see \`webhooks list\`)`);
    }
    if (action === 'delete') {
      await deleteEndpoint(database.db, undefined, id);
      io.stdout.write(`Deleted ${id}.\n`);
      return;
    }
    const wanted = action === 'enable' ? 'active' : 'disabled';
    if (found.status === wanted) {
      // An endpoint disabled already keeps the reason it was disabled for.
      io.stdout.write(`${id} was already ${action}d.\n`);
      return;
    }
    await setEndpointStatus(database.db, undefined, id, wanted, OPERATOR_DISABLED_REASON);
    io.stdout.write(`${action === 'enable' ? 'Enabled' : 'Disabled'} ${id}.\n`);
  });
  return 0;
}

/** `<id>  <key id>  <url as JSON>  <status>  <reason as JSON | ->  created <time>`, tab-separated. */
function listLine(row: EndpointRow): string {
  return [
    row.id,
    row.apiKeyId,
    JSON.stringify(row.url),
    row.status,
    row.disabledReason === null ? '-' : JSON.stringify(row.disabledReason),
    `created ${row.createdAt.toISOString()}`,
  ].join('\t');
}
