// The entries store of the embedded engine over SQLite: ingest in one transaction per batch, and the chunked
// walk in time order that searches run. Plain objects in and out; no HTTP here.
import type { Database, Statement } from 'bun:sqlite'
import { checkQuotaSqlite } from '../store/quota'

export interface NewEntry {
  ts: number
  tag: string
  src: string
  data: Uint8Array
}

/** An ingest tag: its name and the store's number for it (stable, never reused). */
export interface Tag {
  id: number
  name: string
}

/** What an ingest must respect beside the entries' own validity. */
export interface IngestRules {
  /** The user the batch counts for: its bytes (entryBytes) are added to that user's stored bytes (server/store/quota.ts). */
  owner?: number
  /** The owner's quota: a batch that would take the owner past it is refused whole (QuotaExceeded). */
  quota?: number
  /** Distinct tags the store may hold: a batch whose new tags would pass it is refused whole (TagLimitExceeded). */
  maxTags?: number
}

/** What a stored batch used: the id of each of its tags, and which of them it created. */
export interface Ingested {
  tags: Tag[]
  created: Tag[]
}

/** Refusal of a batch whose new tags would take the store past its number of distinct tags. */
export class TagLimitExceeded extends Error {
  override name = 'TagLimitExceeded'
  constructor(
    readonly limit: number,
    /** Distinct tags the store holds now. */
    readonly known: number,
    /** New tags the batch names. */
    readonly adding: number,
  ) {
    super(`the store holds ${known} distinct tags of at most ${limit}, and this batch would add ${adding}`)
  }
}

/**
 * The bytes an entry counts for in its owner's quota: its data, tag and source, and 16 for its time and number, so
 * that empty entries are not free.
 */
