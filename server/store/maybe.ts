// Values a store answers now or later. bun:sqlite is synchronous; PostgreSQL (Bun.SQL) is not. The repository
// methods on the request hot path (session lookup and touch, the token lookup, groups of a user, the dashboard
// reads) answer `Maybe<T>`: the SQLite implementation the value itself, the PostgreSQL one a promise. Callers on
// the hot path go on synchronously when they got a value and chain only on a promise (`then`), so a
// request on SQLite pays for no promise, microtask or async frame per repository call (about 1–2 µs each:
// bench/README.md). Elsewhere `await` of a Maybe is as correct as of a promise.

export type Maybe<T> = T | Promise<T>

/**
 * `next(value)` now when the value is here, else once it comes. A throw of `next` on the synchronous path is a
 * synchronous throw: callers run inside a hook or handler that turns either into the same error answer.
 */
export function then<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value)
}

/**
 * The value of a store's answer, for the plain-function forms of the hottest routes, chosen on a store that answers at
 * once (SQLite; `AuthService.answersAtOnce`). Elysia compiles a route whose hooks and handler read as plain functions
 * without any await (bench/README.md); it decides that from their source, so those forms call no function right after a
 * `return` or an arrow. A promise here would be a fault of ours: an error (a 500), never a wrong answer.
 */
export function valueNow<T>(value: Maybe<T>): T {
  if (value instanceof Promise) throw new Error('a store answered later where a synchronous store was expected')
  return value
}
