// Bounded decompression of shippers' request bodies: Loki's snappy block format (snappyjs) and Content-Encoding gzip
// or deflate (node:zlib). Neither allocates or produces more than `max` bytes: snappy's declared length is checked
// before the output is allocated, zlib stops at maxOutputLength. A body past the bound or malformed is a
// DecompressionRefused, which says which. snappyjs and node:zlib load at the first use (not at the start).
import { nodeZlib } from '../runtime/lazy-builtins'

/** What Quarry calls of snappyjs (it ships no types): a block decompressed, refused past `maxLength` declared bytes. */
interface SnappyJS {
  uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array
}

let snappyjs: SnappyJS | undefined
const snappy = () => (snappyjs ??= require('snappyjs') as SnappyJS)

export class DecompressionRefused extends Error {
  override name = 'DecompressionRefused'
  constructor(
    readonly reason: 'too-large' | 'invalid',
    message: string,
  ) {
    super(message)
  }
}

const tooLarge = (max: number) => new DecompressionRefused('too-large', `the body decompresses to more than ${max} bytes (QUARRY_INGEST_MAX_DECOMPRESSED)`)

/** The length a snappy block declares (its leading varint), or -1 when it declares none readable. */
export function snappyDeclaredLength(bytes: Uint8Array): number {
  let length = 0
  for (let i = 0, shift = 0; i < Math.min(bytes.byteLength, 5); i++, shift += 7) {
    const b = bytes[i]!
    length += (b & 0x7f) * 2 ** shift
    if (b < 0x80) return length
  }
  return -1
}

/** A snappy block (no framing) decompressed, at most `max` bytes. */
export function snappyUncompress(bytes: Uint8Array, max: number): Uint8Array {
  const declared = snappyDeclaredLength(bytes)
  if (declared < 0) throw new DecompressionRefused('invalid', 'the body is not snappy-compressed (no length)')
  if (declared > max) throw tooLarge(max)
  try {
    return snappy().uncompress(bytes, max)
  } catch (e) {
    throw new DecompressionRefused('invalid', `the body is not valid snappy: ${(e as Error).message}`)
  }
}

/** The body decoded by its Content-Encoding (none, gzip or deflate), at most `max` bytes. */
export function decodeContentEncoding(bytes: Uint8Array, encoding: string | null, max: number): Uint8Array {
  const name = (encoding ?? '').trim().toLowerCase()
  if (name === '' || name === 'identity') return bytes
  if (name !== 'gzip' && name !== 'deflate') throw new DecompressionRefused('invalid', `Content-Encoding ${name} is not supported (gzip, deflate or none)`)
  try {
    const zlib = nodeZlib()
    return (name === 'gzip' ? zlib.gunzipSync : zlib.inflateSync)(bytes, { maxOutputLength: max })
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(max)
    throw new DecompressionRefused('invalid', `the body is not valid ${name}: ${(e as Error).message}`)
  }
}
