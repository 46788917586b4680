// The search archive module (server/search/archive.ts): round trips through the writer and the reader, every
// refusal of a damaged, truncated, oversized or hostile archive, streaming with bounded buffering both ways, and
// an archive built by hand with the tar command as docs/search-archive.md describes.
import { describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import zlib from 'node:zlib'
import tar, { type Header } from 'tar-stream'
import {
  ArchiveError,
  type ArchiveLimits,
  DEFAULT_ARCHIVE_LIMITS,
  readSearchArchive,
  type SearchArchiveDescription,
  type SearchArchiveInput,
  writeSearchArchive,
} from '../server/search/archive'

const DESCRIPTION: SearchArchiveInput = {
  UserQuery: 'tag=syslog grep error',
  EffectiveQuery: 'tag=syslog grep error | table',
  StartRange: '2024-05-01T00:00:00Z',
  EndRange: '2024-05-02T00:00:00.5+02:00',
  Started: '2024-05-02T10:00:00Z',
  Finished: '2024-05-02T10:00:03.25Z',
  Metadata: { note: 'kept', tags: ['a', 'b'] },
}

const record = (i: number) => ({ TS: `2024-05-01T00:00:${String(i % 60).padStart(2, '0')}Z`, Seq: i, Data: `line ${i} ünïcødé` })

async function* lazyRecords(count: number, make: (i: number) => object = record) {
  for (let i = 0; i < count; i++) yield make(i)
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

/** A stream over `bytes` in `chunk`-sized pieces that counts how many bytes the reader has pulled. */
function countingStream(bytes: Uint8Array, chunk = 16 * 1024) {
  const meter = { pulled: 0 }
  let offset = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close()
        const piece = bytes.subarray(offset, offset + chunk)
        offset += piece.byteLength
        meter.pulled += piece.byteLength
        controller.enqueue(piece)
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, meter }
}

/** Reads an archive into memory: the description and the records. */
async function readAll(bytes: Uint8Array, limits: Partial<ArchiveLimits> = {}) {
  const records: Record<string, unknown>[] = []
  const description = await readSearchArchive(new Blob([bytes]).stream(), limits, async (r) => {
    records.push(r)
  })
  return { description, records }
}

/** Expects the archive to be refused with ArchiveError whose message matches; answers how many records got out. */
async function expectRefused(bytes: Uint8Array, message: RegExp, limits: Partial<ArchiveLimits> = {}) {
  let handed = 0
  let caught: unknown
  try {
    await readSearchArchive(new Blob([bytes]).stream(), limits, async () => {
      handed++
    })
  } catch (err) {
    caught = err
  }
  expect(caught).toBeInstanceOf(ArchiveError)
  expect((caught as Error).message).toMatch(message)
  return handed
}

// --- Building archives member by member, to break them on purpose -------------------------------------------

interface Member {
  name: string
  body?: string | Uint8Array
  type?: Header['type']
  linkname?: string
  pax?: Record<string, string>
  /** Size written in the header, when it should lie about the body. */
  size?: number
}

async function tarOf(members: Member[], finalize = true): Promise<Buffer> {
  const pack = tar.pack()
  const out: Buffer[] = []
  const done = (async () => {
    for await (const piece of pack) out.push(piece as Buffer)
  })()
  for (const m of members) {
    const body = typeof m.body === 'string' ? Buffer.from(m.body) : (m.body ?? Buffer.alloc(0))
    await new Promise<void>((resolve, reject) => {
      const header = { name: m.name, type: m.type ?? 'file', linkname: m.linkname, pax: m.pax, mtime: new Date(0) }
      if (header.type === 'file') pack.entry(header, Buffer.from(body), (e) => (e ? reject(e) : resolve()))
      else pack.entry(header, (e) => (e ? reject(e) : resolve())).end(null)
    })
  }
  if (finalize) pack.finalize()
  else pack.push(null)
  await done
  return Buffer.concat(out)
}

const gz = (bytes: Uint8Array) => new Uint8Array(zlib.gzipSync(bytes))

function descriptionJson(extra: Record<string, unknown> = {}) {
  return JSON.stringify({ Format: 'quarry-search-archive', Version: 1, ...DESCRIPTION, ...extra })
}

function ndjson(records: object[]) {
  return records.map((r) => `${JSON.stringify(r)}\n`).join('')
}

function endJson(chunks: string[], override: Record<string, unknown> = {}) {
  const all = Buffer.from(chunks.join(''))
  const lines = chunks.join('').split('\n').length - 1
  return JSON.stringify({
    Records: lines,
    Bytes: all.byteLength,
    SHA256: createHash('sha256').update(all).digest('hex'),
    ...override,
  })
}

/** A consistent archive's members: search.json, the chunks, end.json. */
function validMembers(chunks: string[] = [ndjson([record(0), record(1)]), ndjson([record(2)])]): Member[] {
  return [
    { name: 'search.json', body: descriptionJson() },
    ...chunks.map((body, i) => ({ name: `results/${String(i + 1).padStart(6, '0')}.ndjson`, body })),
    { name: 'end.json', body: endJson(chunks) },
  ]
}

const archiveOf = async (members: Member[]) => gz(await tarOf(members))

// --- Round trips --------------------------------------------------------------------------------------------

describe('round trip', () => {
  test('no records: the description comes back with ItemCount 0 and Metadata', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(0)))
    const { description, records } = await readAll(bytes)
    expect(records).toEqual([])
    expect(description).toEqual({ Format: 'quarry-search-archive', Version: 1, ...DESCRIPTION, ItemCount: 0 } as SearchArchiveDescription)
  })

  test('one record, unknown description members kept, Format and Version are the writer’s own', async () => {
    const input = { ...DESCRIPTION, Metadata: undefined, Extra: { Future: [1, 2] }, Format: 'other', Version: 7, ItemCount: 1 }
    const bytes = await bytesOf(writeSearchArchive(input, [record(42)]))
    const { description, records } = await readAll(bytes)
    expect(records).toEqual([record(42)])
    expect(description.Format).toBe('quarry-search-archive')
    expect(description.Version).toBe(1)
    expect(description.Extra).toEqual({ Future: [1, 2] })
    expect(description.Metadata).toBeNull()
    expect(description.ItemCount).toBe(1)
    expect(description.UserQuery).toBe(DESCRIPTION.UserQuery)
  })

  test('records are split into numbered chunks; a record larger than a chunk gets one of its own', async () => {
    const big = { Data: 'x'.repeat(5000) }
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, [record(0), record(1), big, record(2)], { chunkBytes: 200 }))
    const names: string[] = []
    const extract = tar.extract()
    const listing = (async () => {
      for await (const entry of extract) {
        names.push(entry.header.name)
        entry.resume()
      }
    })()
    extract.end(zlib.gunzipSync(bytes))
    await listing
    expect(names).toEqual(['search.json', 'results/000001.ndjson', 'results/000002.ndjson', 'results/000003.ndjson', 'end.json'])
    expect((await readAll(bytes)).records).toEqual([record(0), record(1), big, record(2)])
  })

  test('100,000 records stream from a lazy generator to the reader with bounded buffering', async () => {
    const count = 100_000
    let generated = 0
    let consumed = 0
    let widestGap = 0
    // Random payloads compress poorly, so buffered compressed bytes stand for about as many records.
    async function* records() {
      for (let i = 0; i < count; i++) {
        generated++
        yield { Seq: i, Payload: randomBytes(100).toString('hex') }
      }
    }
    const chunkBytes = 256 * 1024
    const description = await readSearchArchive(
      writeSearchArchive({ ...DESCRIPTION, ItemCount: count }, records(), { chunkBytes }),
      {},
      async (r) => {
        if (r.Seq !== consumed) throw new Error(`record ${consumed} came as ${String(r.Seq)}`)
        consumed++
        widestGap = Math.max(widestGap, generated - consumed)
      },
    )
    expect(description.ItemCount).toBe(count)
    expect(consumed).toBe(count)
    // Records in flight between the generator and onRecord: a few chunks' worth, never the whole search.
    const recordsPerChunk = chunkBytes / 230
    expect(widestGap).toBeLessThan(6 * recordsPerChunk)
    expect(widestGap).toBeLessThan(count / 10)
  })
})

