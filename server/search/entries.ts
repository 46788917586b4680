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

export interface ScanRow extends Cursor {
  /** Null for an entry whose tag was not asked for. */
  src: string | null
  data: Uint8Array | null
}

/** Optional bounds and hints of a scan step. */
export interface ScanOptions {
  /** The walk ends at this (ts, tag, id), inclusive. */
  upTo?: Cursor
  /**
   * A hint: the caller drops every entry whose data does not contain these bytes (a query's leading grep). A store
   * may then answer such an entry without its source and bytes (as one of an unwanted tag), or not at all when a
   * later entry of the answer carries the walk past it; it may also ignore the hint.
   */
  needle?: Uint8Array
}

/** The greatest key: a bound that bounds nothing. */
export const LAST_KEY: Cursor = { ts: Number.MAX_SAFE_INTEGER, tagId: 2 ** 31 - 1, id: Number.MAX_SAFE_INTEGER }

export interface EntriesRepo {
  /** Stores every entry of a batch, or none. Answers the names of the tags the batch used. */
  ingest(batch: NewEntry[]): Promise<void>
  /** The id of every known tag, by name. */
  tagIds(): Promise<Map<string, number>>
  /**
   * One step of a walk through the entries with `ts` in [after, end), in (ts, tag, id) order: the next `limit`
   * entries of any tag, each with its source and bytes when its tag is one of `tagIds` (every tag when null) and
   * without them otherwise. The walk follows the index, and the row of an entry is read only when its tag is wanted,
   * so a step costs at most `limit` index entries whatever the tags asked for. It also ends once the data read reach
   * `maxBytes` (at least one entry is answered), so a step reads about maxBytes plus one entry whatever their sizes.
   */
  scan(tagIds: readonly number[] | null, after: Cursor, end: number, limit: number, maxBytes?: number, opts?: ScanOptions): Promise<ScanRow[]>
  /** Whether the store answers (for /api/stats/ping). */
  ping(): Promise<void>
}

interface ScanDbRow {
  ts: number
  tag_id: number
  id: number
  src: string | null
  data: Uint8Array | null
}

/**
 * Prepared scans kept at most: the key is the tag set a query names, which users choose, so the cache is an LRU of a
 * fixed size (an unbounded one grew by one statement per distinct tag list launched). Past it, the least recently used
 * statement is finalized; a search still walking with it prepares it again at its next step.
 */
export const SCAN_CACHE_SIZE = 64

export class SqliteEntriesRepo implements EntriesRepo {
  /**
   * One prepared scan per tag set (the ids are written into the SQL: they are integers from the store), in least
   * recently used order (a Map keeps insertion order; a hit is moved to the end).
   */
  private readonly scans = new Map<string, Statement<ScanDbRow, [number, number, number, number, number, number, number, number]>>()
  private readonly q: {
    tagId: Statement<{ id: number }, [string]>
    addTag: Statement<{ id: number }, [string]>
    insert: Statement<unknown, [number, number, string, Uint8Array]>
    tags: Statement<{ id: number; name: string }, []>
    ping: Statement<{ one: number }, []>
  }

  constructor(private readonly db: Database) {
    this.q = {
      tagId: db.query('SELECT id FROM ingest_tags WHERE name = ?'),
      addTag: db.query('INSERT INTO ingest_tags (name) VALUES (?) RETURNING id'),
      insert: db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)'),
      tags: db.query('SELECT id, name FROM ingest_tags'),
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
  async scan(tagIds: readonly number[] | null, after: Cursor, end: number, limit: number, maxBytes = Number.POSITIVE_INFINITY, opts: ScanOptions = {}) {
    const key = tagIds === null ? '*' : tagIds.join(',')
    let q = this.scans.get(key)
    if (q) {
      this.scans.delete(key)
      this.scans.set(key, q)
      if (this.scans.size > SCAN_CACHE_SIZE) {
        const [oldest, statement] = this.scans.entries().next().value!
        this.scans.delete(oldest)
        statement.finalize()
      }
    } else {
      if (tagIds !== null && !tagIds.every(Number.isSafeInteger)) throw new Error('tag ids must be integers')
      const wanted = tagIds === null ? '1' : tagIds.length === 0 ? '0' : `tag_id IN (${tagIds.join(', ')})`
      // The CASE lets SQLite defer reading the table row (src, data) to the entries whose tag is wanted.
      // prepare, not query: bun:sqlite's own statement cache (by SQL text) must not fill up with these.
      q = this.db.prepare(
        `SELECT ts, tag_id, id, CASE WHEN ${wanted} THEN src END AS src, CASE WHEN ${wanted} THEN data END AS data
         FROM entries INDEXED BY entries_time_tag
         WHERE (ts, tag_id, id) > (?1, ?2, ?3) AND (ts, tag_id, id) <= (?6, ?7, ?8) AND ts < ?4 ORDER BY ts, tag_id, id LIMIT ?5`,
      )
      this.scans.set(key, q)
      if (this.scans.size > SCAN_CACHE_SIZE) {
        const [oldest, statement] = this.scans.entries().next().value!
        this.scans.delete(oldest)
        statement.finalize()
      }
    }
    const rows: ScanRow[] = []
    let bytes = 0
    // Row by row (iterate, not all): the walk stops reading once the byte budget is spent.
    const upTo = opts.upTo ?? LAST_KEY
    for (const r of q.iterate(after.ts, after.tagId, after.id, end, limit, upTo.ts, upTo.tagId, upTo.id)) {
      rows.push({ ts: r.ts, tagId: r.tag_id, id: r.id, src: r.src, data: r.data })
      bytes += r.data?.byteLength ?? 0
      if (bytes >= maxBytes) break
    }
    return rows
  }
  async ping() {
    this.q.ping.get()
  }
  /** Prepared scans held now (tests: the cache stays bounded). */
  get cachedScans(): number {
    return this.scans.size
  }
}
