// Shapes of the server's records the commands show, how they are shown, and how a user or group named on the
// command line (by number or by name) becomes its UID or GID.
import type { Client } from './client'
import { CliError } from './errors'
import type { Column, Output } from './output'

export interface Group { GID: number; Name: string; Desc: string }
export interface User {
  UID: number
  User: string
  Name: string
  Email: string
  Admin: boolean
  Locked: boolean
  DefaultGID?: number
  TS: string
  Groups: Group[]
}

export const userColumns: Column<User>[] = [
  { header: 'UID', value: (u) => u.UID },
  { header: 'USER', value: (u) => u.User },
  { header: 'NAME', value: (u) => u.Name },
  { header: 'EMAIL', value: (u) => u.Email },
  { header: 'ADMIN', value: (u) => u.Admin },
  { header: 'LOCKED', value: (u) => u.Locked },
  { header: 'GROUPS', value: (u) => u.Groups.map((g) => g.Name) },
]

export function userDetails(out: Output, u: User): string {
  return out.details([
    ['UID', u.UID],
    ['User', u.User],
    ['Name', u.Name],
    ['Email', u.Email],
    ['Admin', u.Admin],
    ['Locked', u.Locked],
    ['Default group', u.DefaultGID],
    ['Last active', u.TS],
    ['Groups', u.Groups.map((g) => `${g.Name} (${g.GID})`)],
  ])
}

export const groupColumns: Column<Group>[] = [
  { header: 'GID', value: (g) => g.GID },
  { header: 'NAME', value: (g) => g.Name },
  { header: 'DESCRIPTION', value: (g) => g.Desc },
]

const DIGITS = /^\d+$/

/** A UID given as a number, or the UID of the user with that name (needs the ListUsers permission). */
export async function resolveUid(c: Client, ref: string): Promise<number> {
  if (DIGITS.test(ref)) return Number(ref)
  const found = (await c.get<User[]>('/api/users')).find((u) => u.User === ref)
  if (!found) throw new CliError(`no user named "${ref}"`)
  return found.UID
}

/** A GID given as a number, or the GID of the group with that name. */
export async function resolveGid(c: Client, ref: string): Promise<number> {
  if (DIGITS.test(ref)) return Number(ref)
  const found = (await c.get<Group[]>('/api/groups')).find((g) => g.Name === ref)
  if (!found) throw new CliError(`no group named "${ref}"`)
  return found.GID
}
