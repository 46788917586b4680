// API tokens over SQLite. Plain objects in and out; no HTTP here.
import type { Database, Statement } from 'bun:sqlite'
import { type UserDbRow, type UserRow, toUser, userColumns } from '../users/repo'
import type { Maybe } from '../../server/store/maybe'
import { isCapability } from '../../server/rules/permissions'

export interface TokenRow {
  id: string
  uid: number
  name: string
  description: string
  /** Shared and frozen when read from the store. */
  capabilities: readonly string[]
  created: number
  /** 0: never expires. */
  expires: number
}

export type TokenChanges = Partial<Pick<TokenRow, 'name' | 'description' | 'capabilities' | 'expires'>>

export interface TokensRepo {
  create(token: TokenRow, secretHash: string): Promise<void>
  get(id: string): Promise<TokenRow | undefined>
  /** The token with this secret hash and its owner, in one query: this runs on every token request (Maybe: server/store/maybe.ts). */
  getBySecretHash(secretHash: string): Maybe<{ token: TokenRow; secretHash: string; user: UserRow } | undefined>
  listForUser(uid: number): Promise<TokenRow[]>
  listAll(): Promise<TokenRow[]>
  update(id: string, changes: TokenChanges): Promise<void>
  /** Replaces the secret and the expiry together (a refresh). */
  replaceSecret(id: string, secretHash: string, expires: number): Promise<void>
  delete(id: string): Promise<boolean>
}

interface TokenDbRow {
  id: string
  uid: number
  name: string
  description: string
  capabilities: string
  created: number
  expires: number
}

const COLUMNS = 'id, uid, name, description, capabilities, created, expires'

/**
 * Parsed capability lists by their stored text: tokens share few distinct lists, and this runs per request.
 * A stored name that is no longer a permission (PreferenceRead/Write, which older servers granted before the
 * preferences became session-only) is dropped: the token loads and keeps its other permissions, and no
 * listing shows a name the clients do not know.
 */
const parsedCapabilities = new Map<string, readonly string[]>()
const MAX_PARSED = 1000

export function capabilitiesOf(stored: string): readonly string[] {
  let list = parsedCapabilities.get(stored)
  if (!list) {
    list = Object.freeze((JSON.parse(stored) as string[]).filter(isCapability))
    if (parsedCapabilities.size >= MAX_PARSED) parsedCapabilities.clear()
    parsedCapabilities.set(stored, list)
  }
  return list
}

const toToken = (r: TokenDbRow): TokenRow => ({
  id: r.id,
  uid: r.uid,
  name: r.name,
  description: r.description,
  capabilities: capabilitiesOf(r.capabilities),
  created: r.created,
  expires: r.expires,
})

export class SqliteTokensRepo implements TokensRepo {
  private readonly q: {
    insert: Statement<unknown, [string, number, string, string, string, string, number, number]>
    get: Statement<TokenDbRow, [string]>
    bySecret: Statement<TokenDbRow & UserDbRow & { token_uid: number; secret_hash: string }, [string]>
    listUser: Statement<TokenDbRow, [number]>
    listAll: Statement<TokenDbRow, []>
    replaceSecret: Statement<unknown, [string, number, string]>
    del: Statement<unknown, [string]>
  }

  constructor(private readonly db: Database) {
    this.q = {
      insert: db.query(
        'INSERT INTO tokens (id, uid, name, description, secret_hash, capabilities, created, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      get: db.query(`SELECT ${COLUMNS} FROM tokens WHERE id = ?`),
      // `= +?`: a join with a bare parameter is re-planned on every call (see plugins/groups/repo.ts)
      bySecret: db.query(
        `SELECT t.id AS id, t.name AS name, t.description AS description, t.capabilities AS capabilities,
                t.created AS created, t.expires AS expires, t.uid AS token_uid, t.secret_hash AS secret_hash,
                ${userColumns('u')}
         FROM tokens t JOIN users u ON u.uid = t.uid WHERE t.secret_hash = +?`,
      ),
      listUser: db.query(`SELECT ${COLUMNS} FROM tokens WHERE uid = ? ORDER BY created, id`),
      listAll: db.query(`SELECT ${COLUMNS} FROM tokens ORDER BY uid, created, id`),
      replaceSecret: db.query('UPDATE tokens SET secret_hash = ?, expires = ? WHERE id = ?'),
      del: db.query('DELETE FROM tokens WHERE id = ?'),
    }
  }

  async create(t: TokenRow, secretHash: string) {
    this.q.insert.run(t.id, t.uid, t.name, t.description, secretHash, JSON.stringify(t.capabilities), t.created, t.expires)
  }
  async get(id: string) {
    const r = this.q.get.get(id)
    return r ? toToken(r) : undefined
  }
  getBySecretHash(secretHash: string) {
    const r = this.q.bySecret.get(secretHash)
    return r ? { token: toToken({ ...r, uid: r.token_uid }), secretHash: r.secret_hash, user: toUser(r) } : undefined
  }
  async listForUser(uid: number) {
    return this.q.listUser.all(uid).map(toToken)
  }
  async listAll() {
    return this.q.listAll.all().map(toToken)
  }
  async update(id: string, changes: TokenChanges) {
    const sets: string[] = []
    const values: (string | number)[] = []
    if (changes.name !== undefined) (sets.push('name = ?'), values.push(changes.name))
    if (changes.description !== undefined) (sets.push('description = ?'), values.push(changes.description))
    if (changes.capabilities !== undefined) (sets.push('capabilities = ?'), values.push(JSON.stringify(changes.capabilities)))
    if (changes.expires !== undefined) (sets.push('expires = ?'), values.push(changes.expires))
    if (sets.length === 0) return
    this.db.run(`UPDATE tokens SET ${sets.join(', ')} WHERE id = ?`, [...values, id])
  }
  async replaceSecret(id: string, secretHash: string, expires: number) {
    this.q.replaceSecret.run(secretHash, expires, id)
  }
  async delete(id: string) {
    return this.q.del.run(id).changes > 0
  }
}
