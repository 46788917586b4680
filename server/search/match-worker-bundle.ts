// A Bun macro (run by the transpiler, never at run time): bundles match-worker.ts with what it imports (the engine,
// re2js) into one ES module's text. Bun.build cannot run inside a macro (the bundler waits on it): the CLI can.
// protobufjs stays out as in every build (package.json): @datadog/sketches-js requires it only in functions the engine
// never calls (its protobuf form), and does not declare it.
import { join } from 'node:path'

export function bundleMatchWorker(): string {
  const entry = join(import.meta.dir, 'match-worker.ts')
  const built = Bun.spawnSync([process.execPath, 'build', '--target=bun', '--format=esm', '--external', 'protobufjs/minimal', entry], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } })
  if (built.exitCode !== 0) throw new Error(`bundling the matching worker failed: ${built.stderr.toString()}`)
  return built.stdout.toString()
}
