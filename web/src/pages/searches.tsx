// Search control (`/searches`): the searches the caller may see (an admin may widen it to everyone's), with their
// state, owner, group and stored size, and what the API lets one do with each: attach (the search page), stop,
// background, save, export a saved one as an archive, delete; and the import of an archive.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { groupNames, useShareableGroups, type Group } from '../components/groups'
import { DataTable } from '../components/table'
import { bytes, LoadView } from '../components/view'
import { href } from '../router'
import { me } from '../session'

export interface SearchEntry {
  ID: string
  UID: number
  GID: number
  State: string
  AttachedClients: number
  StoredData: number
  UserQuery: string
  StartRange: string
  EndRange: string
}

interface UserRecord {
  UID: number
  User: string
}

/** A state word of the entry's `State` (`DORMANT/SAVED` holds SAVED). */
export const holds = (s: SearchEntry, word: string) => s.State.split('/').includes(word)

export function SearchesPage() {
  const who = me.value!
  const [everyone, setEveryone] = useState(false)
  const searches = useLoad(() => api.get<SearchEntry[]>(everyone ? '/api/searchctrl/all' : '/api/searchctrl'), [everyone])
  const users = useLoad(() => api.get<UserRecord[]>('/api/users'), [])
  const groups = useLoad(() => api.get<Group[]>('/api/groups'), [])
  const action = useAction()

  async function act(work: () => Promise<unknown>, done: string) {
    await action.run(work, done)
    searches.reload()
  }
  const owner = (uid: number) => users.value?.find((u) => u.UID === uid)?.User ?? `#${uid}`

  return (
    <section aria-labelledby="searches-title">
      <h1 id="searches-title">Searches</h1>
      <div class="row">
        <button type="button" onClick={searches.reload}>
          Refresh
        </button>
        {who.Admin && (
          <label class="check">
            <input type="checkbox" checked={everyone} onChange={(e) => setEveryone(e.currentTarget.checked)} />
            Every user's searches
          </label>
        )}
      </div>
      <action.Feedback />
      <LoadView loaded={searches} empty="No searches.">
        {(list) => (
          <DataTable
            caption="Searches"
            rows={list}
            rowKey={(s) => s.ID}
            columns={[
              { title: 'ID', cell: (s) => <a href={href('/search', { id: s.ID })} aria-label={`Attach to search ${s.ID}`}>{s.ID}</a> },
              { title: 'Query', cell: (s) => <code>{s.UserQuery}</code> },
              { title: 'State', cell: (s) => s.State },
              { title: 'Owner', cell: (s) => owner(s.UID) },
              { title: 'Group', cell: (s) => (s.GID ? groupNames([s.GID], groups.value) : '—') },
              { title: 'Size', cell: (s) => bytes(s.StoredData) },
              {
                title: 'Actions',
                cell: (s) => (
                  <div class="actions" role="group" aria-label={`Search ${s.ID}`}>
                    <button type="button" disabled={action.busy} onClick={() => act(() => api.put(path`/api/searchctrl/${s.ID}/stop`), `Search ${s.ID} stopped.`)}>
                      Stop
                    </button>
                    <button type="button" disabled={action.busy} onClick={() => act(() => api.patch(path`/api/searchctrl/${s.ID}/background`), `Search ${s.ID} backgrounded.`)}>
                      Background
                    </button>
                    <button type="button" disabled={action.busy} onClick={() => act(() => api.patch(path`/api/searchctrl/${s.ID}/save`), `Search ${s.ID} marked to be saved.`)}>
                      Save
                    </button>
                    {holds(s, 'SAVED') && (
                      <a class="button" href={path`/api/searchctrl/${s.ID}/download/archive`} download={`search-${s.ID}.tar.gz`}>
                        Export
                      </a>
                    )}
                    <ConfirmButton label="Delete" question={`Delete search ${s.ID} and its results?`} onConfirm={() => act(() => api.delete(path`/api/searchctrl/${s.ID}`), `Search ${s.ID} deleted.`)} />
                  </div>
                ),
              },
            ]}
          />
        )}
      </LoadView>
      <ImportForm onImported={searches.reload} />
    </section>
  )
}

/** POST /api/searchctrl/import: the archive as multipart `file`, shared with the chosen group (none: not shared). */
function ImportForm({ onImported }: { onImported: () => void }) {
  const groups = useShareableGroups()
  const [gid, setGid] = useState('')
  const [file, setFile] = useState<File>()
  const action = useAction()
  async function submit(event: Event) {
    event.preventDefault()
    if (!file) return
    const form = new FormData()
    form.set('file', file)
    if (gid) form.set('GID', gid)
    const ok = await action.run(() => api.post('/api/searchctrl/import', form), `Imported ${file.name}.`)
    if (ok) {
      ;(event.target as HTMLFormElement).reset()
      setFile(undefined)
      onImported()
    }
  }
  return (
    <form class="stack" onSubmit={submit} aria-labelledby="import-title">
      <h2 id="import-title">Import a search archive</h2>
      <label>
        Archive file
        <input type="file" required accept=".tar,.gz,.tgz,application/gzip,application/x-tar" onChange={(e) => setFile(e.currentTarget.files?.[0])} />
      </label>
      <label>
        Share with group
        <select value={gid} onChange={(e) => setGid(e.currentTarget.value)}>
          <option value="">No group</option>
          {(groups.value ?? []).map((g) => (
            <option key={g.GID} value={String(g.GID)}>
              {g.Name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={action.busy || !file}>
        Import
      </button>
      <action.Feedback />
    </form>
  )
}