// --- The writer's own refusals ------------------------------------------------------------------------------

describe('writer', () => {
  test('a description with a missing or wrongly typed field is refused at once', () => {
    const { UserQuery: _, ...missing } = DESCRIPTION
    expect(() => writeSearchArchive(missing as SearchArchiveInput, [])).toThrow(ArchiveError)
    expect(() => writeSearchArchive({ ...DESCRIPTION, Started: 'yesterday' }, [])).toThrow(
      /Started must be an RFC 3339 timestamp/,
    )
    expect(() => writeSearchArchive({ ...DESCRIPTION, ItemCount: -1 }, [])).toThrow(/ItemCount must be a non-negative integer/)
  })

  test('a record that is not an object, one over the limit, a wrong ItemCount, a failing iterator: the stream errors', async () => {
    const cases: [Iterable<object> | AsyncIterable<object>, SearchArchiveInput, RegExp][] = [
      [[record(0), [1, 2]], DESCRIPTION, /record 2 is not a JSON object/],
      [[{ Data: 'x'.repeat(200) }], DESCRIPTION, /record 1 is larger than the limit of 100 bytes/],
      [[record(0)], { ...DESCRIPTION, ItemCount: 2 }, /ItemCount 2 but 1 records were written/],
      [
        (async function* () {
          yield record(0)
          throw new Error('store went away')
        })(),
        DESCRIPTION,
        /store went away/,
      ],
    ]
    for (const [records, description, message] of cases) {
      const caught = await bytesOf(writeSearchArchive(description, records, { maxRecordBytes: 100 })).catch((e) => e)
      expect(caught).toBeInstanceOf(Error)
      expect((caught as Error).message).toMatch(message)
    }
  })

  test('cancelling the download stops the records iterator', async () => {
    let finished = false
    let generated = 0
    async function* endless() {
      try {
        for (;;) {
          generated++
          yield { Data: Math.random().toString(36).repeat(20) }
        }
      } finally {
        finished = true
      }
    }
    const reader = writeSearchArchive(DESCRIPTION, endless(), { chunkBytes: 64 * 1024 }).getReader()
    for (let i = 0; i < 5; i++) await reader.read()
    await reader.cancel()
    for (let i = 0; i < 50 && !finished; i++) await Bun.sleep(10)
    expect(finished).toBe(true)
    const after = generated
    await Bun.sleep(20)
    expect(generated).toBe(after)
  })
})

