/**
 * Today's figures in bench/README.md, rendered from the result files the benchmarks write
 * (bench/results/*.json): one table per benchmark, each figure beside its target and whether it
 * is met. `npm run bench:readme` rewrites the tables between their markers
 * (`<!-- figures:NAME -->` … `<!-- /figures:NAME -->`); test/bench-readme.test.ts fails when the
 * committed README differs from what this renders, so the README never shows other figures than
 * the results beside it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLAT_RSS_MB_PER_HOUR } from './soak-stats.js';

type Verdict = 'met' | 'missed' | 'reported';

interface FigureRow {
  label: string;
  value: string;
  target: string;
  verdict: Verdict;
}

interface FigureTable {
  /** The marker's name in the README. */
  name: string;
  /** The result file, relative to bench/results. */
  source: string;
  date: string;
  rows: FigureRow[];
}

type Json = Record<string, unknown>;

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const README = path.join(BENCH, 'README.md');

const read = (results: string, file: string): Json =>
  JSON.parse(readFileSync(path.join(results, file), 'utf8')) as Json;
const number = (value: unknown): number => (typeof value === 'number' ? value : Number.NaN);
const fixed = (value: number, digits = 1): string => value.toLocaleString('en-US', { maximumFractionDigits: digits });
const day = (iso: unknown): string => (typeof iso === 'string' ? iso.slice(0, 16).replace('T', ' ') : '');

interface Spread {
  median: number;
  lowest: number;
  highest: number;
}

const spread = (value: unknown): Spread => {
  const object = (value ?? {}) as Json;
  return { median: number(object.median), lowest: number(object.lowest), highest: number(object.highest) };
};

/** `npm run bench`'s own targets, as it wrote them (label, value, target, met). */
function serviceTable(results: string, file: string, name: string): FigureTable {
  const json = read(results, file);
  const targets = (json.targets ?? []) as Array<{ label: string; value: string; target: string; met: boolean }>;
  return {
    name,
    source: file,
    date: day(json.date),
    rows: targets.map((row) => ({
      label: row.label,
      value: row.value,
      target: row.target,
      verdict: row.target === 'reported' ? 'reported' : row.met ? 'met' : 'missed',
    })),
  };
}

/** Issue 61's targets: the import with the log against without, and pages of the log. */
function changeLogTable(results: string): FigureTable {
  const importRun = read(results, 'change-log-import.json');
  const feed = read(results, 'change-log-feed.json');
  const ratio = spread((importRun.ratios as Json).own);
  const targetRatio = number(importRun.targetRatio);
  const rows: FigureRow[] = [
    {
      label: `an import of ${fixed(number(importRun.profiles), 0)} changed profiles, with the log / without`,
      value: `${fixed(ratio.median, 2)}× (${importRun.repetitions} paired repetitions: ${fixed(ratio.lowest, 2)}-${fixed(ratio.highest, 2)}×)`,
      target: `≤ ${fixed(targetRatio, 2)}×`,
      verdict: ratio.median <= targetRatio ? 'met' : 'missed',
    },
    {
      label: 'bytes per log entry, table and indexes',
      value: fixed(number((feed.logSize as Json).bytesPerEntry), 0),
      target: 'reported',
      verdict: 'reported',
    },
  ];
  const targetP99 = number(feed.targetP99Ms);
  for (const result of (feed.results ?? []) as Json[]) {
    const p99 = spread(result.p99);
    rows.push({
      label: `${result.label}: p99`,
      value: `${fixed(p99.median)} ms (rounds ${fixed(p99.lowest)}-${fixed(p99.highest)})`,
      target: `≤ ${fixed(targetP99)} ms`,
      verdict: p99.median <= targetP99 ? 'met' : 'missed',
    });
  }
  return { name: 'change-log', source: 'change-log-import.json, change-log-feed.json', date: day(feed.date), rows };
}

/** The import into a serving database: how long, and what it does to readers' p99. */
function importTable(results: string): FigureTable {
  const json = read(results, 'import.json');
  const figures = json.figures as Record<string, { min: number; median: number; max: number }>;
  const row = (label: string, key: string, unit: string, digits = 1): FigureRow => {
    const figure = figures[key] ?? { min: Number.NaN, median: Number.NaN, max: Number.NaN };
    return {
      label,
      value: `${fixed(figure.median, digits)}${unit} (${fixed(figure.min, digits)}-${fixed(figure.max, digits)})`,
      target: 'reported',
      verdict: 'reported',
    };
  };
  return {
    name: 'import',
    source: 'import.json',
    date: day(json.date),
    rows: [
      row(`an import of ${fixed(number(json.profiles), 0)} profiles, wall time`, 'importSeconds', ' s'),
      row('readers p99 during the import / before', 'readerP99Ratio', '×', 2),
    ],
  };
}

/** The soak: whether memory stays flat under mixed load and imports, and no errors. */
function soakTable(results: string): FigureTable {
  const json = read(results, 'soak-latest.json');
  const summary = json.summary as Json;
  const slope = summary.rssSlope as Json;
  const failures = number(summary.errors) + number(summary.non2xx) + number(summary.importsFailed);
  return {
    name: 'soak',
    source: 'soak-latest.json',
    date: day(json.date),
    rows: [
      {
        label: 'RSS after warm-up',
        value: `${summary.verdict} (${fixed(number(slope.slope))} ± ${fixed(number(slope.standardError))} MB/h)`,
        target: `flat (≤ ${FLAT_RSS_MB_PER_HOUR} MB/h)`,
        verdict: summary.verdict === 'flat' ? 'met' : 'missed',
      },
      {
        label: `errors, non-2xx answers and failed imports of ${fixed(number(summary.requests), 0)} requests`,
        value: fixed(failures, 0),
        target: '0',
        verdict: failures === 0 ? 'met' : 'missed',
      },
    ],
  };
}

