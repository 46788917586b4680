// The streaming multipart reader shared by resources and user files: the file part goes to a sink as a stream,
// small text parts come back as fields. The upload routes' own tests cover aborts, limits and malformed bodies.
import { describe, expect, test } from 'bun:test'
import { FIELD_LIMIT, MultipartError, streamFilePart, streamUpload } from './multipart'

const collect = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer())
const request = (fd: FormData) => new Request('http://localhost/', { method: 'POST', body: fd })

describe('streamUpload', () => {
  test('answers the sink result, the text fields (first value wins) and the file name', async () => {
    const fd = new FormData()
    fd.append('name', 'first')
    fd.append('file', new Blob(['contents']), 'report.txt')
    fd.append('name', 'second')
    fd.append('meta', '{"Name":"x"}')
    const form = await streamUpload(request(fd), collect, async () => {})
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
    const err = await streamUpload(request(fd), sink, async (r) => void discarded.push(r), { fieldLimit: 100 }).catch((e) => e)
    expect(err).toBeInstanceOf(MultipartError)
    expect(String(err)).toContain('exceeds 100 bytes')
    // the file stream fails under the sink, or what the sink completed is discarded: nothing is kept either way
    expect(discarded).toEqual(completed)
    // at the limit is fine; the default limit is small
    const ok = new FormData()
    ok.append('desc', 'x'.repeat(100))
    ok.append('file', new Blob(['c']), 'f')
    expect((await streamUpload(request(ok), collect, async () => {}, { fieldLimit: 100 })).fields.desc).toHaveLength(100)
    expect(FIELD_LIMIT).toBeLessThanOrEqual(64 * 1024)
  })

  test('streamFilePart answers only the sink result; no file part is a MultipartError', async () => {
    const fd = new FormData()
    fd.append('file', new Blob(['abc']), 'f')
    expect(await streamFilePart(request(fd), collect, async () => {})).toEqual(new TextEncoder().encode('abc'))
    const none = new FormData()
    none.append('name', 'x')
    expect(await streamFilePart(request(none), collect, async () => {}).catch((e) => e)).toBeInstanceOf(MultipartError)
  })
})
