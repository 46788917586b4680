// ax (gravwell/wiki search/ax/ax.md, configuration/autoextractors.md): applies, to each entry, the extraction that the
// auto-extractor of the entry's tag defines, so that a query names fields without knowing the format.
//   ax [<field> [op operand] [as name] ...]
// Without arguments every field the tag's extraction sets is set; with them only those fields, each with its inline
// filter (== != < > <= >= ~ !~, as the extraction modules read them) and its new name. A field the tag's extraction
// does not set is left unset (and a filter on it drops the entry, as in every extraction module).
//
// A definition (module, params, args) becomes one call of its module, compiled when the search starts, per tag:
// - csv and fields: params are the names of the columns, in order, separated by commas (or by blanks when there is
//   no comma: "a b c"); a blank name skips its column. They become `[i] as name` items after the args (the flags).
// - every other module (regex, json, kv, syslog, words...): `<module> <args> <params>`, params in the module's own
//   syntax; a regex's params are the pattern, one argument, whatever it holds.
// `-e` is refused in a definition: an auto-extractor reads DATA (configuration/autoextractors.md).
//
// Where the platform is silent, chosen here:
// - Entries of a tag without a definition are dropped (they have none of the fields ax sets).
// - A definition that does not compile ends the search with "ax: parse error for extractor on tag <tag>: <reason>",
//   the platform's wording, when the first entry of that tag arrives: the definitions are stored without being
//   compiled (clients store them so), and one broken definition must not stop a search over the other tags.
// - Which definition applies when several reach the search's owner is the caller's choice (RunEnv.extractors holds
//   one per tag: server/search/manager.ts takes the owner's own, else a group's, else a global one).
import type { Entry } from '../entry'
import { QueryError } from '../errors'
import { quote } from '../lex'
import type { CompiledModule, ModuleDef, RunEnv, Sink, Stage } from '../module'
import { type LazyRegex, boundRegexes } from '../regex'
import { type Extraction, applyExtractions, extractionsText, readExtractions } from './extractions'

/** A definition as stored: what ax turns into a module call. */
export interface ExtractorSource {
  module: string
  params: string
  args: string
}

/**
 * query.ts, read when first needed: the registry imports this file and query.ts builds its table from the registry at
 * load, so a static import would make the load order decide whether the table exists.
 */
const query = (): typeof import('../query') => require('../query') as typeof import('../query')

/** Modules whose params are column names rather than the module's own arguments. */
const COLUMN_MODULES = new Set(['csv', 'fields'])

/** The extraction modules a definition may name: the registry's extraction modules but ax itself. */
export function extractorModules(all: readonly ModuleDef[]): string[] {
  return all.filter((m) => m.kind === 'extraction' && m.name !== 'ax').map((m) => m.name)
}

/** The column names of csv/fields params: comma-separated, else blank-separated; '' for a skipped column. */
export function columnNames(params: string): string[] {
  const text = params.trim()
  if (text === '') return []
  return text.includes(',') ? text.split(',').map((s) => s.trim()) : text.split(/\s+/)
}

/** The module call a definition stands for, as query text (after `tag=<tag> `). */
export function extractorCall(d: ExtractorSource): string {
  const parts = [d.module]
  if (d.args.trim() !== '') parts.push(d.args.trim())
  if (COLUMN_MODULES.has(d.module)) {
    columnNames(d.params).forEach((name, i) => {
      if (name !== '') parts.push(`[${i}] as ${quote(name)}`)
    })
  } else if (d.module === 'regex') parts.push(quote(d.params))
  else if (d.params.trim() !== '') parts.push(d.params.trim())
  return parts.join(' ')
}

/**
 * The definition's module call for `tag`, read and checked by its module; its regular expressions compiled and
 * bounded as a query's are. A QueryError when it does not compile, is not one extraction module or reads `-e`.
 */
export function compileExtractor(tag: string, d: ExtractorSource): CompiledModule {
  const def = query().moduleDef(d.module)
  if (!def || def.kind !== 'extraction' || def.name === 'ax') throw new QueryError(`${JSON.stringify(d.module)} is not an extraction module`, 0)
  const text = `tag=${tag} ${extractorCall(d)}`
  const q = query().compileQuery(text)
  if (q.modules.length !== 1 || q.explicitRenderer || q.modules[0]!.name !== d.module)
    throw new QueryError('a definition is one call of its module (a | in params or args is not allowed)', 0)
  const call = q.parsed.modules[0]!
  if (call.args.some((t) => t.kind === 'word' && t.text === '-e')) throw new QueryError('-e is not allowed: an auto-extractor reads DATA', call.argPos)
  boundRegexes(q.regexes.map((regex: LazyRegex) => ({ regex, size: programSize(regex) })))
  return q.modules[0]!
}

function programSize(r: LazyRegex): number | Error {
  try {
    return r.re.programSize()
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e))
  }
}

/** The text of a definition's compile error, as ax reports it. */
function definitionError(tag: string, e: unknown): string {
  const reason = e instanceof QueryError ? e.reason : e instanceof Error ? e.message : String(e)
  return `ax: parse error for extractor on tag ${tag}: ${reason}`
}

export const ax: ModuleDef = {
  name: 'ax',
  kind: 'extraction',
  info: 'Applies the auto-extractor of each entry\'s tag (its module, parameters and arguments) and sets the fields it extracts; with field names, only those, each with an optional inline filter (==, !=, <, >, <=, >=, ~, !~) and `as` to rename it. Entries of a tag without an auto-extractor are dropped.',
  examples: ['ax', 'ax method url status', 'ax status==404 url as path'],
  compile(call) {
    const items = readExtractions(call, call.args)
    return {
      name: 'ax',
      kind: 'extraction',
      text: ['ax', ...extractionsText(items)].join(' '),
      consumes: [],
      // Without items the fields depend on the definitions, known only when the search starts.
      produces: items.map((x) => x.as),
      needs: { extractors: true },
      stateless: true,
      stage(env: RunEnv): Stage {
        return axStage(env, items)
      },
    }
  },
}

/** Per tag: the definition's stage, or the error its definition gives (reported when an entry of the tag comes). */
type TagStage = { stage: Stage } | { error: string }

function axStage(env: RunEnv, items: readonly Extraction[]): Stage {
  const byTag = new Map<string, TagStage>()
  // The inner stages set every value: ax reads them itself (RunEnv.unread names what ax's own output may leave out).
  const { unread, ...inner } = env
  for (const [tag, d] of env.extractors) {
    try {
      byTag.set(tag, { stage: compileExtractor(tag, d).stage(inner) })
    } catch (e) {
      byTag.set(tag, { error: definitionError(tag, e) })
    }
  }
  // The inner stage runs on a scratch entry, so that only the fields asked for reach the entry, under their names.
  let emitted: Entry | undefined
  const capture: Sink = (e) => (emitted = e)
  return {
    push(e, out) {
      const t = byTag.get(e.tag)
      if (t === undefined) return
      if ('error' in t) throw new Error(t.error)
      const scratch: Entry = { ts: e.ts, tag: e.tag, src: e.src, data: e.data, values: new Map() }
      emitted = undefined
      t.stage.push(scratch, capture)
      if (emitted === undefined) return
      const values = (emitted as Entry).values
      if (items.length === 0) {
        for (const [k, v] of values) e.values.set(k, v)
        out(e)
        return
      }
      if (applyExtractions(e, items, items.map((x) => values.get(x.source)), undefined, unread)) out(e)
    },
  }
}
