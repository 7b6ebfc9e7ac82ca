/**
 * What a trace may say about an SQL statement: its operation and the tables it names, e.g.
 * `SELECT profiles records` (OpenTelemetry's `db.query.summary`). Never its text: literals in a
 * statement could carry what a request asked for. The summary is built from SQL keywords and
 * identifiers only, after string literals and comments are taken out, and an identifier that is
 * not a plain name (letters, digits, `_`) is left out rather than shown.
 */

export interface StatementSummary {
  /** `db.query.summary`, also the span's name. */
  readonly summary: string;
  /** `db.operation.name`: the statement's first keyword, upper case (SELECT, INSERT, …). */
  readonly operation: string;
  /** `db.collection.name` when the statement names exactly one table. */
  readonly collection: string | undefined;
}

/** Tables shown in a summary at most: enough to tell statements apart. */
const MAX_TABLES = 3;

/** Distinct statement texts summarised at most before the memo starts again. */
const MEMO_SIZE = 512;

const LITERALS_AND_COMMENTS = /'(?:[^']|'')*'|\$(\w*)\$[\s\S]*?\$\1\$|--[^\n]*|\/\*[\s\S]*?\*\//g;
const FIRST_KEYWORD = /^[\s(]*([a-z]+)/i;
/**
 * A table after FROM, JOIN, INTO or UPDATE (possibly schema-qualified), and the character after
 * it: `(` after FROM or JOIN makes it a function (`from unnest($1)`), not a table.
 */
const TABLE =
  /\b(from|join|into|update)\s+(?:only\s+)?((?:"[^"]+"|[a-z_]\w*)(?:\s*\.\s*(?:"[^"]+"|[a-z_]\w*))?)(?![\w$"])\s*(\()?/gi;
const PLAIN_NAME = /^[a-z_][a-z0-9_]*$/i;

const memo = new Map<string, StatementSummary>();

export function summarizeStatement(text: string): StatementSummary {
  const known = memo.get(text);
  if (known !== undefined) return known;
  const summary = summarize(text);
  // Statement texts repeat (drizzle builds the same text for each shape of query); a bound keeps
  // texts that do not (IN lists of every length) from growing the memo.
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(text, summary);
  return summary;
}

function summarize(text: string): StatementSummary {
  const bare = text.replace(LITERALS_AND_COMMENTS, ' ');
  const operation = FIRST_KEYWORD.exec(bare)?.[1]?.toUpperCase() ?? 'SQL';
  const tables: string[] = [];
  for (const [, keyword = '', reference = '', call] of bare.matchAll(TABLE)) {
    if (call !== undefined && /^(?:from|join)$/i.test(keyword)) continue;
    const name = tableName(reference);
    if (name !== undefined && !tables.includes(name)) tables.push(name);
  }
  const shown = tables.slice(0, MAX_TABLES);
  return {
    summary: [operation, ...shown].join(' '),
    operation,
    collection: tables.length === 1 ? tables[0] : undefined,
  };
}

/** The table of `schema.table` or `"table"`, when it is a plain name. */
function tableName(reference: string): string | undefined {
  const last = reference.split('.').pop()?.trim().replace(/^"|"$/g, '');
  return last !== undefined && PLAIN_NAME.test(last) ? last : undefined;
}
