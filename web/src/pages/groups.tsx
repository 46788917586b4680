// Groups (`/groups`, administrators): list with their members, create, rename and describe, delete (which removes
// the group from every membership and sharing list).
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import type { Group } from '../components/groups'
import { DataTable } from '../components/table'
import { LoadView } from '../components/view'

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
  const [editing, setEditing] = useState<Group | 'new'>()
  const action = useAction()
  return (
    <section aria-labelledby="groups-title">
      <h1 id="groups-title">Groups</h1>
      <div class="row">
        <button type="button" onClick={() => setEditing('new')}>
          New group
        </button>
      </div>
      <action.Feedback />
      {editing && (
        <GroupForm
          key={editing === 'new' ? 'new' : editing.GID}
          group={editing === 'new' ? undefined : editing}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) groups.reload()
          }}
        />
      )}
      <LoadView loaded={groups} empty="No groups yet.">
        {(list) => (
          <DataTable
            caption="Groups"
            rows={list}
            rowKey={(g) => g.GID}
            columns={[
              { title: 'GID', cell: (g) => g.GID },
              { title: 'Name', cell: (g) => g.Name },
              { title: 'Description', cell: (g) => g.Desc },
              { title: 'Members', cell: (g) => (g.members.length ? g.members.map((m) => m.User).join(', ') : '—') },
              {
                title: 'Actions',
                cell: (g) => (
                  <div class="actions" role="group" aria-label={g.Name}>
                    <button type="button" onClick={() => setEditing(g)}>
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
        )}
      </LoadView>
    </section>
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
      <div class="row">
        <button type="submit" disabled={action.busy}>
          Save
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
      <action.Feedback />
    </form>
  )
}
