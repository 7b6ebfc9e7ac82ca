/**
 * One batch of an import, from raw bytes to what the writer sends: every line checked (valid
 * UTF-8, then parseDataLine), and the valid profiles serialized into the columns of the write
 * statement. Pure and self-contained, so it runs in a worker thread as well as inline: the
 * importer's main thread only cuts the input into batches, checks namespaces across batches
 * (which needs the order of the whole file and the database) and writes.
 *
 * Rules kept from the line-by-line importer: blank lines are skipped (they still count), a byte
 * order mark on line 1 is ignored, a line that is not valid UTF-8 is bad, and within a batch the
 * last line for a name wins (the writer's statement cannot upsert the same row twice).
 *
 * Removals: the writer deletes a batch's removed profiles and namespaces before it writes the
 * batch's namespaces and profiles, so this decides here what line order means for them. A
 * profile is written when its last line in the batch is a profile line and no later line of the
 * batch removes its namespace; it is removed when its last line is a removal. The importer
 * leaves out namespace lines that a later removal of the same namespace in the batch undoes.
 */
import { isUtf8 } from 'node:buffer';
import { skeleton } from '../names/skeleton.js';
import { contentHashOfSerialized } from '../profiles/content-hash.js';
import { type ProfileLine, parseDataLine, type RemoveLine } from './data-line.js';

export interface BatchProblem {
  line: number;
  reason: string;
  /** A namespace line that failed for another reason still declares this (valid) name. */
  declaresNamespace?: string;
}

interface BatchNamespace {
  line: number;
  name: string;
  ownerEmail: string;
}

/** A line that removes a namespace (and its profiles). */
interface BatchNamespaceRemoval {
  line: number;
  name: string;
}

/** The write statement's columns, each a JSON array (see import-writer.ts). */
export interface BatchColumns {
  /** One entry per profile (the last line of each name). */
  profileCount: number;
  names: string;
  localParts: string;
  /** The UTS #39 skeletons of the local parts (src/names/skeleton.ts), for the name check's look-alikes. */
  localSkeletons: string;
  namespaces: string;
  descriptions: string;
  images: string;
  levels: string;
  creatorEmails: string;
  contentHashes: string;
  /** One entry per record of those profiles. */
  recordCount: number;
  recordNames: string;
  recordKeys: string;
  recordTypes: string;
  recordValues: string;
}

export interface PreparedBatch {
  firstLine: number;
  lines: number;
  /** Bad lines, in line order. */
  problems: BatchProblem[];
  /** Valid namespace lines, in line order. */
  namespaces: BatchNamespace[];
  /** Every valid profile line, in line order: its number, canonical name and namespace. */
  profileLines: number[];
  profileNames: string[];
  profileNamespaces: string[];
  /** Valid lines that remove a profile. */
  profileRemovalLines: number;
  /** Profiles (canonical names) whose last line in the batch removes them. */
  removedProfiles: string[];
  /** Valid lines that remove a namespace, in line order. */
  namespaceRemovals: BatchNamespaceRemoval[];
  /** Absent when `withColumns` was false (the file is rejected anyway: nothing is written). */
  columns?: BatchColumns;
}

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Checks and serializes the lines in `bytes` (whole lines; the first is number `firstLine`). */
export function prepareBatch(bytes: Uint8Array, firstLine: number, withColumns = true): PreparedBatch {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const batch: PreparedBatch = {
    firstLine,
    lines: 0,
    problems: [],
    namespaces: [],
    profileLines: [],
    profileNames: [],
    profileNamespaces: [],
    profileRemovalLines: 0,
    removedProfiles: [],
    namespaceRemovals: [],
  };
  const profiles = new LastLines();
  let start = 0;
  while (start < buffer.length) {
    let end = buffer.indexOf(NEWLINE, start);
    const next = end < 0 ? buffer.length : end + 1;
    if (end < 0) end = buffer.length;
    const lineEnd = end > start && buffer[end - 1] === CARRIAGE_RETURN ? end - 1 : end;
    const line = firstLine + batch.lines;
    batch.lines += 1;
    checkLine(batch, profiles, buffer.subarray(start, lineEnd), line);
    start = next;
  }
  batch.removedProfiles = profiles.removed();
  if (withColumns) batch.columns = serializeColumns(profiles.written(batch.namespaceRemovals));
  return batch;
}