// --- Refusals -----------------------------------------------------------------------------------------------

describe('refused: not an archive, damaged or truncated', () => {
  test('the member-built reference archive is accepted (the cases below break it one way each)', async () => {
    const { description, records } = await readAll(await archiveOf(validMembers()))
    expect(records).toEqual([record(0), record(1), record(2)])
    expect(description.ItemCount).toBe(3)
  })

  test('not gzip', async () => {
    await expectRefused(new TextEncoder().encode('{"this": "is not an archive"}'), /not a gzip-compressed file/)
    await expectRefused(await tarOf(validMembers()), /not a gzip-compressed file/)
    await expectRefused(new Uint8Array(0), /the archive is empty: no data was received/)
  })

  test('gzip but not tar', async () => {
    await expectRefused(gz(new TextEncoder().encode('just some text\n'.repeat(100))), /not a valid tar file/)
    await expectRefused(gz(new TextEncoder().encode('short')), /truncated: a tar member ends early/)
  })

  test('truncated inside the gzip data, at any point', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(500), { chunkBytes: 4096 }))
    for (const cut of [10, Math.floor(bytes.byteLength / 3), bytes.byteLength - 30, bytes.byteLength - 4, bytes.byteLength - 1]) {
      await expectRefused(bytes.subarray(0, cut), /truncated: the compressed data ends early/)
    }
    await expectRefused(bytes.subarray(0, 5), /truncated|not a gzip-compressed file/)
  })

  test('truncated tar inside a member, then compressed properly', async () => {
    const whole = await tarOf(validMembers())
    const cut = whole.indexOf('"Seq":1') // inside results/000001.ndjson
    expect(cut).toBeGreaterThan(0)
    await expectRefused(gz(whole.subarray(0, cut)), /truncated: a tar member ends early/)
    await expectRefused(gz(whole.subarray(0, 700)), /truncated: a tar member ends early/) // inside search.json
  })

  test('missing end.json, missing search.json', async () => {
    const members = validMembers()
    await expectRefused(await archiveOf(members.slice(0, -1)), /incomplete: end\.json is missing/)
    await expectRefused(await archiveOf(members.slice(0, 1)), /incomplete: end\.json is missing/)
    await expectRefused(await archiveOf([]), /archive is empty: search\.json is missing/)
    await expectRefused(await archiveOf(members.slice(1)), /search\.json must be the first member/)
  })

  test('a chunk cut at a record boundary (counts no longer match), or a missing chunk', async () => {
    const chunks = [ndjson([record(0), record(1)]), ndjson([record(2)])]
    const members = validMembers(chunks)
    await expectRefused(await archiveOf([members[0]!, members[1]!, members[3]!]), /end\.json says 3 records but the archive holds 2/)
    await expectRefused(
      await archiveOf([members[0]!, { ...members[1]!, body: ndjson([record(0)]) }, members[2]!, members[3]!]),
      /end\.json says 3 records but the archive holds 2/,
    )
  })

  test('trailing data after the end: after the gzip data, after the tar end, or a member after end.json', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(3)))
    const join = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts))
    await expectRefused(
      join(bytes, new TextEncoder().encode('garbage after the archive')),
      /damaged: its compressed data is corrupt or followed by unexpected data/,
    )
    await expectRefused(join(bytes, new Uint8Array(100)), /unexpected data after its end/)
    const tarred = await tarOf(validMembers())
    await expectRefused(gz(join(tarred, new TextEncoder().encode('x'.repeat(512)))), /not a valid tar file/)
    await expectRefused(gz(join(tarred, new TextEncoder().encode('tail'))), /truncated: a tar member ends early/)
    await expectRefused(
      await archiveOf([...validMembers(), { name: 'results/000003.ndjson', body: ndjson([record(3)]) }]),
      /"results\/000003\.ndjson" follows end\.json, which must be last/,
    )
  })

  test('two archives concatenated: gzip reads them as one stream, and the second search.json follows end.json', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(3)))
    await expectRefused(new Uint8Array(Buffer.concat([bytes, bytes])), /"search\.json" follows end\.json, which must be last/)
  })
})

