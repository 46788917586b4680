// Built-in modules a command may not need, loaded at their first use: importing `node:fs` (with `node:path`) took
// 15-25 ms of CPU of every command's start (Bun 1.4.5; bench/README.md, "The CLI against the server's time"), and
// `quarry search run --json` with a token against an http server needs neither: it reads no file and writes through
// Bun. `require` of a built-in module is synchronous, so the callers stay synchronous. test/lazy-imports.test.ts
// checks that the start imports none of them.
import type * as Fs from 'node:fs'
import type * as Path from 'node:path'

let fs: typeof Fs | undefined
let path: typeof Path | undefined

/** `node:fs`, loaded on the first call. */
export function nodeFs(): typeof Fs {
  return (fs ??= require('node:fs') as typeof Fs)
}

/** `node:path`, loaded on the first call. */
export function nodePath(): typeof Path {
  return (path ??= require('node:path') as typeof Path)
}
