// The query's structure: `tag=<name>[,<name>...]` and then modules separated by `|`.
//
//   query  := tag=<names> [ [|] module ( | module )* ]
//   module := <name> <arguments up to the next | outside quotes>
//
// Each module reads its own arguments (module.ts); this file only finds where they are. `tag=*` selects every tag.
import { QueryError } from './errors'
import { type Token, tokenize } from './lex'

export const TAG_NAME = /^[A-Za-z0-9._-]{1,128}$/
export const ALL_TAGS = '*'
export const MAX_QUERY_LENGTH = 4096

/** One module of the query, as written: its name, its argument tokens and their raw text. */
export interface ModuleCall {
  name: string
  /** Index in the pipeline: 0 is the first module after the tag list. */
  index: number
  /** Offset of the module name in the query. */
  pos: number
  args: Token[]
  /** The query text of the arguments, from the first argument to the last (expressions are read from it). */
  argText: string
  /** Offset of argText in the query (the end of the module name when it has no argument). */
  argPos: number
  /** Offset just past the module (the next `|`, or the end of the query). */
  end: number
}

export interface ParsedQuery {
  /** Tag names without repeats, or ['*']. */
  tags: string[]
  modules: ModuleCall[]
}

export function parseQuery(src: string): ParsedQuery {
  if (src.length > MAX_QUERY_LENGTH) throw new QueryError(`the query is longer than ${MAX_QUERY_LENGTH} characters`, MAX_QUERY_LENGTH)
  const tokens = tokenize(src)
  const first = tokens[0]
  if (!first) throw new QueryError('empty query: expected tag=<name>', 0)
  if (first.kind !== 'word' || !first.text.startsWith('tag=')) throw new QueryError('a query starts with tag=<name>', first.pos)
  const tags: string[] = []
  let offset = first.pos + 4
  for (const name of first.text.slice(4).split(',')) {
    if (name === ALL_TAGS) tags.push(name)
    else if (!TAG_NAME.test(name)) throw new QueryError(`invalid tag name ${JSON.stringify(name)}`, offset)
    else if (!tags.includes(name)) tags.push(name)
    offset += name.length + 1
  }
  if (tags.includes(ALL_TAGS) && tags.length > 1) throw new QueryError('tag=* cannot be combined with other tags', first.pos + 4)

  const modules: ModuleCall[] = []
  let i = 1
  if (tokens[i]?.kind === 'pipe' && tokens[i + 1]) i++
  while (i < tokens.length) {
    const t = tokens[i]!
    if (t.kind !== 'word') throw new QueryError('expected a module name', t.pos, modules.length)
    const args: Token[] = []
    i++
    while (i < tokens.length && tokens[i]!.kind !== 'pipe') args.push(tokens[i++]!)
    const end = i < tokens.length ? tokens[i]!.pos : src.length
    const argPos = args[0]?.pos ?? t.end
    modules.push({ name: t.text, index: modules.length, pos: t.pos, args, argText: args.length ? src.slice(argPos, args.at(-1)!.end) : '', argPos, end })
    if (i < tokens.length) {
      if (i + 1 >= tokens.length) throw new QueryError('expected a module after |', tokens[i]!.pos + 1, modules.length)
      i++
    }
  }
  return { tags, modules }
}