describe('refused: over a limit', () => {
  test('compressed size over the limit, detected while streaming', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(20_000, (i) => ({ Seq: i, R: randomBytes(20).toString('hex') }))))
    const limit = 32 * 1024
    expect(bytes.byteLength).toBeGreaterThan(10 * limit)
    const { stream, meter } = countingStream(bytes, 4096)
    const caught = await readSearchArchive(stream, { maxCompressedBytes: limit }, async () => {}).catch((e) => e)
    expect(caught).toBeInstanceOf(ArchiveError)
    expect(caught.message).toBe(`the archive is larger than the limit of ${limit} bytes`)
    expect(meter.pulled).toBeLessThanOrEqual(limit + 4096)
  })

  test('a zip bomb (1 GiB of zeros in about 1 MiB of gzip) is refused after expanding only up to the limit', async () => {
    const mib = Buffer.alloc(1024 * 1024)
    const piece = zlib.deflateRawSync(mib, { finishFlush: zlib.constants.Z_FULL_FLUSH }) // self-contained block
    let crc = 0
    for (let i = 0; i < 1024; i++) crc = zlib.crc32(mib, crc)
    const trailer = Buffer.alloc(8)
    trailer.writeUInt32LE(crc >>> 0, 0)
    trailer.writeUInt32LE(0, 4) // 1 GiB mod 2^32
    const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255])
    const bomb = new Uint8Array(
      Buffer.concat([header, ...Array.from({ length: 1024 }, () => piece), zlib.deflateRawSync(Buffer.alloc(0)), trailer]),
    )
    expect(bomb.byteLength).toBeLessThan(2 * 1024 * 1024)
    const limit = 32 * 1024 * 1024
    const rssBefore = process.memoryUsage().rss
    const { stream, meter } = countingStream(bomb, 16 * 1024)
    const caught = await readSearchArchive(stream, { maxExpandedBytes: limit }, async () => {}).catch((e) => e)
    expect(caught).toBeInstanceOf(ArchiveError)
    expect(caught.message).toBe(`the archive expands to more than the limit of ${limit} bytes`)
    // About limit/1024 compressed bytes expand to the limit; a little read-ahead, never the whole bomb.
    expect(meter.pulled).toBeLessThan(bomb.byteLength / 8)
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024)
  })

  test('the default expanded limit applies when none is given', async () => {
    expect(DEFAULT_ARCHIVE_LIMITS.maxExpandedBytes).toBeGreaterThan(DEFAULT_ARCHIVE_LIMITS.maxCompressedBytes)
    expect(Object.isFrozen(DEFAULT_ARCHIVE_LIMITS)).toBe(true)
  })

  test('too many members', async () => {
    const chunks = Array.from({ length: 6 }, (_, i) => ndjson([record(i)]))
    const bytes = await archiveOf(validMembers(chunks)) // 8 members
    expect((await readAll(bytes, { maxMembers: 8 })).records).toHaveLength(6)
    await expectRefused(bytes, /more than the limit of 7 members/, { maxMembers: 7 })
  })

  test('a record line over the record size limit, also when it spans many reads', async () => {
    const long = { Data: 'y'.repeat(300_000) }
    const bytes = await archiveOf(validMembers([ndjson([record(0), long])]))
    expect((await readAll(bytes, { maxRecordBytes: 300_100 })).records).toHaveLength(2)
    const handed = await expectRefused(bytes, /record 2 \(in results\/000001\.ndjson\) is larger than the limit of 100000 bytes/, {
      maxRecordBytes: 100_000,
    })
    expect(handed).toBe(1)
  })

  test('a search.json or end.json over the description limit', async () => {
    const members = validMembers()
    members[0] = { name: 'search.json', body: descriptionJson({ Metadata: { Big: 'z'.repeat(5000) } }) }
    await expectRefused(await archiveOf(members), /search\.json is larger than the limit of 4096 bytes/, { maxDescriptionBytes: 4096 })
    const padded = validMembers()
    padded[3] = { name: 'end.json', body: `${padded[3]!.body as string}${' '.repeat(5000)}` }
    expect((await readAll(await archiveOf(padded))).records).toHaveLength(3)
    await expectRefused(await archiveOf(padded), /end\.json is larger than the limit of 4096 bytes/, { maxDescriptionBytes: 4096 })
  })
})

