// Users (`/users`, administrators): list, create, lock and unlock, the admin flag, group memberships, delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { FormEnd, useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import type { Group } from '../components/groups'
import { ItemsPage } from '../components/items'
import { when } from '../components/view'
import { me } from '../session'

interface User {
  UID: number
  User: string
  Name: string
  Email: string
  Admin: boolean
  Locked: boolean
  TS: string
  Groups: Group[]
}

export function UsersPage() {
  const users = useLoad(() => api.get<User[]>('/api/users'), [])
  const groups = useLoad(() => api.get<Group[]>('/api/groups'), [])
  const action = useAction()
  const self = me.value?.UID
  const change = async (work: () => Promise<unknown>, done: string) => {
    await action.run(work, done)
    users.reload()
  }
  return (
    <ItemsPage
      id="users"
      title="Users"
      newLabel="New user"
      loaded={users}
      empty="No users."
      caption="Users"
      rowKey={(u) => u.UID}
      action={action}
      form={(_, done) => <NewUser onDone={done} />}
      columns={() => [
        { title: 'User', cell: (u) => u.User },
        { title: 'Name', cell: (u) => u.Name },
        { title: 'Email', cell: (u) => u.Email },
        { title: 'Last login', cell: (u) => when(u.TS) },
        {
          title: 'Administrator',
          cell: (u) => (
            <div class="actions">
              <span>{u.Admin ? 'yes' : 'no'}</span>
              <button
                type="button"
                class="small"
                disabled={action.busy || (u.Admin && u.UID === 1)}
                onClick={() =>
                  change(() => (u.Admin ? api.delete(path`/api/users/${u.UID}/admin`) : api.put(path`/api/users/${u.UID}/admin`)), `${u.User} ${u.Admin ? 'is no longer' : 'is now'} an administrator.`)
                }
              >
                {u.Admin ? 'Revoke administrator' : 'Make administrator'}
              </button>
            </div>
          ),
        },
        {
          title: 'Groups',
          cell: (u) => (
            <Memberships user={u} groups={groups.value ?? []} busy={action.busy} change={change} />
          ),
        },
        {
          title: 'Actions',
          cell: (u) => (
            <div class="actions" role="group" aria-label={u.User}>
              {u.Locked ? (
                <button type="button" disabled={action.busy} onClick={() => change(() => api.delete(path`/api/users/${u.UID}/lock`), `${u.User} unlocked.`)}>
                  Unlock
                </button>
              ) : (
                <button type="button" disabled={action.busy || u.UID === self} onClick={() => change(() => api.put(path`/api/users/${u.UID}/lock`), `${u.User} locked.`)}>
                  Lock
                </button>
              )}
              <ConfirmButton label="Delete" disabled={u.UID === self} question={`Delete ${u.User} with their dashboards and library?`} onConfirm={() => change(() => api.delete(path`/api/users/${u.UID}`), `${u.User} deleted.`)} />
            </div>
          ),
        },
      ]}
    />
  )
}

/** A user's groups, each removable, and a picker adding one more. */
function Memberships({ user, groups, busy, change }: { user: User; groups: Group[]; busy: boolean; change: (work: () => Promise<unknown>, done: string) => Promise<void> }) {
  const [adding, setAdding] = useState('')
  const others = groups.filter((g) => !user.Groups.some((m) => m.GID === g.GID))
  return (
    <div class="memberships">
      <ul class="chips">
        {user.Groups.map((g) => (
          <li key={g.GID}>
            {g.Name}
            <button type="button" class="small" aria-label={`Remove ${user.User} from ${g.Name}`} disabled={busy} onClick={() => change(() => api.delete(path`/api/users/${user.UID}/group/${g.GID}`), `${user.User} left ${g.Name}.`)}>
              ×
            </button>
          </li>
        ))}
      </ul>
      {others.length > 0 && (
        <div class="row">
          <select aria-label={`Group to add ${user.User} to`} value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
            <option value="">Add to group…</option>
            {others.map((g) => (
              <option key={g.GID} value={String(g.GID)}>
                {g.Name}
              </option>
            ))}
          </select>
          <button
            type="button"
            class="small"
            disabled={busy || !adding}
            onClick={() => {
              const gid = Number(adding)
              setAdding('')
              void change(() => api.post(path`/api/users/${user.UID}/group`, { GIDs: [gid] }), `${user.User} joined ${groups.find((g) => g.GID === gid)?.Name}.`)
            }}
          >
            Add
          </button>
        </div>
      )}
    </div>
  )
}

function NewUser({ onDone }: { onDone: (saved: boolean) => void }) {
  const [draft, setDraft] = useState({ User: '', Pass: '', Name: '', Email: '', Admin: false })
  const action = useAction()
  const set = (k: 'User' | 'Pass' | 'Name' | 'Email') => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [k]: e.currentTarget.value })
  async function submit(event: Event) {
    event.preventDefault()
    if (await action.run(() => api.post('/api/users', draft))) onDone(true)
  }
  return (
    <form class="stack panel" onSubmit={submit} aria-label="New user">
      <h2>New user</h2>
      <label>
        User name
        <input required autoComplete="off" value={draft.User} onInput={set('User')} />
      </label>
      <label>
        Password
        <input required type="password" autoComplete="new-password" value={draft.Pass} onInput={set('Pass')} />
      </label>
      <label>
        Full name
        <input required value={draft.Name} onInput={set('Name')} />
      </label>
      <label>
        Email
        <input required type="email" value={draft.Email} onInput={set('Email')} />
      </label>
      <label class="check">
        <input type="checkbox" checked={draft.Admin} onChange={(e) => setDraft({ ...draft, Admin: e.currentTarget.checked })} />
        Administrator
      </label>
      <FormEnd action={action} onCancel={() => onDone(false)} submit="Create user" />
    </form>
  )
}
