// The search archive: one saved search and its stored results in a single gzip-compressed tar file, so that
// GET /api/searchctrl/{ID}/download/archive → POST /api/searchctrl/import round-trips. The format is documented in
// docs/search-archive.md; in short, the tar holds, in this order and nothing else:
//
//   search.json              the SearchArchiveDescription (Format "quarry-search-archive", Version 1)
//   results/000001.ndjson    the records, one JSON object per line, in order; split into numbered chunk members
//   results/000002.ndjson    (tar needs each member's size before its bytes, so the writer buffers one chunk at a
//   ...                      time, at most DEFAULT_CHUNK_BYTES plus one record: memory is bounded for any count)
//   end.json                 the trailer: {"Records", "Bytes", "SHA256"} of all chunks' bytes concatenated
//
// The trailer is what proves the archive complete: a copy cut short anywhere lacks it or fails gzip's own check,
// and one put together from pieces fails its counts or checksum.
//
// Interface (free of HTTP and of the search engine; the routes map ArchiveError to 400):
//   writeSearchArchive(description, records, options?) → ReadableStream<Uint8Array>   the .tar.gz, streamed
//   readSearchArchive(stream, limits, onRecord, hooks?) → Promise<SearchArchiveDescription>   validates while
//     streaming; hooks.onDescription sees the (provisional) description before the first record
//   ArchiveError (user-presentable message), ArchiveLimits + DEFAULT_ARCHIVE_LIMITS, SearchArchiveDescription,
//   ARCHIVE_MEDIA_TYPE and archiveFileName(id) for the download's headers.
//
// The reader never touches the file system: member contents go to onRecord or to JSON.parse only. Every byte
// count is checked while streaming (compressed bytes as they arrive, expanded bytes as gunzip produces them),
// and every stage waits for the next (onRecord is awaited before more input is read), so a zip bomb or a slow
// consumer never makes it buffer more than a few chunks.
import { nodeStreamPromises, nodeZlib } from '../runtime/lazy-builtins'
import type { Header } from 'tar-stream'
import type * as TarStream from 'tar-stream'

/** tar-stream, loaded by the first archive written or read rather than at start-up. */
let tarStream: typeof TarStream | undefined
const tar = (): typeof TarStream => (tarStream ??= require('tar-stream') as typeof TarStream)
import { MAX_JSON_DEPTH, MAX_JSON_VALUES, jsonShapeProblem } from '../http/json-shape'

export const ARCHIVE_FORMAT = 'quarry-search-archive'
export const ARCHIVE_VERSION = 1
export const DESCRIPTION_MEMBER = 'search.json'
export const END_MEMBER = 'end.json'
/** Record chunk members are `results/` + six digits counting from 000001 + `.ndjson`. */
const CHUNK_NAME = /^results\/(\d{6})\.ndjson$/
const MAX_CHUNKS = 999_999
/** Content-Type of an archive download. */
export const ARCHIVE_MEDIA_TYPE = 'application/gzip'

/** A download file name for a search's archive: `search-<id>.tar.gz`, the id reduced to safe characters. */
export function archiveFileName(searchId: string | number): string {
  const safe = String(searchId).replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)
  return `search-${safe}.tar.gz`
}

/** The first two bytes of every gzip file. */
const GZIP_MAGIC = [0x1f, 0x8b]

/** An archive (or a description to write) that is refused; the message is meant for the user, as a 400 body. */
export class ArchiveError extends Error {
  override name = 'ArchiveError'
}

/** What readSearchArchive accepts at most. Every limit is enforced while streaming, never after buffering. */
export interface ArchiveLimits {
  /** Bytes of the .tar.gz as received. */
  maxCompressedBytes: number
  /** Bytes gunzip produces (the tar stream with headers and padding): the zip-bomb bound. */
  maxExpandedBytes: number
  /** Tar members, all kinds counted. */
  maxMembers: number
  /** Bytes of one record line, without its newline. */
  maxRecordBytes: number
  /** Bytes of search.json and of end.json each. */
  maxDescriptionBytes: number
}