describe('refused: hostile member names and kinds', () => {
  const withFirst = (member: Member) => archiveOf([member, ...validMembers()])

  test('absolute names, "..", backslashes, NUL, unexpected names', async () => {
    const cases: [string, RegExp][] = [
      ['/search.json', /"\/search\.json" is an absolute path/],
      ['/etc/passwd', /is an absolute path/],
      ['C:/search.json', /is an absolute path/],
      ['../search.json', /"\.\.\/search\.json" contains "\.\."/],
      ['results/../../x', /contains "\.\."/],
      ['results\\000001.ndjson', /contains a backslash/],
      ['./search.json', /unexpected archive member "\.\/search\.json"|search\.json must be the first member/],
      ['notes.txt', /search\.json must be the first member/],
    ]
    for (const [name, message] of cases) await expectRefused(await withFirst({ name, body: '{}' }), message)
    const odd = validMembers()
    odd.splice(1, 0, { name: 'notes.txt', body: 'hello' })
    await expectRefused(await archiveOf(odd), /unexpected archive member "notes\.txt"/)
    odd.splice(1, 1, { name: 'results/1.ndjson', body: ndjson([record(0)]) })
    await expectRefused(await archiveOf(odd), /unexpected archive member "results\/1\.ndjson"/)
    // A NUL can only come through a pax header's path.
    await expectRefused(
      await withFirst({ name: 'search.json', pax: { path: 'search.json\u0000../../x' }, body: '{}' }),
      /contains a NUL character/,
    )
  })

  test('symlinks, hard links, directories, devices and fifos', async () => {
    const cases: Member[] = [
      { name: 'search.json', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'search.json', type: 'link', linkname: 'end.json' },
      { name: 'results/', type: 'directory' },
      { name: 'search.json', type: 'character-device' },
      { name: 'search.json', type: 'block-device' },
      { name: 'search.json', type: 'fifo' },
    ]
    for (const member of cases) {
      await expectRefused(await withFirst(member), new RegExp(`is a ${member.type}, not a regular file`))
    }
    const later = validMembers()
    later.splice(2, 0, { name: 'results/000002.ndjson', type: 'symlink', linkname: '../../etc/shadow' })
    await expectRefused(await archiveOf(later), /"results\/000002\.ndjson" is a symlink, not a regular file/)
  })

  test('duplicate members', async () => {
    const members = validMembers()
    await expectRefused(await archiveOf([members[0]!, ...members]), /"search\.json" appears twice/)
    await expectRefused(await archiveOf([members[0]!, members[1]!, members[1]!, members[2]!, members[3]!]), /"results\/000001\.ndjson" appears twice/)
    await expectRefused(await archiveOf([...members, members[3]!]), /"end\.json" follows end\.json, which must be last/)
  })

  test('members in the wrong order', async () => {
    const [head, one, two, end] = validMembers()
    await expectRefused(await archiveOf([one!, head!, two!, end!]), /search\.json must be the first member/)
    await expectRefused(await archiveOf([end!, head!, one!, two!]), /search\.json must be the first member/)
    await expectRefused(await archiveOf([head!, two!, one!, end!]), /"results\/000002\.ndjson" is out of order: expected results\/000001\.ndjson or end\.json/)
    // end.json before the last chunk: its counts cover records not yet read.
    await expectRefused(await archiveOf([head!, one!, end!, two!]), /end\.json says 3 records but the archive holds 2/)
  })
})

