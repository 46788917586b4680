// Whether the blob store takes a write right now: a tiny object is stored and removed again. Used before the server
// serves (a store it cannot write would answer 500 to every upload) and by GET /api/health/ready.
import type { BlobStore } from './index'

/** Keys under this prefix are the probe's own; each probe removes its object before answering. */
export const PROBE_PREFIX = 'health'

/** Resolves when a write and its removal both succeed; throws the store's error otherwise. */
export async function probeBlobStore(blobs: BlobStore): Promise<void> {
  const key = `${PROBE_PREFIX}/probe-${crypto.randomUUID()}`
  const bytes = new TextEncoder().encode('quarry health probe\n')
  try {
    await blobs.put(key, new Blob([bytes]).stream(), { maxBytes: bytes.length })
  } finally {
    // A put that failed half-way leaves nothing (the BlobStore guarantee); this removes the one that succeeded.
    await blobs.delete(key).catch(() => {})
  }
}