/** The outage: from the database's return to each instance's first successful lookup. */
function outageTable(results: string): FigureTable {
  const json = read(results, 'outage-recovery.json');
  const TARGET_MS = 1000;
  const rows = ((json.results ?? []) as Json[]).map((result): FigureRow => {
    const times = ((result.rounds ?? []) as Json[]).map((round) => number(round.firstSuccessMs));
    const slowest = Math.max(...times);
    return {
      label: `${result.instances} instance(s): database back to the first successful lookup, slowest of ${times.length}`,
      value: `${fixed(slowest, 0)} ms`,
      target: `≤ ${fixed(TARGET_MS, 0)} ms`,
      verdict: slowest <= TARGET_MS ? 'met' : 'missed',
    };
  });
  return { name: 'outage', source: 'outage-recovery.json', date: day(json.at), rows };
}

/** Webhook deliveries (bench/webhooks.ts): issue 62's targets, the worst repetition of each. */
function webhooksTable(results: string): FigureTable {
  const json = read(results, 'webhooks.json');
  const imports = (json.imports ?? []) as Json[];
  const fanout = (json.fanout ?? {}) as Json;
  const slowestSeconds = Math.max(...imports.map((run) => number(run.endToLastSeconds)));
  const lowestRate = Math.min(...imports.map((run) => number(run.deliveriesPerSecond)));
  const ratios = imports.map((run) => number(run.p99Ratio)).sort((a, b) => a - b);
  const worstRatio = ratios[ratios.length - 1] ?? Number.NaN;
  const worstEndpointMs = number(fanout.worstEndpointP99Ms);
  const runs = `${imports.length} repetition(s)`;
  return {
    name: 'webhooks',
    source: 'webhooks.json',
    date: day(json.at),
    rows: [
      {
        label: `an import of 10,000 changed names, one endpoint: all delivered after the import ended, slowest of ${runs}`,
        value: `${fixed(slowestSeconds)} s`,
        target: '≤ 10 s',
        verdict: slowestSeconds <= 10 ? 'met' : 'missed',
      },
      {
        label: `the same: deliveries a second, lowest of ${runs}`,
        value: fixed(lowestRate, 0),
        target: '≥ 1,000',
        verdict: lowestRate >= 1000 ? 'met' : 'missed',
      },
      {
        label: `REST lookups' p99 during the deliveries over their p99 alone, highest of ${runs} (${ratios.map((ratio) => `${fixed(ratio, 2)}×`).join(', ')})`,
        value: `${fixed(worstRatio, 2)}×`,
        target: '≤ 1.5×',
        verdict: worstRatio <= 1.5 ? 'met' : 'missed',
      },
      {
        label: `${fixed(number(fanout.endpoints), 0)} endpoints, one never answering: the others' p99 from commit to delivery, worst endpoint (median endpoint ${fixed(number(fanout.medianEndpointP99Ms), 0)} ms)`,
        value: `${fixed(worstEndpointMs, 0)} ms`,
        target: '≤ 1,000 ms',
        verdict: worstEndpointMs <= 1000 ? 'met' : 'missed',
      },
    ],
  };
}

export function figureTables(results = path.join(BENCH, 'results')): FigureTable[] {
  return [
    serviceTable(results, 'latest-100000.json', 'service-100000'),
    serviceTable(results, 'latest-1000000.json', 'service-1000000'),
    changeLogTable(results),
    importTable(results),
    soakTable(results),
    outageTable(results),
    webhooksTable(results),
  ];
}

const cell = (text: string): string => text.replaceAll('|', '\\|');

function renderTable(table: FigureTable): string {
  const missed = table.rows.filter((row) => row.verdict === 'missed').length;
  const judged = table.rows.filter((row) => row.verdict !== 'reported').length;
  const verdicts = judged === 0 ? 'figures without a target' : `${judged - missed} of ${judged} targets met`;
  const rows = [
    ['figure', 'today', 'target', ''],
    ...table.rows.map((row) => [
      cell(row.label),
      cell(row.value),
      cell(row.target),
      row.verdict === 'reported' ? '' : row.verdict,
    ]),
  ];
  // Padded as the formatter (Biome) pads a Markdown table, so that formatting leaves it alone.
  const widths = rows[0]?.map((_, column) => Math.max(3, ...rows.map((cells) => (cells[column] ?? '').length))) ?? [];
  const line = (cells: string[]) => `| ${cells.map((text, column) => text.padEnd(widths[column] ?? 3)).join(' | ')} |`;
  const [header = [], ...body] = rows;
  return [
    `From \`bench/results/${table.source.replaceAll(', ', '`, `bench/results/')}\`, ${table.date} UTC: ${verdicts}.`,
    '',
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...body.map(line),
  ].join('\n');
}

/** The README with every table rendered between its markers; throws when a marker is missing. */
export function withFigures(readme: string, tables: FigureTable[]): string {
  let text = readme;
  for (const table of tables) {
    const start = `<!-- figures:${table.name} -->`;
    const end = `<!-- /figures:${table.name} -->`;
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`bench/README.md has no ${start} … ${end}`);
    text = `${text.slice(0, from + start.length)}\n${renderTable(table)}\n${text.slice(to)}`;
  }
  return text;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(README, withFigures(readFileSync(README, 'utf8'), figureTables()));
  console.log('bench/README.md: figures rendered from bench/results');
}
