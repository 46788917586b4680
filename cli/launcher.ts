// `quarry serve` started by the npm launcher (cli/quarry.cjs) ends when that launcher dies, whatever ended it: a
// launcher killed with SIGKILL cannot forward anything, and a server left running would hold the data directory's
// lock, so the next start would fail. The launcher names itself in LAUNCHER_ENV; the server is then sent SIGTERM (its
// ordinary drain and stop, server/main.ts) as soon as the launcher is gone:
// - on Linux at once, by the kernel: prctl(PR_SET_PDEATHSIG, SIGTERM) through bun:ffi (about 13 ms once, at start);
// - everywhere, within PARENT_CHECK_MS: the parent process id is read again and differs once the launcher is gone
//   (the server is then the child of init or of a subreaper).
// A server started any other way (`bun cli/main.ts serve`, the single executable, a container's entry point) is not
// watched: it may outlive the shell that started it, as `nohup` and `&` users expect.

/** The variable the launcher passes its process id in; read and removed at start (cli/main.ts), before any configuration is read. */
export const LAUNCHER_ENV = 'QUARRY_LAUNCHER_PID'
/** How often the parent process id is read again. */
export const PARENT_CHECK_MS = 1000

const PR_SET_PDEATHSIG = 1
const SIGTERM = 15

/** Asks the kernel for SIGTERM when the parent dies; false where that is not available (not Linux, no libc found). */
function deathSignal(): boolean {
  if (process.platform !== 'linux') return false
  for (const lib of ['libc.so.6', 'libc.so', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1']) {
    try {
      const { dlopen, FFIType } = require('bun:ffi') as typeof import('bun:ffi')
      const libc = dlopen(lib, { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } })
      const ok = libc.symbols.prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) === 0
      return ok
    } catch {}
  }
  return false
}

/** The launcher's process id from `env` (undefined when not started by it); the variable is removed from `env`. */
export function takeLauncherPid(env: Record<string, string | undefined> = process.env): number | undefined {
  const raw = env[LAUNCHER_ENV]
  delete env[LAUNCHER_ENV]
  const pid = Number(raw)
  return raw && Number.isSafeInteger(pid) && pid > 1 ? pid : undefined
}

/**
 * Arranges for SIGTERM to this process once the `launcher` (its parent at start) is gone. Answers how it watches:
 * 'signal' (the kernel's parent-death signal, and the poll as well), 'poll' (the poll alone).
 */
export function watchLauncher(launcher: number): 'signal' | 'poll' {
  const stop = () => process.kill(process.pid, 'SIGTERM')
  const signalled = deathSignal()
  const timer = setInterval(() => {
    if (process.ppid === launcher) return
    clearInterval(timer)
    stop()
  }, PARENT_CHECK_MS)
  timer.unref()
  // A launcher that died before prctl took effect left no one to signal this process.
  if (process.ppid !== launcher) {
    clearInterval(timer)
    stop()
  }
  return signalled ? 'signal' : 'poll'
}
