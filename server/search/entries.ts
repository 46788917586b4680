// The entries store of the embedded engine over SQLite: ingest in one transaction per batch, and the chunked
// walk in time order that searches run. Plain objects in and out; no HTTP here.
import type { Database, Statement } from 'bun:sqlite'

export interface NewEntry {
  ts: number
  tag: string
  src: string
  data: Uint8Array
}

/** Where a walk through the entries stands: the last (ts, tag, id) it has seen. */
export interface Cursor {
  ts: number
  tagId: number
  id: number
}

export interface EntryKey extends Cursor {}

export interface EntriesRepo {
  /** Stores every entry of a batch, or none. Answers the names of the tags the batch used. */
  ingest(batch: NewEntry[]): Promise<void>
  /** The id of every known tag, by name. */
  tagIds(): Promise<Map<string, number>>
  /**
   * Up to `limit` keys after `after` with `ts` in [start, end), in (ts, tag, id) order: a walk over the index
   * alone, so a step costs at most `limit` index entries whatever the tags asked for.
   */
  keysAfter(after: Cursor, end: number, limit: number): Promise<EntryKey[]>
  /** Source and bytes of one entry (undefined when it is gone). */
  body(id: number): Promise<{ src: string; data: Uint8Array } | undefined>
  /** Whether the store answers (for /api/stats/ping). */
  ping(): Promise<void>
}

export class SqliteEntriesRepo implements EntriesRepo {
  private readonly q: {
    tagId: Statement<{ id: number }, [string]>
    addTag: Statement<{ id: number }, [string]>
    insert: Statement<unknown, [number, number, string, Uint8Array]>
    tags: Statement<{ id: number; name: string }, []>
    keys: Statement<{ ts: number; tag_id: number; id: number }, [number, number, number, number, number]>
    body: Statement<{ src: string; data: Uint8Array }, [number]>
    ping: Statement<{ one: number }, []>
  }

  constructor(private readonly db: Database) {
    this.q = {
      tagId: db.query('SELECT id FROM ingest_tags WHERE name = ?'),
      addTag: db.query('INSERT INTO ingest_tags (name) VALUES (?) RETURNING id'),
      insert: db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)'),
      tags: db.query('SELECT id, name FROM ingest_tags'),
      keys: db.query(
        `SELECT ts, tag_id, id FROM entries INDEXED BY entries_time_tag
         WHERE (ts, tag_id, id) > (?1, ?2, ?3) AND ts < ?4 ORDER BY ts, tag_id, id LIMIT ?5`,
      ),
      body: db.query('SELECT src, data FROM entries WHERE id = ?'),
      ping: db.query('SELECT 1 AS one'),
    }
  }

  async ingest(batch: NewEntry[]) {
    this.db.transaction(() => {
      const ids = new Map<string, number>()
      for (const e of batch) {
        let id = ids.get(e.tag)
        if (id === undefined) {
          id = this.q.tagId.get(e.tag)?.id ?? this.q.addTag.get(e.tag)!.id
          ids.set(e.tag, id)
        }
        this.q.insert.run(e.ts, id, e.src, e.data)
      }
    })()
  }
  async tagIds() {
    return new Map(this.q.tags.all().map((t) => [t.name, t.id]))
  }
  async keysAfter(after: Cursor, end: number, limit: number) {
    return this.q.keys.all(after.ts, after.tagId, after.id, end, limit).map((r) => ({ ts: r.ts, tagId: r.tag_id, id: r.id }))
  }
  async body(id: number) {
    return this.q.body.get(id) ?? undefined
  }
  async ping() {
    this.q.ping.get()
  }
}
