// The documentation cannot drift from the code it describes, nor point at what a reader cannot open:
// - every relative link of README.md, CHANGELOG.md, docs/ and bench/ resolves to a file, and its #anchor to a
//   heading (as GitHub names it) or an explicit `<a id>` of that file;
// - the configuration tables of docs/operations.md name exactly the QUARRY_* variables the server and the CLI read;
// - docs/api.md's permission table is exactly the server's permission list, with its categories and descriptions;
// - docs/security.md names every route anyone may call without logging in;
// - README.md keeps its two commands (CI runs the test one) and names every page of docs/;
// - CHANGELOG.md's newest release is package.json's version.
import { describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { CAPABILITIES, PUBLIC_ROUTES } from '../server/rules/permissions'

const ROOT = resolve(import.meta.dir, '..')
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8')

/** The Markdown files whose links must resolve, relative to the root. */
function documentationFiles(): string[] {
  const mdIn = (dir: string) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.md')).map((f) => `${dir}/${f}`)
  return ['README.md', 'CHANGELOG.md', ...mdIn('docs'), 'bench/README.md', ...mdIn('bench/results')]
}

/** The text outside fenced code blocks, line by line (code blocks hold examples, not links or headings). */
function proseLines(text: string): string[] {
  const lines: string[] = []
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line)
    if (m) {
      if (fence === undefined) fence = m[1]![0]!
      else if (m[1]![0] === fence) fence = undefined
      lines.push('')
      continue
    }
    lines.push(fence === undefined ? line : '')
  }
  return lines
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-')
}

/** Every anchor a Markdown text defines: its headings (repeats get -1, -2 ...) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (h) {
      const slug = headingSlug(h[1]!)
      const n = seen.get(slug) ?? 0
      seen.set(slug, n + 1)
      anchors.add(n === 0 ? slug : `${slug}-${n}`)
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!)
  }
  return anchors
}

/** The relative link targets of a Markdown text: `[text](target)` outside code, without URLs with a scheme. */
export function relativeLinks(text: string): string[] {
  const links: string[] = []
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '')
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target)
    }
  }
  return links
}

/** Why a link of `file` does not resolve, or undefined when it does. */
export function brokenLink(file: string, target: string, readText: (path: string) => string | undefined): string | undefined {
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined]
  const path = pathPart === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(pathPart)))
  if (path.startsWith('..')) return `${file}: ${target} leaves the repository`
  if (!existsSync(join(ROOT, path))) return `${file}: ${target}: no file ${path}`
  if (anchor === undefined) return undefined
  if (!path.endsWith('.md') || statSync(join(ROOT, path)).isDirectory()) return `${file}: ${target}: an anchor into a file that is not Markdown`
  const text = readText(path)
  if (text === undefined || !anchorsOf(text).has(anchor)) return `${file}: ${target}: ${path} has no anchor #${anchor}`
  return undefined
}

const readIfExists = (path: string) => (existsSync(join(ROOT, path)) ? read(path) : undefined)

/** The lines of a Markdown section: from its heading to the next heading of the same or a higher level. */
function section(text: string, heading: string): string {
  const lines = text.split('\n')
  const start = lines.indexOf(heading)
  if (start < 0) throw new Error(`no heading "${heading}"`)
  const level = heading.indexOf(' ')
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level)
  return lines.slice(start, end < 0 ? undefined : end).join('\n')
}

/** Every source file under `dir` that is not a test. */
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|cjs)$/.test(f) && !f.endsWith('.test.ts'))
    .map((f) => `${dir}/${f}`)
}

describe('links', () => {
  test('every relative link of README.md, CHANGELOG.md, docs/ and bench/ resolves, anchors included', () => {
    const files = documentationFiles()
    expect(files.length).toBeGreaterThan(8)
    let checked = 0
    const broken: string[] = []
    for (const file of files) {
      for (const target of relativeLinks(read(file))) {
        checked++
        const why = brokenLink(file, target, readIfExists)
        if (why) broken.push(why)
      }
    }
    expect(broken).toEqual([])
    expect(checked).toBeGreaterThan(50)
  })

  test('the checker finds a missing file, a missing anchor and a link out of the repository, and ignores code', () => {
    const text = ['[a](docs/nothing-here.md)', '[b](docs/api.md#no-such-heading)', '[c](../../etc/passwd)', '`[d](missing.md)`', '```', '[e](missing.md)', '```', '[f](https://example.com/x)'].join('\n')
    const links = relativeLinks(text)
    expect(links).toEqual(['docs/nothing-here.md', 'docs/api.md#no-such-heading', '../../etc/passwd'])
    for (const target of links) expect(brokenLink('README.md', target, readIfExists)).toBeString()
    expect(brokenLink('README.md', 'docs/api.md#search-states', readIfExists)).toBeUndefined()
  })

  test('anchors are named as GitHub names them', () => {
    expect(headingSlug('Recovery: a lost password')).toBe('recovery-a-lost-password')
    expect(headingSlug('The `quarry` command')).toBe('the-quarry-command')
    expect(headingSlug('Extraction: `-e` and `as`')).toBe('extraction--e-and-as')
    expect([...anchorsOf('# A\n## A\n```\n# B\n```\n<a id="x"></a>')]).toEqual(['a', 'a-1', 'x'])
  })
})

