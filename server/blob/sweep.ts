// Keeps the blob store and the metadata consistent after crashes and deletions that could not clean up (a
// deleted user's items go by cascade, their blobs stay): blobs that no metadata points at are removed once
// they are older than a grace period (an upload writes its blob before its metadata, possibly on another
// replica), and metadata whose blob is missing is reported.
import type { BlobStore } from './index'

export interface BlobReference {
  key: string
  /** What holds the key, for the report: `resource <guid>`, `file <ThingUUID>`. */
  item: string
  /** The blob is being written (a search being saved): kept, and not reported when it does not exist yet. */
  pending?: boolean
}

export interface SweepResult {
  /** Keys of the unreferenced blobs that were deleted. */
  removed: string[]
  /** Unreferenced blobs younger than the grace period, left for a later sweep. */
  keptYoung: number
  /** Items whose blob is missing from the store. */
  missing: BlobReference[]
}

export async function sweepBlobs(opts: {
  blobs: BlobStore
  /** Every blob key the metadata points at, from each area that keeps blobs. */
  references: () => Promise<BlobReference[]>
  now: number
  graceMs: number
  log: { info(msg: string, fields?: Record<string, unknown>): void; warn(msg: string, fields?: Record<string, unknown>): void }
}): Promise<SweepResult> {
  const { blobs, now, graceMs, log } = opts
  // The listing comes first: a blob written (and referenced) after it is not seen, so it cannot be taken for
  // an orphan; a reference read after the listing to a blob written meanwhile is checked below by stat.
  const present = new Map<string, Date>()
  for await (const entry of blobs.list()) present.set(entry.key, entry.lastModified)
  const references = await opts.references()
  const referenced = new Set(references.map((r) => r.key))

  const result: SweepResult = { removed: [], keptYoung: 0, missing: [] }
  for (const [key, modified] of present) {
    if (referenced.has(key)) continue
    if (now - modified.getTime() < graceMs) {
      result.keptYoung++
      continue
    }
    await blobs.delete(key)
    result.removed.push(key)
  }
  for (const ref of references) {
    if (ref.pending || present.has(ref.key) || (await blobs.stat(ref.key))) continue
    result.missing.push(ref)
    log.warn('blob missing for an item', { item: ref.item, key: ref.key })
  }
  log.info('blob sweep', { removed: result.removed.length, keptYoung: result.keptYoung, missing: result.missing.length })
  return result
}