export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxCompressedBytes: 1024 ** 3, // 1 GiB
  maxExpandedBytes: 8 * 1024 ** 3, // 8 GiB
  maxMembers: 10_000,
  maxRecordBytes: 1024 ** 2, // 1 MiB
  maxDescriptionBytes: 1024 ** 2, // 1 MiB
})

/** Size the writer fills a record chunk up to before it starts the next one (a larger record gets its own chunk). */
export const DEFAULT_CHUNK_BYTES = 4 * 1024 ** 2

/** The search's own fields, required in every description. */
export interface SearchArchiveFields {
  UserQuery: string
  EffectiveQuery: string
  /** RFC 3339 timestamps. */
  StartRange: string
  EndRange: string
  Started: string
  Finished: string
}

/** The description of a search as stored in search.json. Unknown members are kept as they are. */
export interface SearchArchiveDescription extends SearchArchiveFields {
  Format: typeof ARCHIVE_FORMAT
  Version: typeof ARCHIVE_VERSION
  /** Any JSON the search was saved with; null when none. */
  Metadata: unknown
  /** Number of records. Optional in an archive (checked against end.json when present); always set once read. */
  ItemCount: number
  [extra: string]: unknown
}

/** What the writer needs: Format and Version are its own; ItemCount, when given, must match the records. */
export interface SearchArchiveInput extends SearchArchiveFields {
  Metadata?: unknown
  ItemCount?: number
  [extra: string]: unknown
}

/** The trailer, end.json. */
interface ArchiveEnd {
  Records: number
  Bytes: number
  SHA256: string
}

export interface WriteOptions {
  /** Chunk member size target; DEFAULT_CHUNK_BYTES unless given (tests use small ones). */
  chunkBytes?: number
  /** Largest record line written; a larger one fails the stream, since readers would refuse it. */
  maxRecordBytes?: number
  /** Modification time stamped on the members; now unless given. */
  mtime?: Date
  /** gzip level, 1 (fastest) to 9 (smallest); DEFAULT_GZIP_LEVEL unless given. */
  level?: number
}

/**
 * The fastest level: on log-like records level 1 compresses about 3.3:1 at ~4x the speed of level 6 (5.2:1), and
 * an export is compressed on the fly while the server also searches (measured: bench/README.md). Pass `level` for
 * smaller files.
 */
export const DEFAULT_GZIP_LEVEL = 1

// ---------------------------------------------------------------------------------------------------------------
// Description and trailer validation (shared by both directions)

const REQUIRED_STRINGS = ['UserQuery', 'EffectiveQuery'] as const
const REQUIRED_TIMES = ['StartRange', 'EndRange', 'Started', 'Finished'] as const
const RFC3339 = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

/** Checks the members every description must have; `where` names the source in messages. */
function checkDescriptionFields(value: Record<string, unknown>, where: string): void {
  for (const name of REQUIRED_STRINGS) {
    if (typeof value[name] !== 'string') throw new ArchiveError(`${where}: ${name} must be a string`)
  }
  for (const name of REQUIRED_TIMES) {
    const time = value[name]
    if (typeof time !== 'string' || !RFC3339.test(time) || Number.isNaN(Date.parse(time))) {
      throw new ArchiveError(`${where}: ${name} must be an RFC 3339 timestamp string`)
    }
  }
  if (value.ItemCount !== undefined && !isCount(value.ItemCount)) {
    throw new ArchiveError(`${where}: ItemCount must be a non-negative integer`)
  }
}

function parseDescription(value: unknown): SearchArchiveDescription {
  const where = DESCRIPTION_MEMBER
  if (!isPlainObject(value)) throw new ArchiveError(`${where} must hold a JSON object`)
  if (value.Format !== ARCHIVE_FORMAT) {
    throw new ArchiveError(`${where}: Format must be "${ARCHIVE_FORMAT}"; this is not a Quarry search archive`)
  }
  if (value.Version !== ARCHIVE_VERSION) {
    throw new ArchiveError(`${where}: unsupported Version ${describe(value.Version)}; this server reads version ${ARCHIVE_VERSION}`)
  }
  checkDescriptionFields(value, where)
  return { ...value, Metadata: value.Metadata ?? null } as SearchArchiveDescription
}

