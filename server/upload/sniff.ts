// Content-type detection after the WHATWG MIME Sniffing Standard (https://mimesniff.spec.whatwg.org/, "rules for
// identifying an unknown MIME type" with the sniff-scriptable flag set), the same table Go's
// http.DetectContentType follows, so answers match what clients of this API family already see.
// JSON is not a sniffed type: it comes out as text/plain.

type Sig = (b: Uint8Array, firstNonWs: number) => string | undefined

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0))

/** Bytes `pattern` at the start, with `mask` applied (0xff = exact, 0xdf = ASCII case-insensitive). */
function masked(pattern: number[] | Uint8Array, mask: number[] | Uint8Array, type: string, skipWs = false): Sig {
  return (b, ws) => {
    const start = skipWs ? ws : 0
    if (b.length - start < pattern.length) return undefined
    for (let i = 0; i < pattern.length; i++) if ((b[start + i]! & mask[i]!) !== pattern[i]) return undefined
    return type
  }
}

const exact = (pattern: number[] | Uint8Array, type: string): Sig => masked(pattern, pattern.map(() => 0xff), type)

/** An HTML tag name followed by a tag-terminating byte (space or `>`), case-insensitive, after white space. */
function html(tag: string): Sig {
  const p = ascii(tag.toUpperCase())
  const mask = Uint8Array.from(tag, (c) => (/[A-Za-z]/.test(c) ? 0xdf : 0xff))
  return (b, ws) => {
    if (b.length - ws < p.length + 1) return undefined
    for (let i = 0; i < p.length; i++) if ((b[ws + i]! & mask[i]!) !== p[i]) return undefined
    const next = b[ws + p.length]
    return next === 0x20 || next === 0x3e ? 'text/html; charset=utf-8' : undefined
  }
}

function mp4(b: Uint8Array): string | undefined {
  if (b.length < 12) return undefined
  const boxSize = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0
  if (boxSize % 4 !== 0 || b.length < boxSize) return undefined
  if (String.fromCharCode(b[4]!, b[5]!, b[6]!, b[7]!) !== 'ftyp') return undefined
  for (let st = 8; st < boxSize; st += 4) {
    if (st === 12) continue // the minor version
    if (String.fromCharCode(b[st]!, b[st + 1]!, b[st + 2]!) === 'mp4') return 'video/mp4'
  }
  return undefined
}

/** Bytes that never occur in text (WHATWG "binary data byte"). */
function isBinaryByte(c: number): boolean {
  return c <= 0x08 || c === 0x0b || (c >= 0x0e && c <= 0x1a) || (c >= 0x1c && c <= 0x1f)
}

const SIGNATURES: Sig[] = [
  ...['<!DOCTYPE HTML', '<HTML', '<HEAD', '<SCRIPT', '<IFRAME', '<H1', '<DIV', '<FONT', '<TABLE', '<A', '<STYLE', '<TITLE', '<B', '<BODY', '<BR', '<P', '<!--'].map(html),
  (b, ws) => masked(ascii('<?xml'), [0xff, 0xff, 0xff, 0xff, 0xff], 'text/xml; charset=utf-8', true)(b, ws),
  exact(ascii('%PDF-'), 'application/pdf'),
  exact(ascii('%!PS-Adobe-'), 'application/postscript'),
  // Byte order marks.
  exact([0xfe, 0xff], 'text/plain; charset=utf-16be'),
  exact([0xff, 0xfe], 'text/plain; charset=utf-16le'),
  exact([0xef, 0xbb, 0xbf], 'text/plain; charset=utf-8'),
  // Images.
  exact([0x00, 0x00, 0x01, 0x00], 'image/x-icon'),
  exact([0x00, 0x00, 0x02, 0x00], 'image/x-icon'),
  exact(ascii('BM'), 'image/bmp'),
  exact(ascii('GIF87a'), 'image/gif'),
  exact(ascii('GIF89a'), 'image/gif'),
  masked([...ascii('RIFF'), 0, 0, 0, 0, ...ascii('WEBPVP')], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 'image/webp'),
  exact([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'),
  exact([0xff, 0xd8, 0xff], 'image/jpeg'),
  // Audio and video.
  masked([...ascii('FORM'), 0, 0, 0, 0, ...ascii('AIFF')], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], 'audio/aiff'),
  exact(ascii('ID3'), 'audio/mpeg'),
  exact([...ascii('OggS'), 0], 'application/ogg'),
  exact([...ascii('MThd'), 0, 0, 0, 6], 'audio/midi'),
  masked([...ascii('RIFF'), 0, 0, 0, 0, ...ascii('AVI ')], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], 'video/avi'),
  masked([...ascii('RIFF'), 0, 0, 0, 0, ...ascii('WAVE')], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], 'audio/wave'),
  (b) => mp4(b),
  exact([0x1a, 0x45, 0xdf, 0xa3], 'video/webm'),
  // Fonts.
  exact(ascii('wOFF'), 'font/woff'),
  exact(ascii('wOF2'), 'font/woff2'),
  // Archives.
  exact([0x1f, 0x8b, 0x08], 'application/x-gzip'),
  exact([0x50, 0x4b, 0x03, 0x04], 'application/zip'),
  exact([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x00], 'application/x-rar-compressed'),
  exact([0x52, 0x61, 0x72, 0x21, 0x1a, 0x07, 0x01, 0x00], 'application/x-rar-compressed'),
  exact([0x00, 0x61, 0x73, 0x6d], 'application/wasm'),
]

/** The sniffed MIME type of a resource's leading bytes; empty contents are text. */
export function sniffContentType(bytes: Uint8Array): string {
  let ws = 0
  while (ws < bytes.length && [0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(bytes[ws]!)) ws++
  for (const sig of SIGNATURES) {
    const type = sig(bytes, ws)
    if (type) return type
  }
  for (const c of bytes) if (isBinaryByte(c)) return 'application/octet-stream'
  return 'text/plain; charset=utf-8'
}
