#!/bin/sh
":" /*
# The `quarry` command wherever npm put it (npx, npm install -g, node_modules/.bin). This file is both a POSIX shell
# script and a Node script. Run as the bin (by its #! line), the shell part starts Bun on cli/main.ts at once, by
# exec: no launcher process stays between the caller and Bun (signals, exit codes and the process id are Bun's own),
# and no Node starts (about 0.15 s of CPU saved on every command). It takes the Bun binary of the `bun` package this
# package depends on, where npm's postinstall puts it: in this package's node_modules, or beside this package in the
# node_modules it was installed into. Anywhere else (npm --ignore-scripts, no /bin/sh) it runs this same file with
# Node, whose part below finds Bun in the platform packages too.
self=$0
while [ -L "$self" ]; do
  link=$(readlink -- "$self")
  case $link in
    [/]*) self=$link ;;
    *) self=$(dirname -- "$self")/$link ;;
  esac
done
dir=$(dirname -- "$self")
pkg=$(dirname -- "$dir")
bun=$pkg/node_modules/bun/bin/bun.exe
[ -x "$bun" ] && exec "$bun" "$dir/main.ts" "$@"
case $pkg in
  *[/]node_modules[/]quarry) bun=$(dirname -- "$pkg")/bun/bin/bun.exe; [ -x "$bun" ] && exec "$bun" "$dir/main.ts" "$@" ;;
esac
exec node "$self" "$@"
*/
// The Node part: runs cli/main.ts with the Bun binary of the `bun` package this package depends on, so a machine with
// only Node runs it. A Bun already running this file is used as it is. Arguments, stdin/stdout/stderr and the exit
// code pass through; SIGTERM, SIGINT and SIGHUP are forwarded to Bun (so `quarry serve` under a supervisor drains and
// stops), and a Bun ended by a signal ends this process by the same signal. A server whose launcher dies otherwise
// (SIGKILL) stops by itself.
'use strict'
const { spawn } = require('node:child_process')
const { existsSync } = require('node:fs')
const { dirname, join } = require('node:path')

function findBun() {
  if (process.versions.bun) return process.execPath
  const exe = process.platform === 'win32' ? 'bun.exe' : 'bun'
  try {
    // The bun package's postinstall puts the platform's binary at bin/bun.exe; without the postinstall (npm
    // --ignore-scripts) it is in the platform package @oven/bun-<os>-<arch>[-musl]/bin/bun.
    const pkgDir = dirname(require.resolve('bun/package.json'))
    const installed = join(pkgDir, 'bin', 'bun.exe')
    if (existsSync(installed)) return installed
    for (const suffix of ['', '-musl', '-baseline', '-musl-baseline']) {
      try {
        const dir = dirname(require.resolve(`@oven/bun-${process.platform}-${process.arch === 'arm64' ? 'aarch64' : process.arch}${suffix}/package.json`, { paths: [pkgDir] }))
        if (existsSync(join(dir, 'bin', exe))) return join(dir, 'bin', exe)
      } catch {}
    }
  } catch {}
  return undefined
}

const bun = findBun()
if (!bun) {
  process.stderr.write('quarry: cannot find the Bun runtime (the "bun" package this one depends on is not installed; reinstall quarry)\n')
  process.exit(1)
}

// QUARRY_LAUNCHER_PID: `quarry serve` ends when this process dies, even by SIGKILL, which cannot be forwarded
// (cli/launcher.ts); other commands ignore it.
const child = spawn(bun, [join(__dirname, 'main.ts'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, QUARRY_LAUNCHER_PID: String(process.pid) },
})
const forward = (signal) => () => child.kill(signal)
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, forward(signal))
child.on('error', (e) => {
  process.stderr.write(`quarry: cannot run Bun at ${bun}: ${e.message}\n`)
  process.exit(1)
})
child.on('exit', (code, signal) => {
  if (signal) {
    // End the same way the child did, so a shell or supervisor sees the signal (128 + n) rather than a plain failure.
    for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.removeAllListeners(s)
    process.kill(process.pid, signal)
    return
  }
  process.exit(code ?? 1)
})
