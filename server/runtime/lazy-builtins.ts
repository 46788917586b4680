// Built-in modules that a start does not need, loaded at their first use instead (the cold start: bench/README.md):
// together `node:net`, `node:zlib` and `node:stream/promises` (and Bun's JavaScript streams under them) took about
// 10 ms of a 110 ms start. `node:net` serves trusted proxies (QUARRY_TRUSTED_PROXIES) and the ingest of entries with a
// source address; the other two the search archives (server/search/archive.ts). `require` of a built-in module is
// synchronous, so the callers stay synchronous. test/lazy-imports.test.ts checks a start loads none of them.
import type * as Net from 'node:net'
import type * as StreamPromises from 'node:stream/promises'
import type * as Zlib from 'node:zlib'

let net: typeof Net | undefined
let zlib: typeof Zlib | undefined
let streamPromises: typeof StreamPromises | undefined

/** `node:zlib`, loaded on the first call. */
export function nodeZlib(): typeof Zlib {
  return (zlib ??= require('node:zlib') as typeof Zlib)
}

/** `node:stream/promises`, loaded on the first call. */
export function nodeStreamPromises(): typeof StreamPromises {
  return (streamPromises ??= require('node:stream/promises') as typeof StreamPromises)
}

/** `node:net`, loaded on the first call. */
export function nodeNet(): typeof Net {
  return (net ??= require('node:net') as typeof Net)
}