function parseEnd(value: unknown): ArchiveEnd {
  const where = END_MEMBER
  if (!isPlainObject(value)) throw new ArchiveError(`${where} must hold a JSON object`)
  if (!isCount(value.Records)) throw new ArchiveError(`${where}: Records must be a non-negative integer`)
  if (!isCount(value.Bytes)) throw new ArchiveError(`${where}: Bytes must be a non-negative integer`)
  if (typeof value.SHA256 !== 'string' || !/^[0-9a-f]{64}$/i.test(value.SHA256)) {
    throw new ArchiveError(`${where}: SHA256 must be 64 hexadecimal digits`)
  }
  return { Records: value.Records, Bytes: value.Bytes, SHA256: value.SHA256.toLowerCase() }
}

/** A short, safe rendering of a value or name for a message. */
function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function chunkName(index: number): string {
  return `results/${String(index).padStart(6, '0')}.ndjson`
}

// ---------------------------------------------------------------------------------------------------------------
// Writer

const encoder = new TextEncoder()

function jsonBytes(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value, null, 2)}\n`)
}

/**
 * Streams a search archive: search.json from `description`, then `records` (pulled only as the stream is read,
 * one chunk buffered at a time), then end.json. Throws ArchiveError at once for a description with missing or
 * wrongly-typed fields. A record that is not a JSON object or is over `maxRecordBytes`, a records iterator that
 * throws, or an ItemCount that does not match the records errors the stream (the download breaks off rather than
 * deliver an archive that readers refuse). Records are pulled from the first read on; cancelling the stream stops
 * the records iterator.
 */
export function writeSearchArchive(
  description: SearchArchiveInput,
  records: AsyncIterable<object> | Iterable<object>,
  options: WriteOptions = {},
): ReadableStream<Uint8Array> {
  if (!isPlainObject(description)) throw new ArchiveError('the search description must be an object')
  checkDescriptionFields(description, 'search description')
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES
  const maxRecordBytes = options.maxRecordBytes ?? DEFAULT_ARCHIVE_LIMITS.maxRecordBytes
  const mtime = options.mtime ?? new Date()
  const head: Record<string, unknown> = {
    Format: ARCHIVE_FORMAT,
    Version: ARCHIVE_VERSION,
    ...description,
    Metadata: description.Metadata ?? null,
  }
  // The writer's own Format and Version win over anything the caller's object carries.
  head.Format = ARCHIVE_FORMAT
  head.Version = ARCHIVE_VERSION

  const pack = tar().pack()
  const gzip = nodeZlib().createGzip({ level: options.level ?? DEFAULT_GZIP_LEVEL })
  pack.pipe(gzip)
  // A failure reaches the consumer through gzip's iterator; pack's own error event would otherwise go unheard.
  pack.on('error', () => {})
  const output = gzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  let stopped = false

  // Resolves once the member's bytes have left pack's buffer for gzip: pack holds at most one chunk.
  const addMember = (name: string, bytes: Buffer) =>
    new Promise<void>((resolve, reject) => {
      pack.entry({ name, size: bytes.byteLength, mtime, mode: 0o644 }, bytes, (err) => (err ? reject(err) : resolve()))
    })

  const produce = async () => {
    await addMember(DESCRIPTION_MEMBER, jsonBytes(head))
    const hash = new Bun.CryptoHasher('sha256')
    let count = 0
    let bytes = 0
    let chunks = 0
    let parts: Uint8Array[] = []
    let pending = 0
    const flush = async () => {
      if (pending === 0) return
      if (++chunks > MAX_CHUNKS) throw new ArchiveError(`an archive holds at most ${MAX_CHUNKS} record chunks`)
      const chunk = Buffer.concat(parts, pending)
      parts = []
      pending = 0
      hash.update(chunk)
      bytes += chunk.byteLength
      await addMember(chunkName(chunks), chunk)
    }
    for await (const record of records) {
      if (stopped) return
      // Checked on the JSON, since toJSON (a Date's, say) may turn an object into something else.
      const json: unknown = isPlainObject(record) ? JSON.stringify(record) : undefined
      if (typeof json !== 'string' || !json.startsWith('{')) {
        throw new ArchiveError(`record ${count + 1} is not a JSON object`)
      }
      const line = encoder.encode(`${json}\n`)
      if (line.byteLength - 1 > maxRecordBytes) {
        throw new ArchiveError(`record ${count + 1} is larger than the limit of ${maxRecordBytes} bytes`)
      }
      if (pending > 0 && pending + line.byteLength > chunkBytes) await flush()
      parts.push(line)
      pending += line.byteLength
      count++
    }
    await flush()
    if (description.ItemCount !== undefined && description.ItemCount !== count) {
      throw new ArchiveError(`the description says ItemCount ${description.ItemCount} but ${count} records were written`)
    }
    const end: ArchiveEnd = { Records: count, Bytes: bytes, SHA256: hash.digest('hex') }
    await addMember(END_MEMBER, jsonBytes(end))
    pack.finalize()
  }

  const stop = (err?: unknown) => {
    stopped = true
    pack.destroy(err instanceof Error ? err : undefined)
    gzip.destroy(err instanceof Error ? err : undefined)
  }

  let started = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Records are first asked for when the archive is first read, so a stream never read holds nothing open.
        if (!started) {
          started = true
          produce().catch((err) => {
            if (!stopped) stop(err instanceof Error ? err : new ArchiveError('the archive could not be written'))
          })
        }
        try {
          const next = await output.next()
          if (next.done) controller.close()
          else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength))
        } catch (err) {
          controller.error(err)
        }
      },
      cancel() {
        stop()
      },
    },
    { highWaterMark: 0 },
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Reader

/** Wraps an error that is not the archive's fault (onRecord's, the input stream's) so it is passed on unchanged. */
class PassOn extends Error {
  constructor(readonly error: unknown) {
    super('passed on')
  }
}

/** Where the reader is in the member sequence; `next` is the number of the chunk expected next. */
interface ReadState {
  members: number
  seen: Set<string>
  /** Sum of the sizes the member headers declared so far: expanded bytes beyond it are tar's own. */
  declared: number
  description?: SearchArchiveDescription
  next: number
  ended: boolean
  records: number
  bytes: number
  hash: Bun.CryptoHasher
}

export interface ReadHooks {
  /**
   * Called (and awaited) once search.json has been read and validated, before the first record: lets an importer
   * set up where the records go. Provisional: the archive may still be refused later (ItemCount is the archive's
   * own claim, or absent, at this point).
   */
  onDescription?: (description: SearchArchiveDescription) => Promise<void>
}

/**
 * Reads a search archive from `stream`, calling (and awaiting) `onRecord` for each record in order, and resolves
 * with the description (ItemCount set to the number of records) only once the whole archive has been read and
 * found complete and consistent. Any fault of the archive rejects with ArchiveError, possibly after some records
 * were handed to onRecord: the caller must then discard them. Errors thrown by onRecord or by `stream` itself are
 * passed on unchanged. The input stream is cancelled when reading stops early.
 */
export async function readSearchArchive(
  stream: ReadableStream<Uint8Array>,
  limits: Partial<ArchiveLimits>,
  onRecord: (record: Record<string, unknown>) => Promise<void>,
  hooks: ReadHooks = {},
): Promise<SearchArchiveDescription> {
  const limit = resolveLimits(limits)
  const reader = stream.getReader()
  const gunzip = nodeZlib().createGunzip()
  const extract = tar().extract()
  const abort = new AbortController()
  let compressed = 0
  let expanded = 0
  let failure: unknown
  const state: ReadState = {
    members: 0,
    seen: new Set(),
    declared: 0,
    next: 1,
    ended: false,
    records: 0,
    bytes: 0,
    hash: new Bun.CryptoHasher('sha256'),
  }
  const maxOverhead = overheadAllowance(limit)

  const fail = (err: unknown) => {
    if (failure !== undefined) return
    failure = err
    abort.abort()
    extract.destroy()
    gunzip.destroy()
    reader.cancel().catch(() => {})
  }

  async function* compressedChunks() {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch (err) {
        throw new PassOn(err)
      }
      if (next.done) return
      if (compressed < GZIP_MAGIC.length) {
        for (let i = 0; i < next.value.byteLength && compressed + i < GZIP_MAGIC.length; i++) {
          if (next.value[i] !== GZIP_MAGIC[compressed + i]) {
            throw new ArchiveError('the archive is not a gzip-compressed file (.tar.gz)')
          }
        }
      }
      compressed += next.value.byteLength
      if (compressed > limit.maxCompressedBytes) {
        throw new ArchiveError(`the archive is larger than the limit of ${limit.maxCompressedBytes} bytes`)
      }
      yield Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength)
    }
  }

  // Hands gunzip's output to the tar parser one chunk at a time, waiting while the parser is busy.
  async function toExtract(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      expanded += chunk.byteLength
      if (expanded > limit.maxExpandedBytes) {
        throw new ArchiveError(`the archive expands to more than the limit of ${limit.maxExpandedBytes} bytes`)
      }
      if (expanded - state.declared > maxOverhead) {
        throw new ArchiveError(
          `the archive holds more than ${maxOverhead} bytes outside its members' contents (padding or headers): refused as a possible zip bomb`,
        )
      }
      if (extract.destroyed) return
      if (!extract.write(chunk)) await drained(extract)
    }
    // Bytes that gunzip did not consume follow the end of the gzip data (zero padding; other bytes fail gunzip).
    if (gunzip.bytesWritten !== compressed) throw new ArchiveError('the archive has unexpected data after its end')
    extract.end(null) // streamx's typing wants an argument; null means no last chunk
  }

  const feeding = nodeStreamPromises().pipeline(compressedChunks, gunzip, toExtract, { signal: abort.signal }).catch(fail)
  const reading = readMembers(extract, state, limit, onRecord, hooks).catch(fail)
  await Promise.all([feeding, reading])

  if (failure !== undefined) throw explain(failure, compressed)
  if (!state.description) throw new ArchiveError('the archive is empty: search.json is missing')
  if (!state.ended) throw new ArchiveError(`the archive is incomplete: ${END_MEMBER} is missing (truncated?)`)
  return { ...state.description, ItemCount: state.records }
}

