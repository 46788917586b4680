// docs/query-language.md cannot drift from the registry: its generated section must be exactly what
// engine/reference.ts writes from MODULES (run `bun engine/reference.ts` after adding or changing a module), and every
// module of the registry must have its entry there.
import { describe, expect, test } from 'bun:test'
import type { ModuleDef } from './module'
import { BEGIN_MARKER, END_MARKER, KIND_SECTIONS, REFERENCE_FILE, generatedSection, markdownText, moduleReference, withReference } from './reference'
import { MODULES } from './registry'

const doc = await Bun.file(`${import.meta.dir}/../${REFERENCE_FILE}`).text()

describe('the module reference of docs/query-language.md', () => {
  test('its generated section is what the registry gives (else run: bun engine/reference.ts)', () => {
    expect(generatedSection(doc).text).toBe(moduleReference())
  })

  test('every module of the registry has its heading, its help and its examples under its kind', () => {
    const section = generatedSection(doc).text
    for (const m of MODULES) {
      const heading = `#### \`${m.name}\``
      expect(section.split('\n').filter((l) => l === heading)).toHaveLength(1)
      const at = section.indexOf(heading)
      // The module sits under its kind's heading: the last kind heading before it.
      const kindHeadings = KIND_SECTIONS.map((k) => ({ kind: k.kind, at: section.indexOf(`### ${k.title}\n`) }))
      const under = kindHeadings.filter((k) => k.at >= 0 && k.at < at).sort((a, b) => b.at - a.at)[0]
      expect({ module: m.name, kind: under?.kind }).toEqual({ module: m.name, kind: m.kind })
      const next = section.indexOf('\n#### ', at + 1)
      const body = section.slice(at, next < 0 ? undefined : next)
      expect(body).toContain(markdownText(m.info.trim()))
      for (const ex of m.examples) expect(body.split('\n')).toContain(ex)
    }
  })

  test('the hand-written parts around the section are kept byte for byte when it is rewritten', () => {
    const { start, end } = generatedSection(doc)
    const rewritten = withReference(doc, `${BEGIN_MARKER}\nanything\n${END_MARKER}`)
    expect(rewritten.slice(0, start)).toBe(doc.slice(0, start))
    expect(rewritten.slice(rewritten.indexOf(END_MARKER) + END_MARKER.length)).toBe(doc.slice(end))
    expect(withReference(rewritten)).toBe(withReference(doc))
  })

  test('a module added to the registry changes the section: the committed file then no longer matches', () => {
    const extra: ModuleDef = { name: 'zz_new', kind: 'processing', info: 'A module nobody wrote down.', examples: ['zz_new 1'], compile: () => { throw new Error('unused') } }
    const section = moduleReference([...MODULES, extra])
    expect(section).toContain('#### `zz_new`')
    expect(section).not.toBe(generatedSection(doc).text)
  })

  test('missing, repeated or reversed markers are an error, not a silent rewrite', () => {
    expect(() => withReference('no markers here')).toThrow(/needs the markers/)
    expect(() => withReference(`${END_MARKER}\n${BEGIN_MARKER}`)).toThrow(/needs the markers/)
    expect(() => withReference(`${BEGIN_MARKER}\n${END_MARKER}\n${BEGIN_MARKER}\n${END_MARKER}`)).toThrow(/twice/)
  })

  test('help text keeps what Markdown would eat: <name>, * and _ outside code spans', () => {
    expect(markdownText('captures (?P<name>...) and `(?P<x>y)` a*b unique_count')).toBe('captures (?P&lt;name&gt;...) and `(?P<x>y)` a\\*b unique\\_count')
  })
})
