// Writes test/js-client/expected.ts from a run's outcomes (JS_CLIENT_RESULTS=<file> bun test test/js-client.test.ts):
// `bun test/js-client/write-expected.ts <file>`. Failing specs get their first error as the reason; edit it to say why.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const results = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as { name: string; status: string; errors: string[] }[]
const clean = (s: string) => s.replace(/ in \/\S+ \(line \d+\)/g, '').replace(/\s+/g, ' ').slice(0, 160)
const lines = results.map((r) => `  ${JSON.stringify(r.name)}: ${JSON.stringify(r.status === 'passed' ? 'pass' : clean(r.errors[0] ?? r.status))},`)
writeFileSync(
  join(import.meta.dir, 'expected.ts'),
  `// The outcome of each TypeScript client spec against Quarry (test/js-client.test.ts): 'pass', or why it fails\n` +
    `// (written by write-expected.ts from a run, reasons edited by hand).\nexport const EXPECTED: Record<string, string> = {\n${lines.join('\n')}\n}\n`,
)
