// The filters a client asks to add to a query (the parse request's Filters: the Go client's FilterRequest, the
// TypeScript client's ElementFilter, sent by modifyOneQuery and the data explorer), applied as the platform applies
// them: as inline filters of the extraction module that extracts the value.
//
// For each filter {Module, Path, Op, Value, Args}, in order:
// - the query's first call of Module gets ` Path Op Value` after its last argument (` Path` alone when the filter
//   only extracts: no Op);
// - a query without that module gets `Module [Args] Path Op Value` as its first module, before the others (where the
//   value is extracted first, every later module sees it).
// Path and Value are quoted as the normal form quotes arguments. Op is one of the inline filter operators
// (FILTER_OPS). `Tag` and `Name` are not used: the filter applies to the query's tags, and the value keeps its name.
// The result is text: it is compiled like any query, so a filter a module cannot take fails as that module's
// argument would (filterError gives the platform's wording).
import { QueryError } from './errors'
import { quote } from './lex'
import { FILTER_OPS, type FilterOp } from './modules/filter'
import { parseQuery } from './parse'

export interface QueryFilter {
  Module: string
  Path: string
  Op?: string
  Value?: string
  Args?: string
}

/** At most this many filters in one request (each one is a module argument: a query stays bounded). */
export const MAX_FILTERS = 64

/** The query with the filters added; a QueryError (module index of the filter's module) for a filter that cannot be. */
export function applyFilters(src: string, filters: readonly QueryFilter[]): string {
  if (filters.length > MAX_FILTERS) throw new QueryError(`at most ${MAX_FILTERS} filters may be applied at once`, 0)
  let text = src
  for (const f of filters) {
    const parsed = parseQuery(text)
    const existing = parsed.modules.find((m) => m.name === f.Module)
    const index = existing?.index ?? 0
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(f.Module)) throw new QueryError(`invalid module name ${JSON.stringify(f.Module.slice(0, 64))}`, 0, index, f.Module)
    if (f.Path === '') throw new QueryError('the filter names no value (Path)', 0, index, f.Module)
    const op = f.Op ?? ''
    if (op !== '' && !(FILTER_OPS as readonly string[]).includes(op))
      throw new QueryError(`unknown filter operator ${JSON.stringify(op.slice(0, 8))}: expected one of ${FILTER_OPS.join(' ')}`, 0, index, f.Module)
    const item = op === '' ? quote(f.Path) : `${quote(f.Path)} ${op as FilterOp} ${quote(f.Value ?? '')}`
    if (existing) {
      const at = existing.args.length > 0 ? existing.args.at(-1)!.end : existing.pos + existing.name.length
      text = `${text.slice(0, at)} ${item}${text.slice(at)}`
    } else {
      const call = [f.Module, ...(f.Args ? [f.Args] : []), item].join(' ')
      const first = parsed.modules[0]
      text = first ? `${text.slice(0, first.pos)}${call} | ${text.slice(first.pos)}` : `${text.trimEnd()} ${call}`
    }
  }
  return text
}

/** A filter's error as the platform words it: `<module> (module idx <i>) error: <reason>`. */
export function filterError(e: QueryError): string {
  return e.module ? `${e.module} (module idx ${Math.max(0, e.moduleIndex)}) error: ${e.reason}` : e.reason
}
