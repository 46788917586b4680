// The public TypeScript client's own specs (gravwell/js-client, vendored unchanged in vendor/js-client/), run
// against a real Quarry server process as the client's scripts run them: Jasmine 3 over the spec files, with
// TEST_HOST and INTEGRATION_TESTS=true (src/tests/get-runner-settings.node.ts), logged in as admin/changeme.
//
// At run time the vendored source is copied and rewritten mechanically, to reproduce what the client's build does
// and to run what it leaves out (the spec text itself stays unchanged in vendor/):
// - `x.node.ts` replaces `x.ts` (its build renames *.node.* over the browser files for Node);
// - `import * as X from 'package'` becomes `const X = require('package')`: the client compiles to CommonJS without
//   esModuleInterop, where such an import is the package's module.exports (a constructor for isomorphic-ws and
//   form-data), not an ES namespace;
// - `xit(` and `xdescribe(` become `it(` and `describe(`: the specs the client marks as skipped run too.
//
// Every spec's outcome is asserted against EXPECTED: a spec that passes must keep passing, and one listed as failing
// (with the reason) fails the test the day it starts passing, so the list stays true.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EXPECTED } from './js-client/expected'
import { listening, spawnServer } from './helpers'

const ROOT = join(import.meta.dir, '..')

/** The spec files run, relative to the client's src/ (the node variant's name where there is one). */
const SPEC_FILES = [
  'functions/searches/subscribe-to-one-search/subscribe-to-one-search.spec.ts',
  'functions/searches/attach-to-one-search/attach-to-one-search.spec.ts',
  'functions/searches/search-renderers.spec.ts',
  'functions/searches/validate-one-query.spec.ts',
  'functions/searches/modify-one-query.spec.ts',
  'functions/search-modules/get-all-search-modules.spec.ts',
  'functions/render-modules/get-all-render-modules.spec.ts',
  ...readdirSync(join(ROOT, 'vendor/js-client/src/functions/auto-extractors'))
    .filter((f) => f.endsWith('.spec.ts'))
    .sort()
    .map((f) => `functions/auto-extractors/${f.replace('.node.spec.ts', '.spec.ts')}`),
]


interface SpecResult {
  name: string
  status: string
  errors: string[]
}

/** The vendored source, copied under node_modules/.cache (so that its imports find the project's packages) and rewritten. */
function preparedCopy(): string {
  const cache = join(ROOT, 'node_modules/.cache')
  mkdirSync(cache, { recursive: true })
  const dir = mkdtempSync(join(cache, 'quarry-js-client-'))
  cpSync(join(ROOT, 'vendor/js-client/src'), join(dir, 'src'), { recursive: true })
  const files = (d: string): string[] =>
    readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? files(join(d, f)) : [join(d, f)]))
  const all = files(join(dir, 'src'))
  for (const f of all.filter((f) => f.includes('.node.'))) renameSync(f, f.replace('.node.', '.'))
  for (const f of files(join(dir, 'src')).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(f, 'utf8')
    const rewritten = text
      .replace(/^import \* as (\w+) from '([^.~'][^']*)';$/gm, "const $1 = require('$2');")
      .replace(/\bxit\(/g, 'it(')
      .replace(/\bxdescribe\(/g, 'describe(')
    if (rewritten !== text) writeFileSync(f, rewritten)
  }
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { baseUrl: 'src', paths: { '~/*': ['*'] } } }))
  return dir
}

const results = new Map<string, SpecResult>()
const ranFiles: string[] = []
let copy = ''
let dataDir = ''
let server: ReturnType<typeof spawnServer> | undefined

beforeAll(async () => {
  copy = preparedCopy()
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-js-client-data-'))
  server = spawnServer({ QUARRY_DATA_DIR: dataDir, QUARRY_ADMIN_PASSWORD: 'changeme' })
  const { url } = await listening(server)
  for (const file of SPEC_FILES) {
    const run = Bun.spawn([process.execPath, join(ROOT, 'test/js-client/runner.ts'), join(copy, 'src'), file], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', TEST_HOST: url, INTEGRATION_TESTS: 'true', UNIT_TESTS: 'true' },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const out = await new Response(run.stdout).text()
    await run.exited
    ranFiles.push(file)
    for (const line of out.split('\n')) {
      if (!line.startsWith('SPEC ')) continue
      const r = JSON.parse(line.slice(5)) as SpecResult
      results.set(r.name, r)
    }
  }
  // JS_CLIENT_RESULTS=<file>: the outcomes as JSON, to write EXPECTED from
  if (process.env.JS_CLIENT_RESULTS) writeFileSync(process.env.JS_CLIENT_RESULTS, JSON.stringify([...results.values()], null, 1))
}, 180_000)

afterAll(() => {
  server?.kill()
  if (copy) rmSync(copy, { recursive: true, force: true })
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
})

describe('the TypeScript client specs', () => {
  test('every spec file ran and every spec it holds is listed', () => {
    expect(ranFiles).toEqual(SPEC_FILES)
    expect([...results.keys()].filter((n) => !(n in EXPECTED))).toEqual([])
    expect(Object.keys(EXPECTED).filter((n) => !results.has(n))).toEqual([])
  })
  for (const [name, expected] of Object.entries(EXPECTED)) {
    test(`${expected === 'pass' ? 'passes' : 'fails (known)'}: ${name}`, () => {
      const r = results.get(name)
      expect(r).toBeDefined()
      if (expected === 'pass') expect({ name, status: r!.status, errors: r!.errors }).toEqual({ name, status: 'passed', errors: [] })
      else expect({ name, status: r!.status }).toEqual({ name, status: 'failed' })
    })
  }
})