describe('refused: contents', () => {
  const withDescription = (body: string) => {
    const members = validMembers()
    members[0] = { name: 'search.json', body }
    return archiveOf(members)
  }

  test('search.json that is not a JSON object, or lacks or mistypes a required field, or has a wrong Format or Version', async () => {
    const cases: [string, RegExp][] = [
      ['not json', /search\.json is not valid JSON/],
      ['[1,2]', /search\.json must hold a JSON object/],
      ['null', /search\.json must hold a JSON object/],
      [descriptionJson({ Format: 'zip' }), /Format must be "quarry-search-archive"/],
      [descriptionJson({ Format: undefined }), /Format must be "quarry-search-archive"/],
      [descriptionJson({ Version: 2 }), /unsupported Version 2; this server reads version 1/],
      [descriptionJson({ Version: '1' }), /unsupported Version "1"/],
      [descriptionJson({ UserQuery: undefined }), /UserQuery must be a string/],
      [descriptionJson({ EffectiveQuery: 5 }), /EffectiveQuery must be a string/],
      [descriptionJson({ StartRange: 1714521600 }), /StartRange must be an RFC 3339 timestamp string/],
      [descriptionJson({ EndRange: '2024-05-02' }), /EndRange must be an RFC 3339 timestamp string/],
      [descriptionJson({ Started: '2024-13-02T00:00:00Z' }), /Started must be an RFC 3339 timestamp string/],
      [descriptionJson({ Finished: null }), /Finished must be an RFC 3339 timestamp string/],
      [descriptionJson({ ItemCount: '3' }), /ItemCount must be a non-negative integer/],
      [descriptionJson({ ItemCount: 2.5 }), /ItemCount must be a non-negative integer/],
      [descriptionJson({ ItemCount: 4 }), /search\.json says ItemCount 4 but the archive holds 3 records/],
    ]
    for (const [body, message] of cases) {
      const handed = await expectRefused(await withDescription(body), message)
      if (!/ItemCount 4/.test(message.source)) expect(handed).toBe(0)
    }
    // The zero time of an unfinished search is a valid RFC 3339 timestamp.
    const zero = await readAll(await withDescription(descriptionJson({ Finished: '0001-01-01T00:00:00Z', ItemCount: 3 })))
    expect(zero.description.Finished).toBe('0001-01-01T00:00:00Z')
  })

  test('a record line that is not JSON, not an object, empty, not UTF-8, or lacks its newline', async () => {
    const good = ndjson([record(0)])
    const cases: [string | Uint8Array, RegExp][] = [
      [`${good}{"broken": \n`, /record 2 \(in results\/000001\.ndjson\) is not valid JSON/],
      [`${good}[1,2,3]\n`, /record 2 \(in results\/000001\.ndjson\) is not a JSON object/],
      [`${good}"text"\n`, /record 2 .* is not a JSON object/],
      [`${good}null\n`, /record 2 .* is not a JSON object/],
      [`${good}\n`, /record 2 .* is not valid JSON/],
      [new Uint8Array([...Buffer.from(good), 0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d, 0x0a]), /record 2 .* is not valid JSON/],
      [good.slice(0, -1), /the last line of results\/000001\.ndjson has no newline at its end/],
    ]
    for (const [body, message] of cases) {
      const bytes = Buffer.from(body)
      const members = validMembers([bytes.toString('latin1')])
      members[1] = { name: 'results/000001.ndjson', body: bytes }
      members[2] = {
        name: 'end.json',
        body: JSON.stringify({ Records: 2, Bytes: bytes.byteLength, SHA256: createHash('sha256').update(bytes).digest('hex') }),
      }
      await expectRefused(await archiveOf(members), message)
    }
  })

  test('end.json that is malformed or whose counts or checksum do not match', async () => {
    const chunks = [ndjson([record(0), record(1)]), ndjson([record(2)])]
    const cases: [string, RegExp][] = [
      ['{', /end\.json is not valid JSON/],
      ['[]', /end\.json must hold a JSON object/],
      [endJson(chunks, { Records: undefined }), /end\.json: Records must be a non-negative integer/],
      [endJson(chunks, { Bytes: -1 }), /end\.json: Bytes must be a non-negative integer/],
      [endJson(chunks, { SHA256: 'abc' }), /end\.json: SHA256 must be 64 hexadecimal digits/],
      [endJson(chunks, { Records: 4 }), /end\.json says 4 records but the archive holds 3/],
      [endJson(chunks, { Bytes: 1 }), /end\.json says 1 bytes of records but the archive holds \d+/],
      [endJson(chunks, { SHA256: '0'.repeat(64) }), /the SHA256 of the records does not match/],
    ]
    for (const [body, message] of cases) {
      const members = validMembers(chunks)
      members[3] = { name: 'end.json', body }
      await expectRefused(await archiveOf(members), message)
    }
    // The same records with one byte changed in place: same counts, other checksum.
    const members = validMembers(chunks)
    members[1] = { name: 'results/000001.ndjson', body: chunks[0]!.replace('"Seq":1', '"Seq":7') }
    await expectRefused(await archiveOf(members), /the SHA256 of the records does not match/)
  })
})

