// Recognising PostgreSQL's refusal of text without loading the PostgreSQL client (server/store/pg.ts): the error plugin
// needs it on every store, and a SQLite server does not load the PostgreSQL modules at all (bench/README.md, cold
// start).

/**
 * Whether the error is PostgreSQL refusing a character its text cannot hold (U+0000: SQLSTATE 22021, or 22P05
 * for one the encoding cannot translate), e.g. a NUL in a path parameter or a form field: the caller's input,
 * answered 400 by the error plugin, not a fault of the server.
 */
export function isUnstorableText(e: unknown): boolean {
  const code = e instanceof Error ? ((e as { errno?: string }).errno ?? (e as { code?: string }).code) : undefined
  return code === '22021' || code === '22P05'
}