/**
 * How many expanded bytes may be tar's own (headers, padding, the end-of-archive blocks) rather than member
 * contents. A well-formed archive needs at most ~2.5 KiB per member (header, a pax header, padding) plus its
 * end padding (GNU tar pads to 10 KiB records); JSON text never holds NUL bytes. Without this bound a stream of
 * zero blocks or of repeated headers, which gzip shrinks a thousandfold, would keep the tar parser busy up to
 * maxExpandedBytes; with it such a bomb is refused after a few MiB. The slack covers the parser's read-ahead.
 */
function overheadAllowance(limit: ArchiveLimits): number {
  return limit.maxMembers * 4096 + 4 * 1024 * 1024
}

/** The defaults overlaid with the limits given (undefined keeps the default); a limit must be a positive number. */
function resolveLimits(limits: Partial<ArchiveLimits>): ArchiveLimits {
  const resolved = { ...DEFAULT_ARCHIVE_LIMITS }
  for (const key of Object.keys(resolved) as (keyof ArchiveLimits)[]) {
    const value = limits[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !(value > 0)) throw new RangeError(`archive limit ${key} must be a positive number`)
    resolved[key] = value
  }
  return resolved
}

/** Resolves when a streamx writable asks for more, or has been destroyed (the caller checks which). */
function drained(stream: { once(event: string, fn: () => void): unknown; off(event: string, fn: () => void): unknown }) {
  return new Promise<void>((resolve) => {
    const done = () => {
      stream.off('drain', done)
      stream.off('close', done)
      resolve()
    }
    stream.once('drain', done)
    stream.once('close', done)
  })
}

