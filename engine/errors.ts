// The engine's own errors. The engine imports nothing from the HTTP layer: the routes map these to the error
// catalogue (a QueryError is a 400 naming the module and the position; a SearchLimitError ends a running search with
// its message).

/** A query that does not parse or cannot run: `position` is the 0-based character offset of the problem in the query. */
export class QueryError extends Error {
  override name = 'QueryError'
  constructor(
    /** What is wrong, without the module and the position (they are fields of their own). */
    readonly reason: string,
    readonly position: number,
    /** The index of the failing module in the pipeline (0: the first after the tag list); -1 for the tag list itself. */
    readonly moduleIndex = -1,
    /** The failing module's name, '' for the tag list. */
    readonly module = '',
  ) {
    super(`${module ? `${module}: ` : ''}${reason} at position ${position}`)
  }
}

/**
 * A running search passed one of its bounds (distinct keys tracked, values kept): it ends with this message, which
 * names the bound and how to change it (the platform's `-maxtracked`).
 */
export class SearchLimitError extends Error {
  override name = 'SearchLimitError'
}
