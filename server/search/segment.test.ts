// The two segment formats (server/search/segment.ts): a plain segment (written before segments were compressed) and
// its compressed form read as the same entries, through the synchronous and the asynchronous decoders; and corrupt
// compressed bytes of every kind are an error naming the segment as corrupt, never a crash, a hang or a large
// allocation.
import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { Segment, type SegmentEntry, compressSegment, compressSegmentSync, decodeSegment, encodeSegment, withPlainSegment } from './segment'

/** Entries in strictly increasing (ts, tag, id) order, from fast-check's values. */
const arbEntries = fc
  .array(
    fc.record({
      dts: fc.integer({ min: 0, max: 3 }),
      tagId: fc.integer({ min: 1, max: 5 }),
      src: fc.constantFrom('', '10.0.0.1', '192.0.2.7', '2001:db8::1'),
      data: fc.uint8Array({ maxLength: 300 }),
    }),
    { maxLength: 200 },
  )
  .map((raw) => {
    let ts = 1_767_225_600_000
    return raw.map((r, i): SegmentEntry => ({ ts: (ts += r.dts), tagId: r.tagId, id: i + 1, src: r.src, data: r.data }))
  })
  .map((list) => list.sort((a, b) => a.ts - b.ts || a.tagId - b.tagId || a.id - b.id))

/** Everything a reader sees of a segment, as plain values. */
function contents(seg: Segment) {
  return Array.from({ length: seg.count }, (_, i) => ({
    ts: seg.ts[i],
    tagId: seg.tag[i],
    id: seg.id[i],
    src: seg.srcs[seg.srcIdx[i]!],
    data: Buffer.from(seg.entryData(i)).toString('hex'),
  }))
}

function expected(list: readonly SegmentEntry[]) {
  return list.map((e) => ({ ts: e.ts, tagId: e.tagId, id: e.id, src: e.src, data: Buffer.from(e.data).toString('hex') }))
}

test('a plain segment and its compressed form read as the same entries, tags and data', async () => {
  await fc.assert(
    fc.asyncProperty(arbEntries, async (list) => {
      const plain = encodeSegment(list)
      const compressed = await compressSegment(plain)
      expect(Buffer.from(compressed.subarray(0, 8)).toString('latin1')).toBe('QSEG0002')
      expect(Buffer.from(compressSegmentSync(plain)).equals(Buffer.from(compressed))).toBe(true)
      const old = new Segment(plain)
      expect(old.compressed).toBe(false)
      expect(contents(old)).toEqual(expected(list))
      for (const seg of [new Segment(compressed), await decodeSegment(compressed), await decodeSegment(plain)]) {
        await seg.loadData()
        expect(contents(seg)).toEqual(expected(list))
        expect(Buffer.from(seg.data).equals(Buffer.from(old.data))).toBe(true)
        expect([...seg.tags].sort()).toEqual([...new Set(list.map((e) => e.tagId))].sort())
        expect(seg.decodedBytes).toBe(plain.byteLength)
      }
      // The data are not decoded until something reads them (a count by time and tag does not).
      const lazy = await decodeSegment(compressed)
      expect(lazy.count).toBe(list.length)
    }),
    { numRuns: 60 },
  )
})

/** 2,000 access-log-like entries: a compressed segment of several zstd blocks. */
function sample(): Uint8Array {
  const list: SegmentEntry[] = Array.from({ length: 2000 }, (_, i) => ({
    ts: 1_767_225_600_000 + i,
    tagId: 1 + (i % 2),
    id: i + 1,
    src: '10.0.0.1',
    data: Buffer.from(`10.1.${i % 250}.${i % 7} - - [01/Jan/2026:00:00:${String(i % 60).padStart(2, '0')} +0000] "GET /item/${(i * 7919) % 100000} HTTP/1.1" 200 ${i * 31}\n`),
  }))
  return compressSegmentSync(encodeSegment(list))
}

/** Decodes every way a reader does (the index, then the data), synchronously and not. */
async function readAll(bytes: Uint8Array): Promise<string[]> {
  const errors: string[] = []
  try {
    const seg = new Segment(bytes)
    void seg.data.byteLength
  } catch (e) {
    errors.push((e as Error).message)
  }
  try {
    const seg = await decodeSegment(bytes)
    await seg.loadData()
  } catch (e) {
    errors.push((e as Error).message)
  }
  if (errors.length !== 2) throw new Error(`decoded without an error (${errors.join('; ')})`)
  for (const m of errors) expect(m).toMatch(/corrupt segment|not a segment|its header says/)
  return errors
}

