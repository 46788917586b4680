// API tokens over PostgreSQL: the same contract as SqliteTokensRepo (plugins/tokens/repo.ts).
import { type PgPool, type PgRow, num, q, run } from '../../server/store/pg'
import { pgToUser, pgUserColumns } from '../users/repo.pg'
import { type TokenChanges, type TokenRow, type TokensRepo, capabilitiesOf } from './repo'

const COLUMNS = 'id, uid, name, description, capabilities, created, expires'

const toToken = (r: PgRow, uid = r.uid as number): TokenRow => ({
  id: r.id as string,
  uid,
  name: r.name as string,
  description: r.description as string,
  capabilities: capabilitiesOf(r.capabilities as string),
  created: num(r.created),
  expires: num(r.expires),
})

export class PgTokensRepo implements TokensRepo {
  constructor(private readonly db: PgPool) {}

  async create(t: TokenRow, secretHash: string) {
    await run(
      this.db,
      'INSERT INTO tokens (id, uid, name, description, secret_hash, capabilities, created, expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
      [t.id, t.uid, t.name, t.description, secretHash, JSON.stringify(t.capabilities), t.created, t.expires],
    )
  }
  async get(id: string) {
    const [r] = await q(this.db, `SELECT ${COLUMNS} FROM tokens WHERE id = $1`, [id])
    return r ? toToken(r) : undefined
  }
  async getBySecretHash(secretHash: string) {
    const [r] = await q(
      this.db,
      // The token's own name under another alias: users have a name column too.
      `SELECT t.id AS id, t.name AS token_name, t.description AS description, t.capabilities AS capabilities,
              t.created AS created, t.expires AS expires, t.uid AS token_uid, t.secret_hash AS secret_hash,
              ${pgUserColumns('u')}
       FROM tokens t JOIN users u ON u.uid = t.uid WHERE t.secret_hash = $1`,
      [secretHash],
    )
    return r ? { token: toToken({ ...r, name: r.token_name }, r.token_uid as number), secretHash: r.secret_hash as string, user: pgToUser(r) } : undefined
  }
  async listForUser(uid: number) {
    return (await q(this.db, `SELECT ${COLUMNS} FROM tokens WHERE uid = $1 ORDER BY created, id`, [uid])).map((r) => toToken(r))
  }
  async listAll() {
    return (await q(this.db, `SELECT ${COLUMNS} FROM tokens ORDER BY uid, created, id`)).map((r) => toToken(r))
  }
  async update(id: string, changes: TokenChanges) {
    const sets: string[] = []
    const values: (string | number)[] = []
    const set = (column: string, v: string | number) => (values.push(v), sets.push(`${column} = $${values.length}`))
    if (changes.name !== undefined) set('name', changes.name)
    if (changes.description !== undefined) set('description', changes.description)
    if (changes.capabilities !== undefined) set('capabilities', JSON.stringify(changes.capabilities))
    if (changes.expires !== undefined) set('expires', changes.expires)
    if (sets.length === 0) return
    await run(this.db, `UPDATE tokens SET ${sets.join(', ')} WHERE id = $${values.length + 1}`, [...values, id])
  }
  async replaceSecret(id: string, secretHash: string, expires: number) {
    await run(this.db, 'UPDATE tokens SET secret_hash = $1, expires = $2 WHERE id = $3', [secretHash, expires, id])
  }
  async delete(id: string) {
    return (await run(this.db, 'DELETE FROM tokens WHERE id = $1', [id])) > 0
  }
}