describe('docs/operations.md configuration tables', () => {
  test('name exactly the QUARRY_* variables the server and the CLI read', () => {
    const read_by_code = new Set<string>()
    for (const file of [...sources('server'), ...sources('cli')]) {
      // A name ending in _ is a prefix (QUARRY_S3_*), not a variable.
      for (const m of read(file).matchAll(/QUARRY_[A-Z0-9_]+/g)) if (!m[0].endsWith('_')) read_by_code.add(m[0])
    }
    const table = section(read('docs/operations.md'), '## Configuration')
    const documented = [...table.matchAll(/^\| `(QUARRY_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]!)
    expect(documented.length).toBe(new Set(documented).size)
    expect(read_by_code.size).toBeGreaterThan(40)
    expect({ missingFromTheTable: [...read_by_code].filter((v) => !documented.includes(v)).sort() }).toEqual({ missingFromTheTable: [] })
    expect({ readByNothing: documented.filter((v) => !read_by_code.has(v)).sort() }).toEqual({ readByNothing: [] })
  })
})

describe('docs/api.md permissions', () => {
  test('the table is the server\'s permission list: every name once, with its category and description', () => {
    const table = section(read('docs/api.md'), '## Permissions')
    const rows = [...table.matchAll(/^\| `([A-Za-z]+)` \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => [m[1], m[2]!.trim(), m[3]!.trim()])
    expect(rows).toEqual(Object.entries(CAPABILITIES).map(([name, c]) => [name, c.Category, c.Desc]))
  })
})

describe('docs/security.md', () => {
  test('"Anyone on the network" names every route that answers without a login', () => {
    const row = read('docs/security.md').split('\n').find((l) => l.startsWith('| Anyone on the network |'))
    expect(row).toBeString()
    const missing = [...PUBLIC_ROUTES]
      .map((key) => key.split(' ')[1]!.replace(/scalar-[0-9.]+\.js$/, 'scalar-VERSION.js'))
      .filter((path) => !new RegExp(`\`(?:[A-Z]+ )?${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\``).test(row!))
    expect(missing).toEqual([])
  })
})

describe('README.md', () => {
  test('opens with the two commands, exactly (CI runs the second)', () => {
    const readme = read('README.md')
    const block = readme.slice(readme.indexOf('```sh\n') + 6, readme.indexOf('\n```', readme.indexOf('```sh\n')))
    expect(block.split('\n')).toEqual([
      'npm ci && npm start    # install everything (Bun included) and start Quarry on http://127.0.0.1:8080',
      'npm ci && npm test     # install everything and run the whole test suite',
    ])
    expect(read('.ci/run')).toContain('\nnpm test\n')
    expect(JSON.parse(read('package.json')).scripts.test).toBe('bash test/run.sh')
  })

  test('its layout and its reading list name every page of docs/', () => {
    const readme = read('README.md')
    const layout = section(readme, '## Layout')
    const readOn = relativeLinks(section(readme, '## Where to read on'))
    for (const page of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md'))) {
      expect({ page, inLayout: layout.includes(page) }).toEqual({ page, inLayout: true })
      expect({ page, linked: readOn.includes(`docs/${page}`) }).toEqual({ page, linked: true })
    }
  })
})

describe('CHANGELOG.md', () => {
  test('keeps an Unreleased section, and its newest release is the version of package.json, dated', () => {
    const releases = [...read('CHANGELOG.md').matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => ({ version: m[1], date: m[2] }))
    expect(releases[0]).toEqual({ version: 'Unreleased', date: undefined })
    expect(releases[1]).toEqual({ version: JSON.parse(read('package.json')).version, date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) })
  })
})
