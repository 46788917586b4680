// The engine's tags by name and by number, held in memory by each process so that a search launch, its results and
// the WebSocket requests that name tags never read the tag table whole (with many tags that read held the event loop
// for most of a second per request).
//
// Guarantees:
// - The table is read whole once per process (at start); afterwards only the names or numbers a request needs and
//   the map does not hold are looked up (indexed probes of just those), so a tag created anywhere resolves at once.
// - Tags this process creates are added as their batch commits; those another replica creates are announced as a
//   cluster event (server/runtime/events.ts) carrying the lowest number the batch created, on which every other replica reads
//   the tags from that number up (tags are never removed, and numbers drawn by one batch are all above its lowest),
//   so the full listing (`all`) follows within a notification. A replica that missed an event still resolves every
//   tag a request names; only its full listing may lack the missed tags until it learns them by a lookup.
import type { ClusterEvents } from '../runtime/events'
import type { Logger } from '../runtime/log'
import type { EntriesRepo, Tag } from './entries'

export type TagSource = Pick<EntriesRepo, 'allTags' | 'tagsNamed' | 'tagsNumbered' | 'tagsFrom'>

export class TagDirectory {
  private readonly ids = new Map<string, number>()
  private readonly names = new Map<number, string>()
  private loaded: Promise<void> | null = null

  constructor(
    private readonly source: TagSource,
    private readonly events?: ClusterEvents,
    private readonly log?: Logger,
  ) {
    events?.subscribe((event) => {
      if (event.kind !== 'tags-created') return
      void this.learnFrom(event.from).catch((e: unknown) =>
        this.log?.warn('the tags another replica created could not be read', { error: e instanceof Error ? e.message : String(e) }),
      )
    })
  }

  /** Reads the whole table, once (later calls wait for the same read). */
  load(): Promise<void> {
    this.loaded ??= this.source.allTags().then(
      (tags) => this.learn(tags),
      (e: unknown) => {
        this.loaded = null
        throw e
      },
    )
    return this.loaded
  }

  private learn(tags: readonly Tag[]): void {
    for (const { id, name } of tags) {
      this.ids.set(name, id)
      this.names.set(id, name)
    }
  }

  private async learnFrom(id: number): Promise<void> {
    await this.load()
    this.learn(await this.source.tagsFrom(id))
  }

  /** After a batch committed here: its tags are known, and the other replicas are told of those it created. */
  stored(tags: readonly Tag[], created: readonly Tag[]): void {
    this.learn(tags)
    if (created.length > 0) this.events?.publish({ kind: 'tags-created', from: created.reduce((low, t) => Math.min(low, t.id), Number.POSITIVE_INFINITY) })
  }

  /** The number of each of `names` that exists (those that do not are left out). */
  idsOf(names: readonly string[]): Promise<Map<string, number>> {
    return this.resolve(names, this.ids, (unknown) => this.source.tagsNamed(unknown))
  }

  /** The name of each of `ids` that exists. */
  namesOf(ids: readonly number[]): Promise<Map<number, string>> {
    return this.resolve(ids, this.names, (unknown) => this.source.tagsNumbered(unknown))
  }

  /** `keys` through `map`, after looking up (only) the keys it lacks. */
  private async resolve<K, V>(keys: readonly K[], map: Map<K, V>, lookup: (unknown: K[]) => Promise<Tag[]>): Promise<Map<K, V>> {
    await this.load()
    const unknown = keys.filter((k) => !map.has(k))
    if (unknown.length > 0) this.learn(await lookup(unknown))
    const out = new Map<K, V>()
    for (const k of keys) {
      const v = map.get(k)
      if (v !== undefined) out.set(k, v)
    }
    return out
  }

  /** Every tag this process knows (see above: all of the store's, within a notification), by name. */
  async all(): Promise<ReadonlyMap<string, number>> {
    await this.load()
    return this.ids
  }

  /** The name of a number the map holds now (no lookup: for the hot loop of a search, after namesOf). */
  nameNow(id: number): string | undefined {
    return this.names.get(id)
  }
}
