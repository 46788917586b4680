// A search's results moved as a whole: from its working files into the blob store when it is saved, out as a search
// archive (export), in from one into working files (import; archive format: archive.ts, docs/search-archive.md).
// When a search is moved (once DORMANT and finished) is the manager's (manager.ts); how is here.
//
// Guarantees:
// - A search is shown SAVED only once its row says 'saved'; until then its working files stay. The owner's quota is
//   checked before anything is copied and again in the transaction that marks it saved. A move that fails leaves
//   the search SAVING with the error (SAVE_FAILED...) and its working files, and no blob of it; a later move that
//   succeeds clears that error. A search deleted during its move keeps no blob.
// - An import stores at most what its ImportBound allows, checked record by record as the archive streams in; on
//   any failure its working files are removed and nothing is left.
import { type BlobStore, discardBlob } from '../blob'
import type { Logger } from '../runtime/log'
import { type OwnerQuota, QuotaExceeded, type Quotas } from '../store/quota'
import { ArchiveError, type ArchiveLimits, type SearchArchiveDescription, readSearchArchive, writeSearchArchive } from './archive'
import { resultSource, type StoredResults } from './records'
import { type SavedSearchRow, type SearchRecord, type SearchesRepo, searchBlobKeys, searchQueryAndTimes } from './repo'
import { ResultWriter, type WorkFiles, records, removeWorkFiles, resultBytes } from './results'

export type SaveState = 'none' | 'saving' | 'saved'

/** How the error of a failed move to the blob store starts; a later save that succeeds clears it. */
const SAVE_FAILED = 'saving failed: '
/** Imported records are written out this many at a time. */
const IMPORT_FLUSH_RECORDS = 1024

/** What a move to the blob store reads and writes of its search (the manager's Search). */
export interface Saving {
  record: SearchRecord
  save: SaveState
  /** Set when the search is deleted: a move under way discards what it put. */
  removed: boolean
  work: WorkFiles | null
  blob: { results: string; index: string } | null
}

export interface SavingDeps {
  blobs: BlobStore
  searches: SearchesRepo
  log: Logger
  /** The owner's quota (server/store/quota.ts); absent: none. */
  quotas?: Quotas
}

/** The stored row of a search that is saved or being saved. */
export function savedRow(s: Pick<Saving, 'record' | 'save' | 'blob'>): SavedSearchRow {
  return {
    ...s.record,
    state: s.save === 'saved' ? 'saved' : 'saving',
    resultsKey: s.blob?.results ?? null,
    indexKey: s.blob?.index ?? null,
  }
}

/**
 * Moves the results to the blob store and marks the search saved; answers the error when that failed (the search
 * then stays SAVING with ERROR and its working files). The owner's quota is checked before anything is copied
 * and again in the transaction that marks it saved.
 */
export async function transferToBlobs(deps: SavingDeps, s: Saving, work: WorkFiles): Promise<unknown> {
  const { blobs, searches, log } = deps
  const keys = searchBlobKeys(s.record.id)
  try {
    const quota = await deps.quotas?.of(s.record.uid)
    const size = s.record.storeSize + s.record.indexSize
    if (quota && size > 0 && quota.used + size > quota.limit) throw new QuotaExceeded(quota.limit, quota.used, size)
    await blobs.put(keys.results, Bun.file(work.results).stream())
    await blobs.put(keys.index, Bun.file(work.index).stream())
    if (s.removed) throw new Error('deleted while being saved')
    s.blob = keys
    if (s.record.error.startsWith(SAVE_FAILED)) s.record.error = ''
    // Shown SAVED only once the row says so: in a cluster, a replica that dies right after a caller saw SAVED
    // leaves a row another replica can take over (a 'saving' row it could not).
    await searches.putSaved({ ...savedRow(s), state: 'saved' }, quota?.limit)
    s.save = 'saved'
    s.work = null
    removeWorkFiles(work)
    return undefined
  } catch (e) {
    await discardBlob(blobs, keys.results, log)
    await discardBlob(blobs, keys.index, log)
    if (s.removed) return e
    s.blob = null
    s.save = 'saving'
    s.record.error = `${SAVE_FAILED}${e instanceof Error ? e.message : String(e)}`
    log.error('could not save a search', { search: s.record.id, error: s.record.error })
    return e
  }
}

/** A saved search as a search archive (.tar.gz), streamed from its stored results. */
export async function exportArchive(blobs: BlobStore, s: StoredResults & { record: SearchRecord }): Promise<ReadableStream<Uint8Array>> {
  const r = s.record
  const description = {
    ...searchQueryAndTimes(r),
    Metadata: r.metadata ?? null,
    ItemCount: r.itemCount,
  }
  return writeSearchArchive(description, records(await resultBytes(blobs, resultSource(s))))
}

/**
 * How much an import may store, checked record by record while the archive streams in: at most `ratio` times the
 * compressed bytes received so far plus `floor`, never more than `max`, and never more than the room `quota` leaves.
 */
export interface ImportBound {
  ratio: number
  floor: number
  max: number
  quota?: OwnerQuota
}

/** An archive read into working files, not yet a search. */
export interface ReadArchive {
  description: SearchArchiveDescription
  files: WorkFiles
  storeSize: number
  indexSize: number
  itemCount: number
}

/**
 * Reads a search archive into the fresh working files `files`. Resolves once the whole archive was read and found
 * sound; on any failure (ArchiveError for the archive's faults) the files are removed and nothing is left.
 */
export async function readArchiveInto(
  files: WorkFiles,
  stream: ReadableStream<Uint8Array>,
  limits: Partial<ArchiveLimits>,
  bound?: ImportBound,
): Promise<ReadArchive> {
  const writer = new ResultWriter(files)
  // The compressed bytes received so far: what an import's stored bytes are bounded relative to.
  let compressed = 0
  const counted = bound
    ? stream.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, ctl) {
            compressed += chunk.byteLength
            ctl.enqueue(chunk)
          },
        }),
      )
    : stream
  const room = bound?.quota ? bound.quota.limit - bound.quota.used : Number.POSITIVE_INFINITY
  try {
    const description = await readSearchArchive(counted, limits, async (record) => {
      writer.add(JSON.stringify(record))
      if (bound) {
        const stored = writer.bytes
        if (stored > bound.max) throw new ArchiveError(`the archive expands to more than the limit of ${bound.max} bytes`)
        if (stored > bound.ratio * compressed + bound.floor)
          throw new ArchiveError(
            `the archive expands to more than ${bound.ratio} times its compressed size (${compressed} bytes received, ${stored} bytes to store): refused as a possible zip bomb`,
          )
        if (stored > room) throw new QuotaExceeded(bound.quota!.limit, bound.quota!.used, stored)
      }
      if (writer.queued >= IMPORT_FLUSH_RECORDS) await writer.flush()
    })
    await writer.close()
    return { description, files, storeSize: writer.storeSize, indexSize: writer.indexSize, itemCount: writer.count }
  } catch (e) {
    await writer.close().catch(() => undefined)
    removeWorkFiles(files)
    throw e
  }
}
