// The module reference of docs/query-language.md, written from the registry (MODULES: each module's name, kind, help
// text and examples), so the document lists exactly the modules the engine knows. Only the text between the two
// marker comments is written; the hand-written rest of the file is left as it is. engine/reference.test.ts fails when
// the file's section differs from what the registry gives: a module added without `bun engine/reference.ts` fails the
// suite.
import type { ModuleDef, ModuleKind } from './module'
import { MODULES } from './registry'

export const BEGIN_MARKER = '<!-- BEGIN GENERATED: module reference (bun engine/reference.ts writes this part from engine/registry.ts) -->'
export const END_MARKER = '<!-- END GENERATED: module reference -->'

/** The file the reference is written into, relative to the repository's root. */
export const REFERENCE_FILE = 'docs/query-language.md'

/** The kinds in the order the reference lists them, with their headings and what a module of the kind does. */
export const KIND_SECTIONS: readonly { kind: ModuleKind; title: string; about: string }[] = [
  { kind: 'extraction', title: 'Extraction modules', about: 'They read DATA (or another value with `-e`) and set enumerated values; inline filters drop entries.' },
  { kind: 'filter', title: 'Filter modules', about: 'They pass or drop entries and set nothing.' },
  { kind: 'processing', title: 'Processing modules', about: 'They change, order, join or cut the stream of entries.' },
  { kind: 'condensing', title: 'Condensing modules', about: 'They aggregate many entries into few: per key, over the whole range or per time window.' },
  { kind: 'render', title: 'Renderers', about: 'The last module of a query: what is stored and what the clients are shown.' },
]

/**
 * The generated section, markers included: for each kind, its modules in alphabetical order, each with its help
 * text and its examples. Deterministic in the registry alone.
 */
export function moduleReference(modules: readonly ModuleDef[] = MODULES): string {
  const lines: string[] = [BEGIN_MARKER, '']
  for (const { kind, title, about } of KIND_SECTIONS) {
    const mine = modules.filter((m) => m.kind === kind).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    lines.push(`### ${title}`, '', about, '')
    if (mine.length === 0) {
      lines.push('(none yet)', '')
      continue
    }
    lines.push(mine.map((m) => `[\`${m.name}\`](#module-${m.name})`).join(' · '), '')
    for (const m of mine) {
      lines.push(`<a id="module-${m.name}"></a>`, `#### \`${m.name}\``, '', markdownText(m.info.trim()), '')
      if (m.examples.length) lines.push('```', ...m.examples, '```', '')
    }
  }
  const unknown = modules.filter((m) => !KIND_SECTIONS.some((s) => s.kind === m.kind))
  if (unknown.length) throw new Error(`modules of no listed kind: ${unknown.map((m) => `${m.name} (${m.kind})`).join(', ')}`)
  lines.push(END_MARKER)
  return lines.join('\n')
}

/**
 * Help text as Markdown shows it as written: outside `code spans`, `<` would open an HTML tag (`(?P<name>...)` would
 * lose `<name>`) and `*`, `_`, `[`, `]` and a backslash would be read as emphasis or escapes, so they are escaped there.
 */
export function markdownText(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/[\\<>*_[\]]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : `\\${c}`))))
    .join('')
}

/** The generated section of a document, markers included; an error when the markers are missing or out of order. */
export function generatedSection(doc: string): { start: number; end: number; text: string } {
  const start = doc.indexOf(BEGIN_MARKER)
  const endAt = doc.indexOf(END_MARKER)
  if (start < 0 || endAt < 0 || endAt < start) throw new Error(`${REFERENCE_FILE} needs the markers ${BEGIN_MARKER} and ${END_MARKER}, in that order`)
  if (doc.indexOf(BEGIN_MARKER, start + 1) >= 0 || doc.indexOf(END_MARKER, endAt + 1) >= 0) throw new Error(`${REFERENCE_FILE} holds a marker twice`)
  const end = endAt + END_MARKER.length
  return { start, end, text: doc.slice(start, end) }
}

/** The document with its generated section replaced by `section`; everything outside the markers kept byte for byte. */
export function withReference(doc: string, section: string = moduleReference()): string {
  const { start, end } = generatedSection(doc)
  return doc.slice(0, start) + section + doc.slice(end)
}

if (import.meta.main) {
  const path = `${import.meta.dir}/../${REFERENCE_FILE}`
  const before = await Bun.file(path).text()
  const after = withReference(before)
  if (after === before) console.log(`${REFERENCE_FILE}: up to date (${MODULES.length} modules)`)
  else {
    await Bun.write(path, after)
    console.log(`${REFERENCE_FILE}: module reference written (${MODULES.length} modules)`)
  }
}