/** Turns the first failure into what readSearchArchive throws: ArchiveError for the archive's faults. */
function explain(failure: unknown, compressed: number): unknown {
  if (failure instanceof PassOn) return failure.error
  if (failure instanceof ArchiveError) return failure
  const err = failure as { code?: unknown; message?: unknown }
  const message = typeof err?.message === 'string' ? err.message : ''
  if (typeof err?.code === 'string' && err.code.startsWith('Z_')) {
    if (compressed === 0) return new ArchiveError('the archive is empty: no data was received')
    if (err.code === 'Z_BUF_ERROR' || /unexpected end/i.test(message)) {
      return new ArchiveError('the archive is truncated: the compressed data ends early')
    }
    return new ArchiveError('the archive is damaged: its compressed data is corrupt or followed by unexpected data')
  }
  if (/unexpected end of data/i.test(message)) return new ArchiveError('the archive is truncated: a tar member ends early')
  if (/tar header|invalid header|header exceeds/i.test(message)) {
    return new ArchiveError('the archive is not a valid tar file (a damaged or unknown member header)')
  }
  return failure
}

type Entry = AsyncIterable<Uint8Array> & { header: Header }

async function readMembers(
  extract: TarStream.Extract,
  state: ReadState,
  limit: ArchiveLimits,
  onRecord: (record: Record<string, unknown>) => Promise<void>,
  hooks: ReadHooks,
): Promise<void> {
  for await (const entry of extract as AsyncIterable<Entry>) {
    const header = entry.header
    state.declared += Math.max(0, header.size || 0)
    if (++state.members > limit.maxMembers) {
      throw new ArchiveError(`the archive has more than the limit of ${limit.maxMembers} members`)
    }
    const name = checkMemberName(header.name)
    if (header.type !== 'file') {
      const kind = MEMBER_KINDS[header.type ?? ''] ?? 'special entry'
      throw new ArchiveError(`archive member ${describe(name)} is a ${kind}, not a regular file`)
    }
    if (state.ended) throw new ArchiveError(`archive member ${describe(name)} follows ${END_MEMBER}, which must be last`)
    if (state.seen.has(name)) throw new ArchiveError(`archive member ${describe(name)} appears twice`)
    state.seen.add(name)

    if (name === DESCRIPTION_MEMBER) {
      if (state.members !== 1) throw new ArchiveError(`${DESCRIPTION_MEMBER} must be the first member of the archive`)
      state.description = parseDescription(await readJsonMember(entry, limit.maxDescriptionBytes))
      if (hooks.onDescription) {
        try {
          await hooks.onDescription({ ...state.description })
        } catch (err) {
          throw new PassOn(err)
        }
      }
      continue
    }
    if (!state.description) throw new ArchiveError(`${DESCRIPTION_MEMBER} must be the first member of the archive`)

    if (name === END_MEMBER) {
      const end = parseEnd(await readJsonMember(entry, limit.maxDescriptionBytes))
      checkEnd(end, state)
      state.ended = true
      continue
    }

    const chunk = CHUNK_NAME.exec(name)
    if (!chunk) throw new ArchiveError(`unexpected archive member ${describe(name)}`)
    if (Number(chunk[1]) !== state.next) {
      throw new ArchiveError(
        `archive member ${describe(name)} is out of order: expected ${chunkName(state.next)} or ${END_MEMBER}`,
      )
    }
    state.next++
    await readRecords(entry, name, state, limit, onRecord)
  }
}

