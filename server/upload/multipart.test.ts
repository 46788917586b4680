// The streaming multipart reader shared by resources and user files: the file part goes to a sink as a stream,
// small text parts come back as fields. The upload routes' own tests cover aborts, limits and malformed bodies.
import { describe, expect, test } from 'bun:test'
import { FIELD_LIMIT, MULTIPART_OVERHEAD, MultipartError, UploadTooLargeError, streamFilePart, streamUpload } from './multipart'

const collect = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer())
/** Room enough for every file of these tests. */
const LIMIT = { maxBytes: 1024 * 1024 }
const request = (fd: FormData) => new Request('http://localhost/', { method: 'POST', body: fd })

describe('streamUpload', () => {
  test('answers the sink result, the text fields (first value wins) and the file name', async () => {
    const fd = new FormData()
    fd.append('name', 'first')
    fd.append('file', new Blob(['contents']), 'report.txt')
    fd.append('name', 'second')
    fd.append('meta', '{"Name":"x"}')
    const form = await streamUpload(request(fd), collect, async () => {}, LIMIT)
    expect(new TextDecoder().decode(form.result)).toBe('contents')
    expect({ ...form.fields }).toEqual({ name: 'first', meta: '{"Name":"x"}' })
    expect(form.filename).toBe('report.txt')
  })

  test('a text field over the limit is a MultipartError, and what the sink stored is discarded', async () => {
    const fd = new FormData()
    fd.append('file', new Blob(['contents']), 'f')
    fd.append('desc', 'x'.repeat(101))
    const discarded: string[] = []
    const completed: string[] = []
    const sink = async (s: ReadableStream<Uint8Array>) => {
      const text = new TextDecoder().decode(await collect(s))
      completed.push(text)
      return text
    }
    const err = await streamUpload(request(fd), sink, async (r) => void discarded.push(r), { ...LIMIT, fieldLimit: 100 }).catch((e) => e)
    expect(err).toBeInstanceOf(MultipartError)
    expect(String(err)).toContain('exceeds 100 bytes')
    // the file stream fails under the sink, or what the sink completed is discarded: nothing is kept either way
    expect(discarded).toEqual(completed)
    // at the limit is fine; the default limit is small
    const ok = new FormData()
    ok.append('desc', 'x'.repeat(100))
    ok.append('file', new Blob(['c']), 'f')
    expect((await streamUpload(request(ok), collect, async () => {}, { ...LIMIT, fieldLimit: 100 })).fields.desc).toHaveLength(100)
    expect(FIELD_LIMIT).toBeLessThanOrEqual(64 * 1024)
  })

  test('streamFilePart answers only the sink result; no file part is a MultipartError', async () => {
    const fd = new FormData()
    fd.append('file', new Blob(['abc']), 'f')
    expect(await streamFilePart(request(fd), collect, async () => {}, LIMIT)).toEqual(new TextEncoder().encode('abc'))
    const none = new FormData()
    none.append('name', 'x')
    expect(await streamFilePart(request(none), collect, async () => {}, LIMIT).catch((e) => e)).toBeInstanceOf(MultipartError)
  })
})

describe('the whole body is bounded, not only the file part', () => {
  const enc = new TextEncoder()
  /** A form with a small file part and then a part that is dropped (not `file`) and never ends; no Content-Length. */
  const endless = () => {
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode('--b\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nabc\r\n'))
        c.enqueue(enc.encode('--b\r\nContent-Disposition: form-data; name="junk"; filename="j"\r\n\r\n'))
      },
      pull(c) {
        pulled += 64 * 1024
        c.enqueue(new Uint8Array(64 * 1024).fill(120))
      },
    })
    return { stream, pulled: () => pulled }
  }

  test('parts that are dropped still count: past maxBytes + MULTIPART_OVERHEAD it is an UploadTooLargeError, and the sink result is discarded', async () => {
    const body = endless()
    const req = new Request('http://localhost/', { method: 'POST', body: body.stream, headers: { 'content-type': 'multipart/form-data; boundary=b' } })
    const discarded: string[] = []
    const sink = async (s: ReadableStream<Uint8Array>) => new TextDecoder().decode(await collect(s))
    const err = await streamUpload(req, sink, async (r) => void discarded.push(r), { maxBytes: 256 * 1024 }).catch((e) => e)
    expect(err).toBeInstanceOf(UploadTooLargeError)
    expect(err).toBeInstanceOf(MultipartError)
    expect(discarded).toEqual(['abc'])
    expect(body.pulled()).toBeLessThan(256 * 1024 + MULTIPART_OVERHEAD + 256 * 1024)
  })

  test('a declared Content-Length over the bound is refused before a byte is read', async () => {
    const body = endless()
    const req = new Request('http://localhost/', {
      method: 'POST',
      body: body.stream,
      headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(1024 + MULTIPART_OVERHEAD + 1) },
    })
    let sinkCalled = false
    const err = await streamUpload(req, async () => void (sinkCalled = true), async () => {}, { maxBytes: 1024 }).catch((e) => e)
    expect(err).toBeInstanceOf(UploadTooLargeError)
    expect(sinkCalled).toBe(false)
    expect(body.pulled()).toBe(0)
  })
})

describe('the file part arrives exactly, whatever the body chunks', () => {
  // Contents full of near-boundaries: the parser keeps a partial boundary match in its own look-behind buffer across
  // body chunks and hands those bytes out later, while the bridge hands out most slices of body chunks without a copy.
  const BOUNDARY = 'quarry-mp-test-7f3e'
  const enc = new TextEncoder()
  const near = ['\r', '\r\n', '\r\n-', '\r\n--', `\r\n--${BOUNDARY.slice(0, 7)}`, `\r\n--${BOUNDARY.slice(0, -1)}`, '\r\r\n--\r\n-']
  const contents = enc.encode(Array.from({ length: 300 }, (_, i) => near[i % near.length] + String.fromCharCode(65 + (i % 26)).repeat(i % 5)).join(''))
  const body = new Uint8Array([
    ...enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n`),
    ...contents,
    ...enc.encode(`\r\n--${BOUNDARY}--\r\n`),
  ])
  /** The body cut into pieces of `size` bytes (each in its own fresh buffer), starting with an offset piece. */
  const chunked = (first: number, size: number) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(body.slice(0, first))
        for (let at = first; at < body.byteLength; at += size) c.enqueue(body.slice(at, at + size))
        c.close()
      },
    })
  /** A sink that reads slowly, so the bridge's backpressure stops and restarts the parser often. */
  const slowCollect = async (s: ReadableStream<Uint8Array>) => {
    const parts: Uint8Array[] = []
    for await (const c of s) {
      parts.push(c)
      await Bun.sleep(0)
    }
    return new Uint8Array(await new Blob(parts).arrayBuffer())
  }

  test('for every split offset, in small and odd-sized chunks, with a slow sink', async () => {
    for (const size of [1, 7, 64, 333]) {
      for (let first = 1; first <= Math.min(size, 40) + 20; first++) {
        const req = new Request('http://localhost/', { method: 'POST', body: chunked(first, size), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } })
        const got = await streamFilePart(req, slowCollect, async () => {}, LIMIT)
        if (!Buffer.from(got).equals(Buffer.from(contents))) throw new Error(`chunks of ${size} from offset ${first}: the file part differs`)
      }
    }
    expect(contents.byteLength).toBeGreaterThan(1000)
  })
})