export function entryBytes(e: NewEntry): number {
  return e.data.byteLength + Buffer.byteLength(e.tag) + Buffer.byteLength(e.src) + 16
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
  /**
   * Stores every entry of a batch, or none: refused whole (nothing changed) past the owner's quota or the store's
   * number of distinct tags (see IngestRules). Answers the id of each tag the batch used.
   */
  ingest(batch: NewEntry[], rules?: IngestRules): Promise<Ingested>
  /** Every known tag (read once per process, by the tag directory: server/search/tags.ts). */
  allTags(): Promise<Tag[]>
  /** The known tags among `names` (one indexed lookup each). */
  tagsNamed(names: readonly string[]): Promise<Tag[]>
  /** The known tags among `ids`. */
  tagsNumbered(ids: readonly number[]): Promise<Tag[]>
  /** The tags numbered `id` or above (what another replica created since a number it announced). */
  tagsFrom(id: number): Promise<Tag[]>
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
  /**
   * How many entries have `ts` in [start, end) and one of the tags `tagIds` (every tag when null): exactly the entries
   * a walk of that range answers with data, counted without reading their data (a query that is only `count`).
   * With `needle`, only the entries whose data contain those bytes (a query that is `grep <literal> | count`).
   * Optional: without it a count walks the entries.
   */
  count?(tagIds: readonly number[] | null, start: number, end: number, needle?: Uint8Array): Promise<number>
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
/** Adds a batch's bytes to its owner's usage (SQLite). */
export const ADD_USAGE_SQL = 'INSERT INTO ingest_usage (uid, bytes) VALUES (?1, ?2) ON CONFLICT (uid) DO UPDATE SET bytes = bytes + ?2'
/** The same bytes by tag, so that deleted entries leave their owners' usage (server/search/retention-repo.ts). */
export const ADD_TAG_USAGE_SQL =
  'INSERT INTO ingest_usage_tags (uid, tag_id, bytes) VALUES (?1, ?2, ?3) ON CONFLICT (uid, tag_id) DO UPDATE SET bytes = bytes + ?3'
/**
 * The highest id a row has, and the highest a segment holds or was reserved for (rows compacted into segments were
 * deleted): the highest of the ids registrations deleted or reserved (server_settings, written by SqliteSegmentsRepo),
 * and for segments registered before that was kept, the id of their last key.
 */
export const TOP_IDS_SQL = `SELECT coalesce((SELECT max(id) FROM entries), 0) AS rows,
  max(coalesce((SELECT max(max_id) FROM entry_segments), 0),
      coalesce((SELECT CAST(value AS INTEGER) FROM server_settings WHERE key = 'entries.segment_top_id'), 0)) AS segments`

/**
 * Per SQLite store, the highest row id reserved (in memory) by a batch being written straight into segments: rows
 * are numbered above it until the segments register it (SqliteSegmentsRepo.registerIngested writes it into
 * server_settings with them). In memory, so that a batch refused or failed leaves the store as it was; one process
 * writes a SQLite store, so no other can draw these ids meanwhile.
 */
const reservedTop = new WeakMap<Database, number>()

/** Reserves `n` consecutive row ids of the store above every row, segment and reservation; answers the first. */
export function reserveRowIds(db: Database, n: number): number {
  const top = db.query<{ rows: number; segments: number }, []>(TOP_IDS_SQL).get()!
  const first = Math.max(top.rows, top.segments, reservedTop.get(db) ?? 0) + 1
  reservedTop.set(db, first + n - 1)
  return first
}

/** Rows one INSERT statement of a batch writes (4 parameters each, well under SQLite's bound of 32,766). */
const INSERT_ROWS = 64

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
    insertAt: Statement<unknown, [number, number, number, string, Uint8Array]>
    insertMany: Statement<unknown, (number | string | Uint8Array)[]>
    topIds: Statement<{ rows: number; segments: number }, []>
    tags: Statement<Tag, []>
    tagById: Statement<Tag, [number]>
    tagsFrom: Statement<Tag, [number]>
    countTags: Statement<{ n: number }, []>
    addUsage: Statement<unknown, [number, number]>
    addTagUsage: Statement<unknown, [number, number, number]>
    ping: Statement<{ one: number }, []>
    count: Statement<{ n: number }, [number, number, string | null]>
    countWith: Statement<{ n: number }, [number, number, string | null, Uint8Array]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      tagId: db.query('SELECT id FROM ingest_tags WHERE name = ?'),
      addTag: db.query('INSERT INTO ingest_tags (name) VALUES (?) RETURNING id'),
      insert: db.query('INSERT INTO entries (ts, tag_id, src, data) VALUES (?, ?, ?, ?)'),
      insertAt: db.query('INSERT INTO entries (id, ts, tag_id, src, data) VALUES (?, ?, ?, ?, ?)'),
      insertMany: db.query(`INSERT INTO entries (ts, tag_id, src, data) VALUES ${Array(INSERT_ROWS).fill('(?, ?, ?, ?)').join(', ')}`),
      topIds: db.query(TOP_IDS_SQL),
      tags: db.query('SELECT id, name FROM ingest_tags'),
      tagById: db.query('SELECT id, name FROM ingest_tags WHERE id = ?'),
      tagsFrom: db.query('SELECT id, name FROM ingest_tags WHERE id >= ?'),
      countTags: db.query('SELECT count(*) AS n FROM ingest_tags'),
      addUsage: db.query(ADD_USAGE_SQL),
      addTagUsage: db.query(ADD_TAG_USAGE_SQL),
      ping: db.query('SELECT 1 AS one'),
      // The time range walks the entries_time_tag index (ts, tag_id): the count reads no table row.
      count: db.query(
        'SELECT count(*) AS n FROM entries INDEXED BY entries_time_tag WHERE ts >= ?1 AND ts < ?2 AND (?3 IS NULL OR tag_id IN (SELECT value FROM json_each(?3)))',
      ),
      // instr over blobs compares bytes.
      countWith: db.query(
        'SELECT count(*) AS n FROM entries INDEXED BY entries_time_tag WHERE ts >= ?1 AND ts < ?2 AND (?3 IS NULL OR tag_id IN (SELECT value FROM json_each(?3))) AND instr(data, ?4) > 0',
      ),
    }
  }

  async ingest(batch: NewEntry[], rules: IngestRules = {}): Promise<Ingested> {
    if (batch.length === 0) return { tags: [], created: [] }
    // One write transaction at a time on SQLite: the quota sum and the tag count below see every committed batch.
    return this.db.transaction(() => {
      if (rules.owner !== undefined) {
        let adding = 0
        for (const e of batch) adding += entryBytes(e)
        checkQuotaSqlite(this.db, rules.owner, rules.quota, adding)
        this.q.addUsage.run(rules.owner, adding)
      }
      const ids = new Map<string, number>()
      const missing: string[] = []
      for (const name of new Set(batch.map((e) => e.tag))) {
        const id = this.q.tagId.get(name)?.id
        if (id === undefined) missing.push(name)
        else ids.set(name, id)
      }
      const created: Tag[] = []
      if (missing.length > 0) {
        if (rules.maxTags !== undefined) {
          const known = this.q.countTags.get()!.n
          if (known + missing.length > rules.maxTags) throw new TagLimitExceeded(rules.maxTags, known, missing.length)
        }
        for (const name of missing) {
          const id = this.q.addTag.get(name)!.id
          ids.set(name, id)
          created.push({ id, name })
        }
      }
      if (rules.owner !== undefined) {
        const byTag = new Map<number, number>()
        for (const e of batch) {
          const id = ids.get(e.tag)!
          byTag.set(id, (byTag.get(id) ?? 0) + entryBytes(e))
        }
        for (const [id, bytes] of byTag) this.q.addTagUsage.run(rules.owner, id, bytes)
      }
      // SQLite gives a new row the highest row id plus one: once compaction has deleted the highest rows, that is an id
      // a segment already holds, and a walk takes the row for that segment's entry and skips it (an entry lost to
      // every search). The first row of a batch then takes the id after the segments' highest; the rest follow it.
      // The same above ids reserved for a batch being written into segments (reserveRowIds).
      const top = this.q.topIds.get()!
      const above = Math.max(top.segments, reservedTop.get(this.db) ?? 0)
      let i = 0
      if (above > top.rows && batch.length > 0) {
        const e = batch[0]!
        this.q.insertAt.run(above + 1, e.ts, ids.get(e.tag)!, e.src, e.data)
        i = 1
      }
      // Rows INSERT_ROWS at a time, one statement each (a quarter less CPU per row than one statement per row), the
      // rest one by one. Ids are drawn in order as before: each row takes the highest id plus one.
      const args: (number | string | Uint8Array)[] = new Array(4 * INSERT_ROWS)
      for (; i + INSERT_ROWS <= batch.length; i += INSERT_ROWS) {
        for (let j = 0; j < INSERT_ROWS; j++) {
          const e = batch[i + j]!
          args[4 * j] = e.ts
          args[4 * j + 1] = ids.get(e.tag)!
          args[4 * j + 2] = e.src
          args[4 * j + 3] = e.data
        }
        this.q.insertMany.run(...args)
      }
      for (; i < batch.length; i++) {
        const e = batch[i]!
        this.q.insert.run(e.ts, ids.get(e.tag)!, e.src, e.data)
      }
      return { tags: [...ids].map(([name, id]) => ({ id, name })), created }
    })()
  }
  async allTags() {
    return this.q.tags.all()
  }
  async tagsNamed(names: readonly string[]) {
    return names.flatMap((name) => {
      const t = this.q.tagId.get(name)
      return t ? [{ id: t.id, name }] : []
    })
  }
  async tagsNumbered(ids: readonly number[]) {
    return ids.flatMap((id) => this.q.tagById.all(id))
  }
  async tagsFrom(id: number) {
    return this.q.tagsFrom.all(id)
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
  async count(tagIds: readonly number[] | null, start: number, end: number, needle?: Uint8Array) {
    if (tagIds !== null && !tagIds.every(Number.isSafeInteger)) throw new Error('tag ids must be integers')
    if (tagIds !== null && tagIds.length === 0) return 0
    const tags = tagIds === null ? null : JSON.stringify(tagIds)
    if (needle !== undefined && needle.byteLength > 0) return this.q.countWith.get(start, end, tags, needle)!.n
    return this.q.count.get(start, end, tags)!.n
  }
  /** Prepared scans held now (tests: the cache stays bounded). */
  get cachedScans(): number {
    return this.scans.size
  }
}
