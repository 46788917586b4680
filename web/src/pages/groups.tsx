// Groups (`/groups`, administrators): list with their members, create, rename and describe, delete (which removes
// the group from every membership and sharing list).
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { FormEnd, useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import type { Group } from '../components/groups'
import { ItemsPage } from '../components/items'

interface Member {
  UID: number
  User: string
}

export function GroupsPage() {
  const groups = useLoad(async () => {
    const list = await api.get<Group[]>('/api/groups')
    const members = await Promise.all(list.map((g) => api.get<Member[]>(path`/api/groups/${g.GID}/members`)))
    return list.map((g, i) => ({ ...g, members: members[i]! }))
  }, [])
  const action = useAction()
  return (
    <ItemsPage
      id="groups"
      title="Groups"
      newLabel="New group"
      loaded={groups}
      empty="No groups yet."
      caption="Groups"
      rowKey={(g) => g.GID}
      action={action}
      form={(group, done) => <GroupForm group={group} onDone={done} />}
      columns={(edit) => [
        { title: 'GID', cell: (g) => g.GID },
        { title: 'Name', cell: (g) => g.Name },
        { title: 'Description', cell: (g) => g.Desc },
        { title: 'Members', cell: (g) => (g.members.length ? g.members.map((m) => m.User).join(', ') : '—') },
        {
          title: 'Actions',
          cell: (g) => (
            <div class="actions" role="group" aria-label={g.Name}>
              <button type="button" onClick={() => edit(g)}>
                Edit
              </button>
              <ConfirmButton
                label="Delete"
                question={`Delete group ${g.Name}?`}
                onConfirm={async () => {
                  await action.run(() => api.delete(path`/api/groups/${g.GID}`), `Group ${g.Name} deleted.`)
                  groups.reload()
                }}
              />
            </div>
          ),
        },
      ]}
    />
  )
}

function GroupForm({ group, onDone }: { group?: Group; onDone: (saved: boolean) => void }) {
  const [name, setName] = useState(group?.Name ?? '')
  const [desc, setDesc] = useState(group?.Desc ?? '')
  const action = useAction()
  async function submit(event: Event) {
    event.preventDefault()
    const body = { Name: name, Desc: desc }
    if (await action.run(() => (group ? api.put(path`/api/groups/${group.GID}`, body) : api.post('/api/groups', body)))) onDone(true)
  }
  const title = group ? `Edit ${group.Name}` : 'New group'
  return (
    <form class="stack panel" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
      </label>
      <FormEnd action={action} onCancel={() => onDone(false)} />
    </form>
  )
}
