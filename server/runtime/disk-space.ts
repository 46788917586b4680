// The free-space floor (QUARRY_MIN_FREE_SPACE): writes that store user data on this server's disk (ingest, uploads
// of resources and user files, search imports) are refused with 507 while the data directory's filesystem has less
// than the floor free, so that the disk never fills up under the metadata store and what is being written there.
// The check is made before each such write with one statfs call (tens of microseconds); it is a margin, not an exact
// bound: writes already under way when the floor is reached complete.
import { statfs } from 'node:fs/promises'
import { Errors } from '../http/errors'

export class FreeSpaceFloor {
  constructor(
    /** The directory whose filesystem holds the data; undefined: nothing of this server's data is on its disk. */
    private readonly dir: string | undefined,
    /** Bytes that must stay free; 0: no floor. */
    private readonly floor: number,
  ) {}

  /** Throws the 507 refusal when writing `adding` more bytes would leave less than the floor free. */
  async check(adding = 0): Promise<void> {
    if (this.dir === undefined || this.floor === 0) return
    const fs = await statfs(this.dir)
    if (fs.bavail * fs.bsize - Math.max(0, adding) < this.floor) throw Errors.insufficientStorage(this.floor)
  }
}
