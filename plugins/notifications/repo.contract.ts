// What every NotificationsRepo guarantees, written against the interface only, so that the SQLite repo
// (repo.test.ts) and the PostgreSQL one (after the merge, beside test/store-contract.test.ts) run the same cases.
import { describe, expect, test } from 'bun:test'
import type { GroupsRepo } from '../groups/repo'
import type { UsersRepo } from '../users/repo'
import type { NewNotification, NotificationsRepo } from './repo'

export interface ContractStore {
  users: UsersRepo
  groups: GroupsRepo
  notifications: NotificationsRepo
}

const T0 = 1_800_000_000_000
const DAY = 86_400_000

export function notificationsContract(name: string, open: () => Promise<{ store: ContractStore; close(): Promise<void> | void }>) {
  async function world() {
    const { store, close } = await open()
    const user = (n: string) => store.users.create({ username: `${n}-${crypto.randomUUID().slice(0, 8)}`, name: n, email: '', passwordHash: 'x', admin: false }, T0)
    const alice = await user('alice')
    const bob = await user('bob')
    const carol = await user('carol')
    const team = await store.groups.create(`team-${crypto.randomUUID().slice(0, 8)}`, '')
    const others = await store.groups.create(`others-${crypto.randomUUID().slice(0, 8)}`, '')
    await store.groups.addMember(alice, [team])
    await store.groups.addMember(bob, [team])
    await store.groups.addMember(carol, [others])
    const n = (over: Partial<NewNotification>): NewNotification => ({
      sender: alice, broadcast: false, uid: 0, gid: 0, type: 0, level: '', link: '', msg: 'm', sent: T0, expires: T0 + DAY, ignoreUntil: 0, ...over,
    })
    return { r: store.notifications, store, close, alice, bob, carol, team, others, n }
  }

  describe(`NotificationsRepo (${name})`, () => {
    test('create and get round-trip every field; ids grow and are not reused after a delete', async () => {
      const w = await world()
      const row = w.n({ uid: w.bob, type: 4_294_967_295, level: 'warn', link: '/x', msg: 'é\tok\n😀', ignoreUntil: T0 + 5 })
      const a = (await w.r.create(row, 10, T0))!
      expect(await w.r.get(a)).toEqual({ id: a, ...row })
      expect(await w.r.delete(a)).toBe(true)
      expect(await w.r.delete(a)).toBe(false)
      const b = (await w.r.create(w.n({ broadcast: true }), 10, T0))!
      expect(b).toBeGreaterThan(a)
      expect(await w.r.get(b)).toMatchObject({ broadcast: true, uid: 0, gid: 0 })
      expect(await w.r.get(a)).toBeUndefined()
      await w.close()
    })

    test('the per-sender limit counts unexpired rows only, and holds under concurrent creates', async () => {
      const w = await world()
      expect(await w.r.create(w.n({ expires: T0 + 10, uid: w.alice }), 3, T0)).toBeNumber()
      const results = await Promise.all(Array.from({ length: 12 }, () => w.r.create(w.n({ uid: w.alice }), 3, T0)))
      expect(results.filter((id) => id !== undefined)).toHaveLength(2)
      expect(await w.r.create(w.n({ sender: w.bob, uid: w.bob }), 3, T0)).toBeNumber()
      expect(await w.r.create(w.n({ uid: w.alice }), 3, T0 + 10)).toBeNumber() // the first expired
      await w.close()
    })

    test('listFor: broadcast, own and own groups; not expired, not ignored, sent after `after`; in id order', async () => {
      const w = await world()
      const ids = {
        all: (await w.r.create(w.n({ broadcast: true }), 99, T0))!,
        toBob: (await w.r.create(w.n({ uid: w.bob }), 99, T0))!,
        team: (await w.r.create(w.n({ gid: w.team }), 99, T0))!,
        others: (await w.r.create(w.n({ gid: w.others }), 99, T0))!,
        expired: (await w.r.create(w.n({ uid: w.bob, expires: T0 + 1 }), 99, T0))!,
        ignored: (await w.r.create(w.n({ uid: w.bob, ignoreUntil: T0 + 100 }), 99, T0))!,
        later: (await w.r.create(w.n({ uid: w.bob, sent: T0 + 50 }), 99, T0))!,
      }
      const of = async (uid: number, now: number, after = 0) => (await w.r.listFor(uid, now, after)).map((r) => r.id)
      expect(await of(w.bob, T0 + 1)).toEqual([ids.all, ids.toBob, ids.team, ids.later])
      expect(await of(w.bob, T0 + 100)).toEqual([ids.all, ids.toBob, ids.team, ids.ignored, ids.later])
      expect(await of(w.bob, T0 + 1, T0)).toEqual([ids.later])
      expect(await of(w.carol, T0 + 1)).toEqual([ids.all, ids.others])
      expect((await w.r.listAll(T0 + 1, 0)).map((r) => r.id)).toEqual([ids.all, ids.toBob, ids.team, ids.others, ids.ignored, ids.later])
      expect(await w.r.sweepExpired(T0 + 1)).toBe(1)
      expect(await w.r.sweepExpired(T0 + 1)).toBe(0)
      expect(await w.r.get(ids.expired)).toBeUndefined()
      await w.close()
    })

    test('update changes only what it names; rows go with their sender, target user or group', async () => {
      const w = await world()
      const id = (await w.r.create(w.n({ gid: w.team, msg: 'a', level: 'info' }), 99, T0))!
      await w.r.update(id, { msg: 'b', ignoreUntil: T0 + 9, link: '' })
      await w.r.update(id, {})
      expect(await w.r.get(id)).toMatchObject({ msg: 'b', level: 'info', ignoreUntil: T0 + 9, link: '', expires: T0 + DAY })
      const toCarol = (await w.r.create(w.n({ uid: w.carol }), 99, T0))!
      const byBob = (await w.r.create(w.n({ sender: w.bob, uid: w.bob }), 99, T0))!
      await w.store.groups.delete(w.team)
      await w.store.users.delete(w.carol)
      await w.store.users.delete(w.bob)
      for (const gone of [id, toCarol, byBob]) expect(await w.r.get(gone)).toBeUndefined()
      await w.close()
    })
  })
}