describe('streaming and errors of others', () => {
  test('a slow onRecord holds the reader back: input is pulled only a few chunks ahead', async () => {
    const bytes = await bytesOf(
      writeSearchArchive(DESCRIPTION, lazyRecords(40_000, (i) => ({ Seq: i, R: randomBytes(48).toString('base64') })), {
        chunkBytes: 64 * 1024,
      }),
    )
    const { stream, meter } = countingStream(bytes, 8 * 1024)
    const pulledAt: number[] = []
    let seen = 0
    await readSearchArchive(stream, {}, async () => {
      if (seen++ % 5000 === 0) {
        await Bun.sleep(30) // a slow store: the reader must wait for it, not read on
        pulledAt.push(meter.pulled)
      }
    })
    expect(seen).toBe(40_000)
    // While the first record was being stored, only a small part of the archive had been read.
    expect(pulledAt[0]!).toBeLessThan(bytes.byteLength / 8)
    // And the reading advanced with the records, never far ahead of them.
    for (let i = 0; i < pulledAt.length; i++) {
      const share = (i * 5000) / 40_000
      expect(pulledAt[i]! / bytes.byteLength).toBeLessThan(share + 1 / 8)
    }
  })

  test('an error thrown by onRecord is passed on unchanged and reading stops', async () => {
    const bytes = await bytesOf(
      writeSearchArchive(DESCRIPTION, lazyRecords(10_000, (i) => ({ Seq: i, R: randomBytes(48).toString('base64') }))),
    )
    const { stream, meter } = countingStream(bytes, 4096)
    const storeError = new Error('disk full')
    let handed = 0
    const caught = await readSearchArchive(stream, {}, async () => {
      if (++handed === 3) throw storeError
    }).catch((e) => e)
    expect(caught).toBe(storeError)
    expect(handed).toBe(3)
    expect(meter.pulled).toBeLessThan(bytes.byteLength / 2)
  })

  test('an error of the input stream is passed on unchanged', async () => {
    const bytes = await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(2000), { chunkBytes: 8192 }))
    const broken = new Error('connection reset')
    let sent = false
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) return controller.error(broken)
        sent = true
        controller.enqueue(bytes.subarray(0, bytes.byteLength / 2))
      },
    })
    const caught = await readSearchArchive(stream, {}, async () => {}).catch((e) => e)
    expect(caught).toBe(broken)
  })

  test('a refusal cancels the input stream', async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode('not gzip at all, and more to come'))
      },
      cancel() {
        cancelled = true
      },
    })
    const caught = await readSearchArchive(stream, {}, async () => {}).catch((e) => e)
    expect(caught).toBeInstanceOf(ArchiveError)
    expect(cancelled).toBe(true)
  })
})

