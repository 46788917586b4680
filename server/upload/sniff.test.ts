// Content sniffing shared by resources (contenttype) and user files (Type).
import { expect, test } from 'bun:test'
import { sniffContentType } from './sniff'

const ascii = (s: string) => new TextEncoder().encode(s)
const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...ascii('IHDR')]

test('sniffs like WHATWG MIME sniffing', () => {
  const cases: [Uint8Array, string][] = [
    [new Uint8Array(0), 'text/plain; charset=utf-8'],
    [ascii('plain old text\n'), 'text/plain; charset=utf-8'],
    [ascii('{"json": true}'), 'text/plain; charset=utf-8'],
    [ascii('héllo'), 'text/plain; charset=utf-8'],
    [Uint8Array.from(PNG), 'image/png'],
    [Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), 'image/jpeg'],
    [ascii('GIF89a....'), 'image/gif'],
    [ascii('GIF87a....'), 'image/gif'],
    [ascii('%PDF-1.7\n'), 'application/pdf'],
    [Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 20, 0]), 'application/zip'],
    [Uint8Array.from([0x1f, 0x8b, 0x08, 0]), 'application/x-gzip'],
    [ascii('  <!DOCTYPE html><html>'), 'text/html; charset=utf-8'],
    [ascii('<html>'), 'text/html; charset=utf-8'],
    [ascii('<htmlx'), 'text/plain; charset=utf-8'],
    [ascii('<?xml version="1.0"?>'), 'text/xml; charset=utf-8'],
    [Uint8Array.from([0xef, 0xbb, 0xbf, 0x41]), 'text/plain; charset=utf-8'],
    [Uint8Array.from([0xfe, 0xff, 0, 0x41]), 'text/plain; charset=utf-16be'],
    [Uint8Array.from([1, 2, 3, 0, 255]), 'application/octet-stream'],
    [Uint8Array.from([0x41, 0x42, 0x00]), 'application/octet-stream'],
    [ascii('tabs\tand\r\nnewlines\x1b[0m'), 'text/plain; charset=utf-8'],
  ]
  for (const [bytes, type] of cases) expect({ bytes: [...bytes], type: sniffContentType(bytes) }).toEqual({ bytes: [...bytes], type })
})

