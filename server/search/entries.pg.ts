// The entries store of the embedded engine over PostgreSQL: the same contract as SqliteEntriesRepo
// (server/search/entries.ts).
import { type PgPool, num, q, run, tx } from '../store/pg'
import { checkQuotaPg, lockOwner } from '../store/quota.pg'
import {
  type Cursor,
  type EntriesRepo,
  type IngestRules,
  type Ingested,
  LAST_KEY,
  type NewEntry,
  type ScanOptions,
  type ScanRow,
  type Tag,
  TagLimitExceeded,
  entryBytes,
} from './entries'

/** Rows per INSERT: 4 parameters each, well under PostgreSQL's 65535 parameters per statement. */
const INSERT_ROWS = 1000
/** The advisory lock under which tags are created: creators take turns, so each counts the others' tags. */
const TAG_CREATION_LOCK = 0x54_61_67_73 // "Tags"

export class PgEntriesRepo implements EntriesRepo {
  constructor(private readonly db: PgPool) {}

  async ingest(batch: NewEntry[], rules: IngestRules = {}): Promise<Ingested> {
    if (batch.length === 0) return { tags: [], created: [] }
    return tx(this.db, async (t) => {
      if (rules.owner !== undefined) {
        let adding = 0
        for (const e of batch) adding += entryBytes(e)
        // Under the owner's row lock, guarded writes of one owner commit one after the other (server/store/quota.pg.ts).
        if (rules.quota !== undefined) await lockOwner(t, rules.owner)
        await checkQuotaPg(t, rules.owner, rules.quota, adding)
        await run(t, 'INSERT INTO ingest_usage (uid, bytes) VALUES ($1, $2) ON CONFLICT (uid) DO UPDATE SET bytes = ingest_usage.bytes + $2', [
          rules.owner,
          adding,
        ])
      }
      const names = [...new Set(batch.map((e) => e.tag))]
      const tagsIn = (list: string[]) => q<Tag>(t, 'SELECT id, name FROM ingest_tags WHERE name = ANY($1::text[])', [list])
      const ids = new Map((await tagsIn(names)).map((r) => [r.name, r.id]))
      const created: Tag[] = []
      const missing = names.filter((n) => !ids.has(n))
      if (missing.length > 0) {
        // Creators take turns, so the count below holds every tag committed by another replica (READ COMMITTED: a
        // statement sees what committed before it began, and the previous holder committed before releasing).
        await q(t, `SELECT pg_advisory_xact_lock(${TAG_CREATION_LOCK})`)
        if (rules.maxTags !== undefined) {
          const [row] = await q<{ n: unknown }>(t, 'SELECT count(*) AS n FROM ingest_tags')
          const known = num(row!.n)
          if (known + missing.length > rules.maxTags) throw new TagLimitExceeded(rules.maxTags, known, missing.length)
        }
        // Another replica may have created some of them meanwhile: insert-if-absent, then read them all.
        created.push(...(await q<Tag>(t, 'INSERT INTO ingest_tags (name) SELECT unnest($1::text[]) ON CONFLICT (name) DO NOTHING RETURNING id, name', [missing])))
        for (const r of await tagsIn(missing)) ids.set(r.name, r.id)
      }
      if (rules.owner !== undefined) {
        // The same bytes by tag, so that deleted entries leave their owners' usage (server/search/retention-repo.ts).
        const byTag = new Map<number, number>()
        for (const e of batch) {
          const id = ids.get(e.tag)!
          byTag.set(id, (byTag.get(id) ?? 0) + entryBytes(e))
        }
        await run(
          t,
          `INSERT INTO ingest_usage_tags (uid, tag_id, bytes) SELECT $1::int, unnest($2::int[]), unnest($3::bigint[])
           ON CONFLICT (uid, tag_id) DO UPDATE SET bytes = ingest_usage_tags.bytes + excluded.bytes`,
          [rules.owner, [...byTag.keys()], [...byTag.values()]],
        )
      }
      for (let i = 0; i < batch.length; i += INSERT_ROWS) {
        const part = batch.slice(i, i + INSERT_ROWS)
        const values: unknown[] = []
        const rows = part.map((e) => {
          values.push(e.ts, ids.get(e.tag)!, e.src, e.data)
          const n = values.length
          return `($${n - 3}::bigint, $${n - 2}::int, $${n - 1}::text, $${n}::bytea)`
        })
        await run(t, `INSERT INTO entries (ts, tag_id, src, data) VALUES ${rows.join(', ')}`, values)
      }
      return { tags: [...ids].map(([name, id]) => ({ id, name })), created }
    })
  }
  async allTags() {
    return q<Tag>(this.db, 'SELECT id, name FROM ingest_tags')
  }
  async tagsNamed(names: readonly string[]) {
    return names.length === 0 ? [] : q<Tag>(this.db, 'SELECT id, name FROM ingest_tags WHERE name = ANY($1::text[])', [[...names]])
  }
  async tagsNumbered(ids: readonly number[]) {
    return ids.length === 0 ? [] : q<Tag>(this.db, 'SELECT id, name FROM ingest_tags WHERE id = ANY($1::int[])', [[...ids]])
  }
  async tagsFrom(id: number) {
    return q<Tag>(this.db, 'SELECT id, name FROM ingest_tags WHERE id >= $1', [id])
  }
  async scan(tagIds: readonly number[] | null, after: Cursor, end: number, limit: number, maxBytes = Number.POSITIVE_INFINITY, opts: ScanOptions = {}) {
    if (tagIds !== null && !tagIds.every(Number.isSafeInteger)) throw new Error('tag ids must be integers')
    // The tag ids go in as one array parameter, so every scan is the same statement text: Bun.SQL prepares (and
    // PostgreSQL keeps) a statement per distinct text and connection, and a text per tag list would be a cache
    // keyed by user input that nothing bounds.
    const wanted = '($7::int[] IS NULL OR tag_id = ANY($7::int[]))'
    // The walk follows entries_time_tag (ts, tag_id, id); the running byte count stops the answer once the
    // data reach maxBytes (the entry that crosses it included), as SQLite's row-by-row walk does.
    const upTo = opts.upTo ?? LAST_KEY
    const budget = Number.isFinite(maxBytes) ? Math.max(0, Math.floor(maxBytes)) : null
    const rows = await q(
      this.db,
      `SELECT ts, tag_id, id, src, data FROM (
         SELECT ts, tag_id, id, src, data,
                coalesce(sum(octet_length(data)) OVER (ORDER BY ts, tag_id, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM (SELECT ts, tag_id, id, CASE WHEN ${wanted} THEN src END AS src, CASE WHEN ${wanted} THEN data END AS data
               FROM entries WHERE (ts, tag_id, id) > ($1::bigint, $2::int, $3::bigint) AND (ts, tag_id, id) <= ($8::bigint, $9::int, $10::bigint)
                 AND ts < $4::bigint
               ORDER BY ts, tag_id, id LIMIT $5) w
       ) s WHERE $6::bigint IS NULL OR before < $6::bigint ORDER BY ts, tag_id, id`,
      [after.ts, after.tagId, after.id, end, limit, budget, tagIds === null ? null : [...tagIds], upTo.ts, upTo.tagId, upTo.id],
    )
    return rows.map(
      (r): ScanRow => ({
        ts: num(r.ts),
        tagId: r.tag_id as number,
        id: num(r.id),
        src: r.src as string | null,
        data: r.data === null ? null : new Uint8Array(r.data as Uint8Array),
      }),
    )
  }
  async ping() {
    await q(this.db, 'SELECT 1 AS one')
  }
  async count(tagIds: readonly number[] | null, start: number, end: number, needle?: Uint8Array) {
    if (tagIds !== null && !tagIds.every(Number.isSafeInteger)) throw new Error('tag ids must be integers')
    if (tagIds !== null && tagIds.length === 0) return 0
    // Without a needle, an index-only range of entries_time_tag (ts, tag_id, id) when the table is vacuumed.
    const withNeedle = needle !== undefined && needle.byteLength > 0
    const [row] = await q<{ n: unknown }>(
      this.db,
      `SELECT count(*) AS n FROM entries WHERE ts >= $1::bigint AND ts < $2::bigint AND ($3::int[] IS NULL OR tag_id = ANY($3::int[]))${withNeedle ? ' AND position($4::bytea in data) > 0' : ''}`,
      withNeedle ? [start, end, tagIds === null ? null : [...tagIds], needle] : [start, end, tagIds === null ? null : [...tagIds]],
    )
    return num(row!.n)
  }
}