/** Words for the tar member types other than a regular file. */
const MEMBER_KINDS: Record<string, string> = {
  symlink: 'symbolic link',
  link: 'hard link',
  directory: 'directory',
  'character-device': 'character device',
  'block-device': 'block device',
  fifo: 'FIFO',
  'contiguous-file': 'contiguous file',
}

/** Refuses names that could point outside a folder or are not plain relative paths; answers the name. */
function checkMemberName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new ArchiveError('an archive member has no name')
  const shown = describe(name)
  if (name.includes('\0')) throw new ArchiveError(`archive member name ${shown} contains a NUL character`)
  if (name.includes('\\')) throw new ArchiveError(`archive member name ${shown} contains a backslash`)
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new ArchiveError(`archive member name ${shown} is an absolute path`)
  }
  if (name.split('/').includes('..')) throw new ArchiveError(`archive member name ${shown} contains ".."`)
  return name
}

function checkEnd(end: ArchiveEnd, state: ReadState): void {
  const where = END_MEMBER
  const description = state.description!
  if (end.Records !== state.records) {
    throw new ArchiveError(`${where} says ${end.Records} records but the archive holds ${state.records} (damaged or truncated)`)
  }
  if (end.Bytes !== state.bytes) {
    throw new ArchiveError(`${where} says ${end.Bytes} bytes of records but the archive holds ${state.bytes} (damaged or truncated)`)
  }
  if (end.SHA256 !== state.hash.digest('hex')) {
    throw new ArchiveError(`${where}: the SHA256 of the records does not match (the records were altered or damaged)`)
  }
  if (description.ItemCount !== undefined && description.ItemCount !== state.records) {
    throw new ArchiveError(`${DESCRIPTION_MEMBER} says ItemCount ${description.ItemCount} but the archive holds ${state.records} records`)
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

async function readJsonMember(entry: Entry, maxBytes: number): Promise<unknown> {
  const name = entry.header.name
  if (entry.header.size > maxBytes) {
    throw new ArchiveError(`${name} is larger than the limit of ${maxBytes} bytes`)
  }
  const parts: Uint8Array[] = []
  for await (const part of entry) parts.push(part)
  let text: string
  let value: unknown
  try {
    text = utf8.decode(Buffer.concat(parts))
    value = JSON.parse(text)
  } catch {
    throw new ArchiveError(`${name} is not valid JSON`)
  }
  // what is read here is stored (the description's Metadata) and answered to every viewer of the search
  const shape = jsonShapeProblem(text)
  if (shape) throw new ArchiveError(`${name} is ${shape.problem === 'depth' ? `nested more than ${MAX_JSON_DEPTH} levels deep` : `over ${MAX_JSON_VALUES} values`}`)
  return value
}

/** Splits one chunk member into lines and hands each parsed record to onRecord, awaiting it before reading on. */
async function readRecords(
  entry: Entry,
  name: string,
  state: ReadState,
  limit: ArchiveLimits,
  onRecord: (record: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  let partial: Uint8Array[] = []
  let partialBytes = 0
  const tooLong = () =>
    new ArchiveError(`record ${state.records + 1} (in ${name}) is larger than the limit of ${limit.maxRecordBytes} bytes`)
  for await (const part of entry) {
    state.hash.update(part)
    state.bytes += part.byteLength
    let start = 0
    for (;;) {
      const newline = part.indexOf(10, start)
      if (newline === -1) {
        const rest = part.subarray(start)
        partialBytes += rest.byteLength
        if (partialBytes > limit.maxRecordBytes) throw tooLong()
        if (rest.byteLength > 0) partial.push(rest)
        break
      }
      const piece = part.subarray(start, newline)
      const line = partial.length === 0 ? piece : Buffer.concat([...partial, piece])
      partial = []
      partialBytes = 0
      if (line.byteLength > limit.maxRecordBytes) throw tooLong()
      const record = parseRecord(line, name, state.records + 1)
      state.records++
      try {
        await onRecord(record)
      } catch (err) {
        throw new PassOn(err)
      }
      start = newline + 1
    }
  }
  if (partialBytes > 0) {
    throw new ArchiveError(`the last line of ${name} has no newline at its end (truncated record?)`)
  }
}

function parseRecord(line: Uint8Array, name: string, index: number): Record<string, unknown> {
  let record: unknown
  let text: string
  try {
    text = utf8.decode(line)
    record = JSON.parse(text)
  } catch {
    throw new ArchiveError(`record ${index} (in ${name}) is not valid JSON`)
  }
  if (!isPlainObject(record)) throw new ArchiveError(`record ${index} (in ${name}) is not a JSON object`)
  // records are stored and served to every viewer of the search (and re-serialised for CSV): stored JSON bounds
  const shape = jsonShapeProblem(text)
  if (shape) throw new ArchiveError(`record ${index} (in ${name}) is ${shape.problem === 'depth' ? `nested more than ${MAX_JSON_DEPTH} levels deep` : `over ${MAX_JSON_VALUES} values`}`)
  return record
}