test('corrupt compressed segments are refused with an error: flipped bytes, truncation, lying sizes, extra frames, a bomb', async () => {
  const good = sample()
  const b = Buffer.from(good)
  const indexZ = b.readUInt32LE(24)
  const tagsN = b.readUInt32LE(44)
  const indexAt = (48 + 4 * tagsN + 7) & ~7
  const dataAt = indexAt + indexZ
  const mutate = (f: (c: Buffer) => Buffer | void) => {
    const c = Buffer.from(good)
    return f(c) ?? c
  }
  // Every single byte flipped in each frame (a sample of positions) and in the header's sizes and checksums.
  const positions = [indexAt, indexAt + 4, indexAt + 9, dataAt - 1, dataAt, dataAt + 5, dataAt + 200, Math.floor((dataAt + b.byteLength) / 2), b.byteLength - 1]
  for (const at of positions) await readAll(mutate((c) => void (c[at]! ^= 0x5a)))
  for (const at of [16, 24, 28, 32, 40, 44]) await readAll(mutate((c) => void (c[at]! ^= 0x01)))
  // Truncated anywhere, or with bytes appended (a second frame after the data's).
  for (const len of [8, 30, indexAt, dataAt, dataAt + 3, b.byteLength - 1]) await readAll(b.subarray(0, len))
  await readAll(Buffer.concat([b, Bun.zstdCompressSync(Buffer.from('more'))]))
  // A data frame of 64 MiB of zeros (a few KiB compressed) in place of the data: refused before it is decompressed.
  const bomb = Bun.zstdCompressSync(Buffer.alloc(64 << 20))
  const withBomb = Buffer.concat([b.subarray(0, dataAt), bomb])
  withBomb.writeDoubleLE(bomb.byteLength, 32)
  expect(await readAll(withBomb)).toEqual(Array(2).fill(`corrupt segment: a frame of ${64 << 20} bytes where the segment holds ${b.readDoubleLE(16)}`))
  // A frame whose header declares the segment's size but whose blocks hold 200 MiB: zstd stops at the declared size.
  const big = Buffer.from(Bun.zstdCompressSync(Buffer.alloc(200 << 20)))
  const fcsAt = 5 + ((big[4]! >> 5) & 1 ? 0 : 1)
  expect(big[4]! >> 6).toBe(2)
  big.writeUInt32LE(b.readDoubleLE(16), fcsAt)
  const liar = Buffer.concat([b.subarray(0, dataAt), big])
  liar.writeDoubleLE(big.byteLength, 32)
  for (const m of await readAll(liar)) expect(m).toMatch(/^corrupt segment: its data do not decompress/)
  // The data frame of another segment: the right format, the wrong size and checksum.
  const other = Buffer.from(compressSegmentSync(encodeSegment([{ ts: 1, tagId: 1, id: 1, src: '', data: Buffer.from('another segment') }])))
  const otherDataAt = ((48 + 4 * other.readUInt32LE(44) + 7) & ~7) + other.readUInt32LE(24)
  const swapped = Buffer.concat([b.subarray(0, dataAt), other.subarray(otherDataAt)])
  swapped.writeDoubleLE(other.byteLength - otherDataAt, 32)
  await readAll(swapped)
  // Random garbage after a valid header never decodes either.
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 2000 }), (junk) => {
      const c = Buffer.concat([b.subarray(0, indexAt), Buffer.from(junk)])
      expect(() => {
        const seg = new Segment(c)
        void seg.data
      }).toThrow()
    }),
    { numRuns: 200 },
  )
  // And the good one still reads.
  const seg = await decodeSegment(good)
  await seg.loadData()
  expect(seg.count).toBe(2000)
})

test('segments of 4 MiB of access lines (many zstd blocks, split or not) decode at every level', async () => {
  const list: SegmentEntry[] = []
  let bytes = 0
  for (let i = 0; bytes < 4 << 20; i++) {
    const data = Buffer.from(`10.${i % 7}.${i % 250}.${i % 13} - - [01/Jan/2026:00:${String(i % 60).padStart(2, '0')}:00 +0000] "GET /p/${(i * 7919) % 99991}?q=${i % 50} HTTP/1.1" ${[200, 404, 500][i % 3]} ${(i * 31) % 9999} "-" "agent/${i % 100}"\n`)
    list.push({ ts: 1_767_225_600_000 + i, tagId: 1, id: i + 1, src: '', data })
    bytes += data.byteLength
  }
  const plain = encodeSegment(list)
  for (const level of [1, 3, 9, 19]) {
    const z = await compressSegment(plain, level)
    expect(z.byteLength).toBeLessThan(plain.byteLength / 3)
    const seg = await decodeSegment(z)
    await seg.loadData()
    expect(Buffer.from(seg.data).equals(Buffer.from(new Segment(plain).data))).toBe(true)
    expect(seg.entryData(list.length - 1).toString()).toBe(list.at(-1)!.data.toString())
  }
}, 60_000)

test('a segment encoded in a used buffer, or sealed through the scratch buffers, has the same bytes as one of its own', async () => {
  await fc.assert(
    fc.asyncProperty(arbEntries, arbEntries, fc.integer({ min: 0, max: 255 }), async (a, b, garbage) => {
      const own = encodeSegment(a)
      const used = Buffer.alloc(own.byteLength + 64, garbage)
      expect(Buffer.from(encodeSegment(a, () => used))).toEqual(Buffer.from(own))
      // scratch buffers are reused: what an earlier, larger segment left in them is not in the next one
      await withPlainSegment(b, async () => {})
      const sealed = await withPlainSegment(a, (plain) => compressSegment(plain, 1))
      expect(Buffer.from(sealed)).toEqual(Buffer.from(await compressSegment(own, 1)))
      const seg = await decodeSegment(sealed)
      await seg.loadData()
      expect(contents(seg)).toEqual(expected(a))
    }),
    { numRuns: 100 },
  )
})
