// Where a search's results live. Each result is one record, a JSON object, stored as one line of NDJSON; next to
// the results an index holds the byte offset of every record (8 bytes each, little-endian), so a record can be
// found without reading those before it, and the record count of a results file is its index size / 8.
// While a search is not saved both are files in the search working directory (QUARRY_DATA_DIR/searches);
// saving moves them to the blob store. Readers see records up to the size last reported after a flush, so a
// download of a running search is a consistent prefix.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { FileSink } from 'bun'
import type { BlobStore } from '../blob'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../runtime/datadir'

export const INDEX_ENTRY_BYTES = 8

export interface WorkFiles {
  results: string
  index: string
}

/** The search working directory (made when the first search writes to it). */
export function workDir(dataDir: string): string {
  return join(dataDir, 'searches')
}

/** The working files of a search id (names ending in .ndjson and .idx; a temporary variant for imports). */
export function workFiles(dir: string, name: string): WorkFiles {
  return { results: join(dir, `${name}.ndjson`), index: join(dir, `${name}.idx`) }
}

export function removeWorkFiles(files: WorkFiles): void {
  rmSync(files.results, { force: true })
  rmSync(files.index, { force: true })
}

/** Every working file name in the directory (none when it does not exist yet), for the clean-up at start. */
export function listWorkDir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : []
}

/** Appends records to a search's working files; sizes count what has been flushed. */
export class ResultWriter {
  private readonly results: FileSink
  private readonly index: FileSink
  private pending = 0
  private readonly offsets: number[] = []
  storeSize = 0
  indexSize = 0
  count = 0

  constructor(readonly files: WorkFiles) {
    mkdirSync(dirname(files.results), { recursive: true, mode: PRIVATE_DIR_MODE })
    // Made private before Bun's writer opens them (results are users' data).
    for (const path of [files.results, files.index]) closeSync(openSync(path, 'w', PRIVATE_FILE_MODE))
    this.results = Bun.file(files.results).writer()
    this.index = Bun.file(files.index).writer()
  }

  /** Queues one record (its JSON text, without the newline). */
  add(json: string): void {
    this.offsets.push(this.storeSize + this.pending)
    const line = `${json}\n`
    this.pending += Buffer.byteLength(line)
    this.results.write(line)
  }

  /** Bytes of results and index this writer will have stored once what is queued is flushed. */
  get bytes(): number {
    return this.storeSize + this.pending + this.indexSize + this.offsets.length * INDEX_ENTRY_BYTES
  }

  /** Records queued since the last flush. */
  get queued(): number {
    return this.offsets.length
  }

  /** Writes what was queued; sizes and count include it afterwards. */
  async flush(): Promise<void> {
    if (this.offsets.length === 0) return
    const idx = Buffer.alloc(this.offsets.length * INDEX_ENTRY_BYTES)
    this.offsets.forEach((o, i) => idx.writeBigUInt64LE(BigInt(o), i * INDEX_ENTRY_BYTES))
    this.index.write(idx)
    await this.results.flush()
    await this.index.flush()
    this.storeSize += this.pending
    this.indexSize += idx.byteLength
    this.count += this.offsets.length
    this.pending = 0
    this.offsets.length = 0
  }

  async close(): Promise<void> {
    await this.flush()
    await this.results.end()
    await this.index.end()
  }
}

/** Where to read a search's results from: its working files (up to `size` bytes) or its blobs. */
/** Where a search's results are; 'none': nowhere (a search whose results were lost with its replica). */
export type ResultSource = { kind: 'work'; files: WorkFiles; size: number } | { kind: 'blob'; key: string; size: number } | { kind: 'none'; size: 0 }

export async function resultBytes(blobs: BlobStore, source: ResultSource): Promise<ReadableStream<Uint8Array>> {
  if (source.size === 0 || source.kind === 'none') return new Blob([]).stream()
  if (source.kind === 'work') return Bun.file(source.files.results).slice(0, source.size).stream()
  return blobs.get(source.key, { start: 0, end: source.size - 1 })
}

/** Splits a byte stream of NDJSON into its lines (without newlines). */
export async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let rest = ''
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true })
    let nl: number
    while ((nl = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, nl)
      rest = rest.slice(nl + 1)
    }
  }
  rest += decoder.decode()
  if (rest !== '') yield rest
}

/** The records of a results stream, one parsed JSON object each. */
export async function* records(stream: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  for await (const line of lines(stream)) yield JSON.parse(line) as Record<string, unknown>
}

/** A stream of text built from an async iterable of strings. */
function textStream(parts: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const it = parts[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      const next = await it.next()
      if (next.done) ctl.close()
      else ctl.enqueue(encoder.encode(next.value))
    },
    async cancel() {
      await it.return?.()
    },
  })
}

/** The results as one JSON array: the NDJSON lines joined by commas, without parsing them. */
export function jsonArray(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return textStream(
    (async function* () {
      let first = true
      yield '['
      for await (const line of lines(stream)) {
        yield first ? line : `,${line}`
        first = false
      }
      yield ']'
    })(),
  )
}

const CSV_ENTRY_COLUMNS = ['TS', 'Tag', 'SRC', 'Data'] as const

/**
 * A cell a spreadsheet would run as a formula (OWASP "CSV injection": it starts with =, +, -, @, a tab or a CR)
 * gets a leading apostrophe, which spreadsheets show as text and do not evaluate. Logged data is attacker data.
 */
const FORMULA_START = /^[=+\-@\t\r]/

export function csvField(value: unknown): string {
  let s = value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value)
  if (FORMULA_START.test(s)) s = `'${s}`
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** The text of an entry record's Data (base64 on the wire). */
function dataText(record: Record<string, unknown>): string {
  return typeof record.Data === 'string' ? Buffer.from(record.Data, 'base64').toString('utf8') : ''
}

/**
 * CSV (RFC 4180): the columns of the first record (TS, Tag, SRC, Data for entries, with Data as text; Count for
 * a count), a header line, then one line per record.
 */
export function csv(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return textStream(
    (async function* () {
      let columns: readonly string[] | undefined
      for await (const r of records(stream)) {
        if (!columns) {
          columns = 'Data' in r ? CSV_ENTRY_COLUMNS : Object.keys(r)
          // column names are data too (an imported archive's records choose them)
          yield `${columns.map(csvField).join(',')}\r\n`
        }
        yield `${columns.map((c) => csvField(c === 'Data' && 'Data' in r ? dataText(r) : r[c])).join(',')}\r\n`
      }
    })(),
  )
}

/** Plain text: the Data of each entry as text, one per line; a count as its number. */
export function text(stream: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return textStream(
    (async function* () {
      for await (const r of records(stream)) yield `${'Data' in r ? dataText(r) : Object.values(r).map(String).join(' ')}\n`
    })(),
  )
}
