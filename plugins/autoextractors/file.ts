// Definition files (configuration/autoextractors.md, "Auto-Extractor File Definitions"): TOML with one
// `[[extraction]]` table per definition, keys `tag` (one name) and/or `tags` (a list), `name`, `desc`, `module`,
// `params`, `args`; unknown keys are ignored. Parsing is Bun's own TOML reader (Bun.TOML). Writing needs only basic
// strings and string arrays: each value is written as a TOML basic string, which is JSON's string syntax with every
// control character escaped (the format the TypeScript client's own download test reads: `key = <JSON string>`).

/** One definition as a file holds it. */
export interface FileDefinition {
  tags: string[]
  name: string
  desc: string
  module: string
  params: string
  args: string
}

/** A definition file that cannot be read: a 400 naming what is wrong. */
export class DefinitionFileError extends Error {
  override name = 'DefinitionFileError'
}

/** Definitions one file may hold. */
export const MAX_FILE_DEFINITIONS = 1000

const KEYS = ['name', 'desc', 'module', 'params', 'args'] as const

/** Reads a definition file; every definition keeps its keys as strings (checked later like a JSON definition). */
export function parseDefinitionFile(text: string): FileDefinition[] {
  let doc: unknown
  try {
    doc = Bun.TOML.parse(text)
  } catch (e) {
    throw new DefinitionFileError(`not a TOML definition file: ${e instanceof Error ? e.message : String(e)}`)
  }
  const list = (doc as Record<string, unknown>).extraction
  if (!Array.isArray(list) || list.length === 0) throw new DefinitionFileError('the file holds no [[extraction]] table')
  if (list.length > MAX_FILE_DEFINITIONS) throw new DefinitionFileError(`the file holds more than ${MAX_FILE_DEFINITIONS} definitions`)
  return list.map((x, i) => {
    const where = `[[extraction]] ${i + 1}`
    if (typeof x !== 'object' || x === null || Array.isArray(x)) throw new DefinitionFileError(`${where} is not a table`)
    const o = x as Record<string, unknown>
    const out: FileDefinition = { tags: [], name: '', desc: '', module: '', params: '', args: '' }
    for (const k of KEYS) {
      const v = o[k]
      if (v === undefined) continue
      if (typeof v !== 'string') throw new DefinitionFileError(`${where}: ${k} must be a string`)
      out[k] = v
    }
    if (o.tag !== undefined) {
      if (typeof o.tag !== 'string') throw new DefinitionFileError(`${where}: tag must be a string`)
      out.tags.push(o.tag)
    }
    if (o.tags !== undefined) {
      if (!Array.isArray(o.tags) || !o.tags.every((t) => typeof t === 'string')) throw new DefinitionFileError(`${where}: tags must be a list of strings`)
      out.tags.push(...(o.tags as string[]))
    }
    return out
  })
}

/** A TOML basic string: JSON's syntax, with DEL and lone surrogates escaped too (TOML forbids them raw). */
function basicString(s: string): string {
  return JSON.stringify(s.toWellFormed()).replace(/\x7f/g, '\\u007f')
}

/** The file of these definitions: one `[[extraction]]` table each; empty optional keys are left out. */
export function writeDefinitionFile(defs: readonly FileDefinition[]): string {
  return defs
    .map((d) => {
      const lines = ['[[extraction]]']
      if (d.tags.length === 1) lines.push(`\ttag = ${basicString(d.tags[0]!)}`)
      else lines.push(`\ttags = [${d.tags.map(basicString).join(', ')}]`)
      lines.push(`\tname = ${basicString(d.name)}`)
      if (d.desc !== '') lines.push(`\tdesc = ${basicString(d.desc)}`)
      lines.push(`\tmodule = ${basicString(d.module)}`)
      lines.push(`\tparams = ${basicString(d.params)}`)
      if (d.args !== '') lines.push(`\targs = ${basicString(d.args)}`)
      return lines.join('\n') + '\n'
    })
    .join('\n')
}