/** The last line of each profile name in a batch: a profile line or a removal. */
class LastLines {
  /** The last profile line of each name, in order of first appearance (which decides its id). */
  private readonly profiles = new Map<string, { line: number; profile: ProfileLine }>();
  /** The last line of each name, whatever its kind. */
  private readonly last = new Map<string, number>();

  profile(line: number, profile: ProfileLine): void {
    this.profiles.set(profile.name, { line, profile });
    this.last.set(profile.name, line);
  }

  remove(line: number, name: string): void {
    this.last.set(name, line);
  }

  /** Names whose last line removes them. */
  removed(): string[] {
    return [...this.last].flatMap(([name, line]) => (this.profiles.get(name)?.line === line ? [] : [name]));
  }

  /** Profiles whose last line is a profile line that no later removal of its namespace undoes. */
  written(namespaceRemovals: readonly BatchNamespaceRemoval[]): ProfileLine[] {
    const lastRemoval = new Map(namespaceRemovals.map((removal) => [removal.name, removal.line]));
    const result: ProfileLine[] = [];
    for (const { line, profile } of this.profiles.values()) {
      if (this.last.get(profile.name) !== line) continue;
      if (line < (lastRemoval.get(profile.namespace) ?? 0)) continue;
      result.push(profile);
    }
    return result;
  }
}

function checkLine(batch: PreparedBatch, profiles: LastLines, bytes: Buffer, line: number): void {
  if (!isUtf8(bytes)) {
    batch.problems.push({ line, reason: 'not valid UTF-8 text' });
    return;
  }
  let text = bytes.toString('utf8');
  // A byte order mark is an encoding marker, not content.
  if (line === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
  if (text.trim() === '') return;
  const parsed = parseDataLine(text);
  if (!parsed.ok) {
    batch.problems.push(
      parsed.declaresNamespace === undefined
        ? { line, reason: parsed.reason }
        : { line, reason: parsed.reason, declaresNamespace: parsed.declaresNamespace },
    );
  } else if (parsed.line.kind === 'namespace') {
    batch.namespaces.push({ line, name: parsed.line.name, ownerEmail: parsed.line.ownerEmail });
  } else if (parsed.line.kind === 'remove') {
    addRemoval(batch, profiles, parsed.line, line);
  } else {
    const profile = parsed.line;
    batch.profileLines.push(line);
    batch.profileNames.push(profile.name);
    batch.profileNamespaces.push(profile.namespace);
    profiles.profile(line, profile);
  }
}

function addRemoval(batch: PreparedBatch, profiles: LastLines, removal: RemoveLine, line: number): void {
  if (removal.what === 'namespace') {
    batch.namespaceRemovals.push({ line, name: removal.name });
  } else {
    batch.profileRemovalLines += 1;
    profiles.remove(line, removal.name);
  }
}

/**
 * The columns of the write statement. Each record value is serialized once: for its column and
 * for the content hash.
 */
function serializeColumns(profiles: readonly ProfileLine[]): BatchColumns {
  const hashes: string[] = [];
  const recordNames: string[] = [];
  const recordKeys: number[] = [];
  const recordTypes: string[] = [];
  const recordValues: string[] = [];
  for (const profile of profiles) {
    const values = profile.records.map((record) => JSON.stringify(record.value));
    hashes.push(contentHashOfSerialized(profile, values));
    for (let index = 0; index < profile.records.length; index += 1) {
      const record = profile.records[index];
      if (record === undefined) continue;
      recordNames.push(profile.name);
      recordKeys.push(record.key);
      recordTypes.push(record.type);
      recordValues.push(values[index] ?? 'null');
    }
  }
  const column = <T>(pick: (profile: ProfileLine) => T) => JSON.stringify(profiles.map(pick));
  return {
    profileCount: profiles.length,
    names: column((profile) => profile.name),
    localParts: column((profile) => profile.localPart),
    localSkeletons: column((profile) => skeleton(profile.localPart)),
    namespaces: column((profile) => profile.namespace),
    descriptions: column((profile) => profile.description),
    images: column((profile) => profile.image),
    levels: column((profile) => profile.level),
    creatorEmails: column((profile) => profile.creatorEmail),
    contentHashes: JSON.stringify(hashes),
    recordCount: recordNames.length,
    recordNames: JSON.stringify(recordNames),
    recordKeys: JSON.stringify(recordKeys),
    recordTypes: JSON.stringify(recordTypes),
    // Already JSON: the array is their concatenation, not their serialization as strings.
    recordValues: `[${recordValues.join(',')}]`,
  };
}
