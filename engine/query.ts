// A query compiled once: the tag list, each module's call read and checked by its definition, the renderer, and the
// normal form (EffectiveQuery). The pipeline of a running search is built from it (pipeline.ts).
import type { Entry } from './entry'
import { QueryError } from './errors'
import type { CompileContext, CompiledModule, ModuleDef } from './module'
import { type ParsedQuery, parseQuery } from './parse'
import { LazyRegex, boundRegexes } from './regex'
import { MODULES } from './registry'
import { type CompiledRenderer, countRenderer, isRenderer, textRenderer } from './render/renderer'

export interface CompiledQuery {
  tags: string[]
  /** The modules before the renderer, in order. */
  modules: CompiledModule[]
  /** The last module, or the `text` renderer when the query names none. */
  renderer: CompiledRenderer
  /** Whether the query names its renderer (the normal form then writes it). */
  explicitRenderer: boolean
  /** Every regular expression the query holds, in order: bounded and compiled before the query runs. */
  regexes: LazyRegex[]
  /** The normal form: single blanks, tags without repeats, arguments quoted only where they must be. */
  text: string
  parsed: ParsedQuery
}

/** Definitions by name. */
let byName = new Map<string, ModuleDef>(MODULES.map((m) => [m.name, m]))

/** A definition by name; the map follows MODULES if it grew after load (a test's stand-in module). */
function lookup(name: string): ModuleDef | undefined {
  if (byName.size !== MODULES.length) byName = new Map(MODULES.map((m) => [m.name, m]))
  return byName.get(name)
}

export function moduleDef(name: string): ModuleDef | undefined {
  return lookup(name)
}

/** Reads and checks a whole query; a QueryError names the module and the position of what is wrong. */
export function compileQuery(src: string): CompiledQuery {
  const parsed = parseQuery(src)
  const regexes: LazyRegex[] = []
  const modules: CompiledModule[] = []
  let renderer: CompiledRenderer | undefined
  for (const call of parsed.modules) {
    if (renderer) throw new QueryError(`the renderer ${renderer.name} must be the last module`, call.pos, call.index, call.name)
    const def = lookup(call.name)
    if (!def) throw new QueryError('unknown module', call.pos, call.index, call.name)
    const ctx: CompileContext = {
      regex: (pattern, pos) => {
        const r = new LazyRegex(pattern, pos, call.index, call.name)
        regexes.push(r)
        return r
      },
      previous: modules,
    }
    const compiled = def.compile(call, ctx)
    if (isRenderer(compiled)) renderer = compiled
    else modules.push(compiled)
  }
  const explicitRenderer = renderer !== undefined
  renderer ??= modules.at(-1)?.text === 'count' ? countRenderer() : textRenderer(modules)
  const head = `tag=${parsed.tags.join(',')}`
  const parts = [...modules, ...(explicitRenderer ? [renderer] : [])].map((m) => m.text)
  return { tags: parsed.tags, modules, renderer, explicitRenderer, regexes, text: parts.length ? `${head} ${parts.join(' | ')}` : head, parsed }
}

/** Compiles a query and every regular expression in it here, on the calling thread (tests, benches, the CLI). */
export function compileQueryNow(src: string): CompiledQuery {
  const q = compileQuery(src)
  boundRegexes(q.regexes.map((regex) => ({ regex, size: regex.re.programSize() })))
  return q
}

export type { Entry }
