// The generated password of the first admin account. It never goes to the logs (log collectors keep what they
// read): it is written to a file in the data directory that only the server's account may read, and the log says
// where. The file goes at the first change of that password, so it never holds a password that still works
// after its owner chose another, nor lingers once it is of no use.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './datadir'

const INITIAL_PASSWORD_FILE = 'initial-admin-password'

export function initialPasswordPath(dataDir: string): string {
  return join(dataDir, INITIAL_PASSWORD_FILE)
}

/** Where a password waits until its account exists (see prepareInitialPassword). */
const pendingPath = (dataDir: string) => `${initialPasswordPath(dataDir)}.new`

export interface InitialPasswordFile {
  /** Where the password is once kept. */
  path: string
  /** Puts the pending file in place. */
  keep(): void
  /** Removes the pending file. */
  drop(): void
}

const fileOf = (dataDir: string): InitialPasswordFile => ({
  path: initialPasswordPath(dataDir),
  keep: () => renameSync(pendingPath(dataDir), initialPasswordPath(dataDir)),
  drop: () => rmSync(pendingPath(dataDir), { force: true }),
})

/**
 * Writes the password (one line) to a new file of mode 0600 beside the final one, and answers how to put it in
 * place or drop it: the caller keeps it only once the account exists, so a replica that lost the race to create
 * the account leaves no file, and a directory where it cannot be written stops the start before there is an admin
 * nobody can log in as. The file is created anew (exclusively), so its mode is 0600 whatever one left there had.
 */
export function prepareInitialPassword(dataDir: string, password: string): InitialPasswordFile {
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE })
  const pending = pendingPath(dataDir)
  rmSync(pending, { force: true })
  const fd = openSync(pending, 'wx', PRIVATE_FILE_MODE)
  try {
    writeSync(fd, `${password}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  return fileOf(dataDir)
}

/**
 * A password still pending from a start that stopped between writing it and keeping it (between creating the
 * account and putting the file in place, or before either), with the means to keep or drop it.
 */
export function pendingInitialPassword(dataDir: string): (InitialPasswordFile & { password: string }) | undefined {
  const password = readPassword(pendingPath(dataDir))
  return password === undefined ? undefined : { ...fileOf(dataDir), password }
}

function readPassword(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The password the file holds, or undefined when there is no file (or it cannot be read). */
export function readInitialPassword(dataDir: string): string | undefined {
  return readPassword(initialPasswordPath(dataDir))
}

/** Removes the file; answers whether there was one. */
export function removeInitialPassword(dataDir: string): boolean {
  const path = initialPasswordPath(dataDir)
  const existed = existsSync(path)
  rmSync(path, { force: true })
  return existed
}
