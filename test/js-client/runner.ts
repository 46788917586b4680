// Runs the TypeScript client's Jasmine specs as its own scripts do (scripts/jasmine: Jasmine 3 over the spec
// files, DEFAULT_TIMEOUT_INTERVAL 5000), in Bun rather than after a tsc build: Bun reads the specs' TypeScript and
// the `~/` alias of the copy's tsconfig.json. Arguments: the copy's src folder, the spec file relative to it, and
// optionally a regular expression: only the specs whose full name matches it run (Jasmine's filter).
// Prints one line per spec, `SPEC <json>` ({name, status, errors}), for test/js-client.test.ts to read.
const Jasmine = require('jasmine') as new (options: { projectBaseDir: string }) => {
  loadConfig(c: object): void
  clearReporters(): void
  addReporter(r: object): void
  exitOnCompletion: boolean
  execute(files?: string[], filter?: string): Promise<void>
  jasmine: { DEFAULT_TIMEOUT_INTERVAL: number }
}

const [srcDir, spec, filter] = process.argv.slice(2)
if (!srcDir || !spec) throw new Error('usage: runner.ts <src dir> <spec file> [<filter>]')
const runner = new Jasmine({ projectBaseDir: srcDir })
runner.loadConfig({ spec_dir: '.', spec_files: [spec], random: false })
runner.jasmine.DEFAULT_TIMEOUT_INTERVAL = 5000
runner.clearReporters()
runner.addReporter({
  specDone(result: { fullName: string; status: string; failedExpectations: { message: string }[] }) {
    const errors = result.failedExpectations.map((f) => f.message)
    console.log(`SPEC ${JSON.stringify({ name: result.fullName, status: result.status, errors })}`)
  },
})
runner.exitOnCompletion = true
await runner.execute(undefined, filter)

export {}
