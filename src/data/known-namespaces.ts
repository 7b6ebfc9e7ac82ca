/**
 * Which namespaces a profile line may use: those declared on an earlier line of the file, and
 * those already in the database, unless an earlier line removed them (and none declared them
 * again since). Database answers are cached, so each namespace is looked up
 * once per import, in batches.
 */
import type { Database } from '../db/database.js';
import { findNamespaces } from '../db/queries.js';

/** Namespaces per lookup statement: well below the bind-parameter limit. */
const LOOKUP_CHUNK = 1000;

export class KnownNamespaces {
  private readonly declared = new Set<string>();
  private readonly inDatabase = new Map<string, boolean>();
  /** Removed by an earlier line and not declared again since. */
  private readonly removed = new Set<string>();

  declare(name: string): void {
    this.declared.add(name);
    this.removed.delete(name);
  }

  /** A line removed the namespace: profiles after it need it declared again. */
  remove(name: string): void {
    this.declared.delete(name);
    this.removed.add(name);
    // Known not to exist from here on, whatever the database still says before the removal is written.
    this.inDatabase.set(name, false);
  }

  wasRemoved(name: string): boolean {
    return this.removed.has(name);
  }

  isKnown(name: string): boolean {
    return this.declared.has(name) || this.inDatabase.get(name) === true;
  }

  /** Of `names`, those neither declared so far nor looked up before. */
  unresolved(names: Iterable<string>): string[] {
    const result = new Set<string>();
    for (const name of names) {
      if (!this.declared.has(name) && !this.inDatabase.has(name)) result.add(name);
    }
    return [...result];
  }

  async lookUp(db: Database, names: readonly string[]): Promise<void> {
    for (let start = 0; start < names.length; start += LOOKUP_CHUNK) {
      const chunk = names.slice(start, start + LOOKUP_CHUNK);
      const found = new Set(await findNamespaces(db, chunk));
      for (const name of chunk) this.inDatabase.set(name, found.has(name));
    }
  }
}