describe('an archive built by hand with tar, as docs/search-archive.md shows', () => {
  /** The shell script of the documentation's "Building one by hand" section, run as it stands. */
  const docScript = (() => {
    const doc = readFileSync(join(import.meta.dir, '../docs/search-archive.md'), 'utf8')
    const section = doc.slice(doc.indexOf('## Building one by hand'))
    const block = /```sh\n([\s\S]*?)```/.exec(section)
    if (!block) throw new Error('docs/search-archive.md has no sh block under "Building one by hand"')
    return block[1]!
  })()

  const sh = (dir: string, script: string, env: Record<string, string> = {}) => {
    const run = Bun.spawnSync(['sh', '-euc', script], { cwd: dir, env: { ...process.env, ...env } })
    if (run.exitCode !== 0) throw new Error(`sh failed: ${run.stderr.toString()}`)
    return run.stdout.toString()
  }

  for (const format of ['gnu', 'posix', 'ustar']) {
    test(`the documented script with tar --format=${format} makes an archive that is accepted`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-archive-'))
      try {
        const mine = [record(0), record(1), { Nested: { Deep: [1, 2, 3] }, Text: 'tab\tand "quotes"' }]
        writeFileSync(join(dir, 'my-records.ndjson'), ndjson(mine))
        sh(dir, docScript, { TAR_OPTIONS: `--format=${format}` })
        expect(sh(dir, 'tar tzf search.tar.gz').trim().split('\n')).toEqual(['search.json', 'results/000001.ndjson', 'end.json'])
        const { description, records } = await readAll(readFileSync(join(dir, 'search.tar.gz')))
        expect(records).toEqual(mine)
        expect(description).toMatchObject({ UserQuery: 'tag=syslog', Metadata: null, ItemCount: 3 })
        // Naming the folder instead of its files adds a directory member: refused.
        sh(dir, 'tar czf folder.tar.gz search.json results end.json', { TAR_OPTIONS: `--format=${format}` })
        await expectRefused(readFileSync(join(dir, 'folder.tar.gz')), /"results\/" is a directory, not a regular file/)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  }

  test('the documented script with the records split into several chunks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-archive-'))
    try {
      const mine = Array.from({ length: 25 }, (_, i) => record(i))
      writeFileSync(join(dir, 'my-records.ndjson'), ndjson(mine))
      // The documented variant: split into whole-line chunks with six-digit numbers from 000001.
      const split = docScript.replace(
        /^cp my-records\.ndjson results\/000001\.ndjson.*$/m,
        'split -l 10 -a 6 -d --numeric-suffixes=1 --additional-suffix=.ndjson my-records.ndjson results/',
      )
      expect(split).not.toBe(docScript)
      sh(dir, split)
      expect(sh(dir, 'tar tzf search.tar.gz').trim().split('\n')).toEqual([
        'search.json',
        'results/000001.ndjson',
        'results/000002.ndjson',
        'results/000003.ndjson',
        'end.json',
      ])
      expect((await readAll(readFileSync(join(dir, 'search.tar.gz')))).records).toEqual(mine)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an archive the writer made lists and extracts with tar', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-archive-'))
    try {
      writeFileSync(join(dir, 'a.tar.gz'), await bytesOf(writeSearchArchive(DESCRIPTION, lazyRecords(3))))
      const run = Bun.spawnSync(['tar', '-xzf', 'a.tar.gz'], { cwd: dir })
      expect(run.exitCode).toBe(0)
      expect(readFileSync(join(dir, 'results/000001.ndjson'), 'utf8')).toBe(ndjson([record(0), record(1), record(2)]))
      expect(JSON.parse(readFileSync(join(dir, 'search.json'), 'utf8')).UserQuery).toBe(DESCRIPTION.UserQuery)
      expect(JSON.parse(readFileSync(join(dir, 'end.json'), 'utf8')).Records).toBe(3)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
