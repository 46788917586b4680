// lookup (gravwell/wiki search/lookup/lookup.md): enriches entries from a table stored as a CSV resource.
//   lookup [-v] [-s] -r <resource> <value> <column to match> <column to extract> [as <name>]
//   lookup -r <resource> <value> <column> (<column> [as <name>] ...)
//   lookup -r <resource> [<value> ...] [<column> ...] (<column> [as <name>] ...)
// The resource is named by its name or GUID (the search's owner must be able to read it: their own, one shared with
// a group of theirs, or a global one; the search manager loads it before the run and refuses the launch with the
// argument's position when there is none). Its contents are CSV (RFC 4180: quoted fields, "" for a quote, CRLF or
// LF line ends) whose first row names the columns, each name once.
// An entry matches the first row whose match columns hold exactly the texts of its values (one value per column,
// in order); each extracted column is then set as a value (the column's name, or its `as` name), as text.
// Flags: -s drops entries that match no row (or whose row lacks an extracted cell); -v drops the entries that match
// and passes the others unchanged; with -v and -s, entries that lack a value to match are dropped too. Without -s or
// -v, entries that match nothing pass unchanged. With -s or -v the extraction list may be empty (`()` or none).
// Memory: the table is read once per search into a Map of its rows by key; its size is bounded by what the manager
// loads (MAX_LOOKUP_BYTES).
import { valueOf } from '../entry'
import { QueryError } from '../errors'
import { quote } from '../lex'
import { type ModuleDef, argError, flagsText, readFlags } from '../module'
import type { ModuleCall } from '../parse'
import { valueText } from '../value'

/** Bytes of a resource lookup reads at most (the manager refuses larger ones at launch). */
export const MAX_LOOKUP_BYTES = 128 * 1024 * 1024

/** Parses CSV (RFC 4180): rows of fields; quoted fields may hold commas, line breaks and "" for a quote. */
export function parseCsv(text: string, maxRows = Number.POSITIVE_INFINITY): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  const n = text.length
  for (;;) {
    // One field.
    let field = ''
    if (text[i] === '"') {
      i++
      for (;;) {
        const close = text.indexOf('"', i)
        if (close < 0) {
          field += text.slice(i)
          i = n
          break
        }
        field += text.slice(i, close)
        if (text[close + 1] === '"') {
          field += '"'
          i = close + 2
        } else {
          i = close + 1
          break
        }
      }
      // Anything between the closing quote and the separator is kept (lenient, as most readers are).
      while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') field += text[i++]
    } else {
      let j = i
      while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++
      field = text.slice(i, j)
      i = j
    }
    row.push(field)
    if (i >= n) {
      if (row.length > 1 || row[0] !== '') rows.push(row)
      return rows
    }
    if (text[i] === ',') {
      i++
      continue
    }
    // A line end: \r\n, \n or \r.
    if (text[i] === '\r' && text[i + 1] === '\n') i++
    i++
    if (row.length > 1 || row[0] !== '') rows.push(row)
    row = []
    if (i >= n || rows.length >= maxRows) return rows
  }
}

interface Item {
  text: string
  pos: number
}

/** Splits the arguments after the flags into words, `[`, `]`, `(`, `)` and `as`, with positions. */
function items(call: ModuleCall, from: number): (Item & { kind: 'word' | '[' | ']' | '(' | ')' })[] {
  const out: (Item & { kind: 'word' | '[' | ']' | '(' | ')' })[] = []
  for (const t of call.args.slice(from)) {
    if (t.kind === 'string') {
      out.push({ kind: 'word', text: t.text, pos: t.pos })
      continue
    }
    let i = 0
    const s = t.text
    while (i < s.length) {
      const c = s[i]!
      if (c === '[' || c === ']' || c === '(' || c === ')') {
        out.push({ kind: c, text: c, pos: t.pos + i })
        i++
        continue
      }
      let j = i
      while (j < s.length && !'[]()'.includes(s[j]!)) j++
      out.push({ kind: 'word', text: s.slice(i, j), pos: t.pos + i })
      i = j
    }
  }
  return out
}

interface Extract {
  column: string
  as: string
  pos: number
}

