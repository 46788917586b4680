// enrich (gravwell/wiki search/enrich/enrich.md): adds constant values to every entry.
//   enrich [-o] <name> <value> [<name> <value> ...]
//   enrich -r <resource> [-o] [<column> [as <name>] ...]
// The first form sets each name to its text. The second reads a CSV resource (a header row, then rows) and sets the
// columns of its first row, all of them when none is named, each under its column name or `as` name. A value the
// entry already has is kept unless -o (overwrite) is given. Values are text. The resource is loaded before the search
// runs (CompiledModule.needs); a resource that is missing, empty, or lacks a named column stops the search with a
// QueryError at the argument that names it.
import { QueryError } from '../errors'
import { type Token, quote } from '../lex'
import type { Entry } from '../entry'
import { type ModuleDef, type Sink, argError, readFlags } from '../module'
import { decodeUtf8 } from './extractions'
import { parseCsv } from './fields'

export const enrich: ModuleDef = {
  name: 'enrich',
  kind: 'processing',
  info: 'Adds values to every entry: pairs of a name and its text (enrich foo bar), or with -r the columns of the first row of a CSV resource (enrich -r data foo as bar). Values an entry has are kept unless -o is given.',
  examples: ['enrich foo "my data" bar "my other data"', 'enrich -r data foo as bar', 'enrich -o -r defaults'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['o'], withValue: ['r'] })
    const overwrite = flags.has('o')
    const resource = flags.get('r') as Token | undefined
    const head = ['enrich', ...(overwrite ? ['-o'] : [])]
    const base = { name: 'enrich', kind: 'processing' as const, consumes: [], stateless: true }
    const setAll = (pairs: readonly [string, string][]) => ({
      push(e: Entry, out: Sink) {
        for (const [k, v] of pairs) if (overwrite || !e.values.has(k)) e.values.set(k, v)
        out(e)
      },
    })
    if (!resource) {
      if (rest.length === 0) throw argError(call, 'enrich needs a name and a value, or -r and a resource', call.end)
      if (rest.length % 2 === 1) throw argError(call, `enrich takes pairs of a name and a value: ${JSON.stringify(rest.at(-1)!.text)} has no value`, call.end)
      const pairs: [string, string][] = []
      for (let i = 0; i < rest.length; i += 2) {
        if (rest[i]!.text === '') throw argError(call, 'a name cannot be empty', rest[i])
        pairs.push([rest[i]!.text, rest[i + 1]!.text])
      }
      return {
        ...base,
        text: [...head, ...pairs.flatMap(([k, v]) => [quote(k), quote(v)])].join(' '),
        produces: [...new Set(pairs.map(([k]) => k))],
        stage: () => setAll(pairs),
      }
    }
    if (resource.text === '') throw argError(call, 'a resource name cannot be empty', resource)
    const columns: { column: string; as: string; token: Token }[] = []
    for (let i = 0; i < rest.length; ) {
      const t = rest[i]!
      if (t.text === '') throw argError(call, 'a column name cannot be empty', t)
      let as = t.text
      if (rest[i + 1]?.kind === 'word' && rest[i + 1]!.text === 'as') {
        const name = rest[i + 2]
        if (!name) throw argError(call, '"as" needs a name', call.end)
        if (name.text === '') throw argError(call, 'a name cannot be empty', name)
        as = name.text
        i += 3
      } else i++
      columns.push({ column: t.text, as, token: t })
    }
    return {
      ...base,
      text: [...head, '-r', quote(resource.text), ...columns.map((c) => (c.as === c.column ? quote(c.column) : `${quote(c.column)} as ${quote(c.as)}`))].join(' '),
      // Without named columns the names are the resource's header, known once it is loaded.
      produces: columns.map((c) => c.as),
      needs: { resources: [resource.text] },
      stage(env) {
        const fail = (reason: string, at: Token) => new QueryError(reason, at.pos, call.index, call.name)
        const bytes = env.resources.get(resource.text)
        if (!bytes) throw fail(`no resource named ${JSON.stringify(resource.text)}`, resource)
        const rows = parseCsv(decodeUtf8(bytes))
        const [header, first] = rows
        if (!header || !first) throw fail(`the resource ${JSON.stringify(resource.text)} has no row under its header`, resource)
        const pairs: [string, string][] = []
        if (columns.length === 0) header.forEach((h, i) => pairs.push([h, first[i] ?? '']))
        for (const c of columns) {
          const i = header.indexOf(c.column)
          if (i < 0) throw fail(`the resource ${JSON.stringify(resource.text)} has no column ${JSON.stringify(c.column)}`, c.token)
          pairs.push([c.as, first[i] ?? ''])
        }
        return setAll(pairs)
      },
    }
  },
}
