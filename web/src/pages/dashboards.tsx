// Dashboards (`/dashboards`): the caller's own, those shared with their groups, the global ones (and, for an
// admin who asks, everyone else's), each opening at `/dashboards/:id`; a new one is created empty and opened in the
// editor; delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { groupNames, type Group } from '../components/groups'
import { DataTable } from '../components/table'
import { LoadView, when } from '../components/view'
import { emptyData, readData, type Dashboard } from '../dashboards/model'
import { href, navigate } from '../router'
import { me } from '../session'

export function DashboardsPage() {
  const who = me.value!
  const [everyone, setEveryone] = useState(false)
  const dashboards = useLoad(() => api.get<Dashboard[]>(everyone ? '/api/dashboards/all' : '/api/dashboards'), [everyone])
  const groups = useLoad(() => api.get<Group[]>('/api/groups'), [])
  const action = useAction()

  const sections = (list: Dashboard[]) => {
    const mine = list.filter((d) => d.UID === who.UID)
    const global = list.filter((d) => d.UID !== who.UID && d.Global)
    const inMyGroups = (d: Dashboard) => (d.GIDs ?? []).some((gid) => who.Groups?.some((g) => g.GID === gid))
    const shared = list.filter((d) => d.UID !== who.UID && !d.Global && inMyGroups(d))
    const others = list.filter((d) => d.UID !== who.UID && !d.Global && !inMyGroups(d))
    return [
      { title: 'Your dashboards', rows: mine, empty: 'You have no dashboards yet.' },
      { title: 'Shared with your groups', rows: shared, empty: 'None shared with your groups.' },
      { title: 'Global', rows: global, empty: 'No global dashboards.' },
      ...(others.length ? [{ title: "Other users' dashboards", rows: others, empty: '' }] : []),
    ]
  }

  return (
    <section aria-labelledby="dashboards-title">
      <h1 id="dashboards-title">Dashboards</h1>
      <CreateDashboard />
      {who.Admin && (
        <label class="check">
          <input type="checkbox" checked={everyone} onChange={(e) => setEveryone(e.currentTarget.checked)} />
          Every user's dashboards
        </label>
      )}
      <action.Feedback />
      <LoadView loaded={dashboards} empty="No dashboards yet." isEmpty={() => false}>
        {(list) =>
          sections(list).map((s) => (
            <div key={s.title}>
              <h2>{s.title}</h2>
              {s.rows.length === 0 ? (
                <p class="muted">{s.empty}</p>
              ) : (
                <DataTable
                  caption={s.title}
                  rows={s.rows}
                  rowKey={(d) => d.ID}
                  columns={[
                    { title: 'Name', cell: (d) => <a href={href(`/dashboards/${d.ID}`)}>{d.Name || `Dashboard ${d.ID}`}</a> },
                    { title: 'Description', cell: (d) => d.Description },
                    { title: 'Tiles', cell: (d) => readData(d.Data).tiles.length },
                    { title: 'Shared with', cell: (d) => (d.Global ? 'everyone' : groupNames(d.GIDs, groups.value)) },
                    { title: 'Updated', cell: (d) => when(d.Updated) },
                    {
                      title: 'Actions',
                      cell: (d) =>
                        d.UID === who.UID || who.Admin ? (
                          <ConfirmButton
                            label="Delete"
                            question={`Delete ${d.Name}?`}
                            onConfirm={async () => {
                              await action.run(() => api.delete(path`/api/dashboards/${d.ID}`), `${d.Name} deleted.`)
                              dashboards.reload()
                            }}
                          />
                        ) : null,
                    },
                  ]}
                />
              )}
            </div>
          ))
        }
      </LoadView>
    </section>
  )
}

function CreateDashboard() {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const action = useAction()
  async function submit(event: Event) {
    event.preventDefault()
    let id: number | undefined
    const ok = await action.run(async () => {
      id = await api.post<number>('/api/dashboards', { Name: name, Description: description, Data: emptyData() })
    })
    if (ok && id !== undefined) navigate(`/dashboards/${id}`, { edit: '1' })
  }
  return (
    <form class="row" onSubmit={submit} aria-label="New dashboard">
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Create dashboard
      </button>
      <action.Feedback />
    </form>
  )
}