export const lookup: ModuleDef = {
  name: 'lookup',
  kind: 'processing',
  info: 'Matches values against columns of a CSV resource (-r name) and sets the columns it extracts from the matching row: lookup -r table value column extracted [as name]; -s drops entries without a match, -v keeps only them.',
  examples: ['lookup -r macresolution SrcMAC mac hostname as devicename', 'lookup -r places City name (lat long)', 'lookup -v -s -r allowed [user host] [user host] ()'],
  compile(call) {
    const { flags, rest } = readFlags(call, { bool: ['v', 's'], withValue: ['r'] })
    const resourceToken = flags.get('r')
    if (!resourceToken || resourceToken === true) throw argError(call, 'lookup needs a resource: -r <name>', call.argPos)
    const resource = resourceToken.text
    if (resource === '') throw argError(call, 'the resource name cannot be empty', resourceToken)
    const invert = flags.has('v')
    const strict = flags.has('s')
    const list = items(call, call.args.length - rest.length)
    let i = 0
    const end = () => list[i]?.pos ?? call.end
    /** One name, or a bracketed list of them. */
    const names = (what: string): Item[] => {
      const t = list[i]
      if (!t) throw argError(call, `expected ${what}`, call.end)
      if (t.kind === 'word') {
        i++
        return [t]
      }
      if (t.kind !== '[') throw argError(call, `expected ${what}, found ${JSON.stringify(t.text)}`, t.pos)
      i++
      const out: Item[] = []
      while (list[i]?.kind === 'word') out.push(list[i++]!)
      if (list[i]?.kind !== ']') throw argError(call, `expected "]" to close the list of ${what}`, end())
      i++
      if (out.length === 0) throw argError(call, `the list of ${what} is empty`, t.pos)
      return out
    }
    const values = names('the values to match')
    const columns = names('the columns to match')
    if (columns.length !== values.length)
      throw argError(call, `${values.length} value${values.length === 1 ? '' : 's'} to match but ${columns.length} column${columns.length === 1 ? '' : 's'}: they pair one to one`, columns[0]!.pos)
    const extracts: Extract[] = []
    const readAs = (col: Item) => {
      let as = col.text
      if (list[i]?.kind === 'word' && list[i]!.text === 'as') {
        const name = list[i + 1]
        if (!name || name.kind !== 'word' || name.text === '') throw argError(call, '"as" needs a name', name?.pos ?? call.end)
        as = name.text
        i += 2
      }
      extracts.push({ column: col.text, as, pos: col.pos })
    }
    if (list[i]?.kind === '(') {
      const open = list[i]!
      i++
      while (list[i]?.kind === 'word') readAs(list[i++]!)
      if (list[i]?.kind !== ')') throw argError(call, 'expected ")" to close the list of columns to extract', end())
      i++
      if (extracts.length === 0 && !invert && !strict) throw argError(call, 'nothing to extract: name a column, or use -s or -v to filter only', open.pos)
    } else if (list[i]?.kind === 'word') readAs(list[i++]!)
    else if (!invert && !strict) throw argError(call, 'expected the column to extract', end())
    if (i < list.length) throw argError(call, `unexpected ${JSON.stringify(list[i]!.text)}`, list[i]!.pos)
    for (const x of extracts) if (extracts.filter((y) => y.as === x.as).length > 1) throw argError(call, `${JSON.stringify(x.as)} is set twice`, x.pos)

    const group = (xs: string[]) => (xs.length === 1 ? xs[0]! : `[${xs.join(' ')}]`)
    const text = [
      'lookup',
      ...flagsText(flags, quote),
      group(values.map((v) => quote(v.text))),
      group(columns.map((c) => quote(c.text))),
      `(${extracts.map((x) => (x.as === x.column ? quote(x.column) : `${quote(x.column)} as ${quote(x.as)}`)).join(' ')})`,
    ].join(' ')
    const valueNames = values.map((v) => v.text)
    const fail = (reason: string, pos: number) => new QueryError(reason, pos, call.index, call.name)
    return {
      name: 'lookup',
      kind: 'processing',
      text,
      consumes: valueNames,
      produces: invert ? [] : extracts.map((x) => x.as),
      needs: { resources: [resource] },
      stateless: true,
      // The header is checked when the stage is made (the manager makes one at launch, so that a missing column is
      // refused then); the rows are read at the first entry.
      stage(env) {
        const bytes = env.resources.get(resource)
        if (!bytes) throw fail(`the resource ${JSON.stringify(resource)} was not loaded`, resourceToken.pos)
        const header = parseCsv(new TextDecoder().decode(bytes.subarray(0, 1024 * 1024)), 1)[0]
        if (!header) throw fail(`the resource ${JSON.stringify(resource)} is empty: lookup needs CSV with a header row`, resourceToken.pos)
        const index = (c: Item | Extract, name: string) => {
          const at = header.indexOf(name)
          if (at < 0) throw fail(`the resource ${JSON.stringify(resource)} has no column ${JSON.stringify(name)} (its columns: ${header.slice(0, 20).join(', ')})`, c.pos)
          if (header.indexOf(name, at + 1) >= 0) throw fail(`the resource ${JSON.stringify(resource)} names the column ${JSON.stringify(name)} twice`, c.pos)
          return at
        }
        const matchAt = columns.map((c) => index(c, c.text))
        const extractAt = extracts.map((x) => index(x, x.column))
        const keyOfRow = (row: string[]) => (matchAt.length === 1 ? (row[matchAt[0]!] ?? '') : JSON.stringify(matchAt.map((k) => row[k] ?? '')))
        let table: Map<string, string[]> | undefined
        /** The rows by key, read once; the first row of each key wins. */
        const readTable = () => {
          const rows = parseCsv(new TextDecoder().decode(bytes))
          const t = new Map<string, string[]>()
          for (let r = 1; r < rows.length; r++) {
            const key = keyOfRow(rows[r]!)
            if (!t.has(key)) t.set(key, rows[r]!)
          }
          return t
        }
        return {
          push(e, out) {
            let key: string
            if (valueNames.length === 1) {
              const v = valueOf(e, valueNames[0]!)
              if (v === undefined) {
                if (!strict) out(e)
                return
              }
              key = valueText(v)
            } else {
              const parts: string[] = []
              for (const n of valueNames) {
                const v = valueOf(e, n)
                if (v === undefined) {
                  if (!strict) out(e)
                  return
                }
                parts.push(valueText(v))
              }
              key = JSON.stringify(parts)
            }
            const row = (table ??= readTable()).get(key)
            if (invert) {
              if (!row) out(e)
              return
            }
            if (!row) {
              if (!strict) out(e)
              return
            }
            for (let k = 0; k < extracts.length; k++) {
              const cell = row[extractAt[k]!]
              if (cell === undefined) {
                if (strict) return
                continue
              }
              e.values.set(extracts[k]!.as, cell)
            }
            out(e)
          },
        }
      },
    }
  },
}
