// The search library (`/library`): the caller's saved queries, each with a link that runs it on the search page;
// create, edit (name, description, query, groups) and delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { FormEnd, useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { GroupPicker, groupNames, useShareableGroups } from '../components/groups'
import { ItemsPage } from '../components/items'
import { href } from '../router'

export interface LibraryEntry {
  ThingUUID: string
  GUID: string
  UID: number
  GIDs?: number[]
  Global: boolean
  Name: string
  Description: string
  Query: string
  Labels?: string[]
  Metadata?: unknown
}

interface Draft {
  Name: string
  Description: string
  Query: string
  GIDs: number[]
}

const EMPTY: Draft = { Name: '', Description: '', Query: '', GIDs: [] }

export function LibraryPage() {
  const entries = useLoad(() => api.get<LibraryEntry[]>('/api/library'), [])
  const groups = useShareableGroups()
  const action = useAction()
  return (
    <ItemsPage
      id="library"
      title="Library"
      newLabel="New query"
      loaded={entries}
      empty="No saved queries yet."
      caption="Saved queries"
      rowKey={(e) => e.ThingUUID}
      action={action}
      form={(entry, done) => <EntryForm entry={entry} groups={groups} onDone={done} />}
      columns={(edit) => [
        { title: 'Name', cell: (e) => e.Name },
        { title: 'Query', cell: (e) => <code>{e.Query}</code> },
        { title: 'Description', cell: (e) => e.Description },
        { title: 'Shared with', cell: (e) => (e.Global ? 'everyone' : groupNames(e.GIDs, groups.value)) },
        {
          title: 'Actions',
          cell: (e) => (
            <div class="actions" role="group" aria-label={e.Name}>
              <a class="button" href={href('/search', { q: e.Query })}>
                Run
              </a>
              <button type="button" onClick={() => edit(e)}>
                Edit
              </button>
              <ConfirmButton
                label="Delete"
                question={`Delete ${e.Name}?`}
                onConfirm={async () => {
                  await action.run(() => api.delete(path`/api/library/${e.ThingUUID}`), `${e.Name} deleted.`)
                  entries.reload()
                }}
              />
            </div>
          ),
        },
      ]}
    />
  )
}

function EntryForm({ entry, groups, onDone }: { entry?: LibraryEntry; groups: ReturnType<typeof useShareableGroups>; onDone: (saved: boolean) => void }) {
  const [draft, setDraft] = useState<Draft>(entry ? { Name: entry.Name, Description: entry.Description, Query: entry.Query, GIDs: entry.GIDs ?? [] } : EMPTY)
  const action = useAction()
  const set = (k: keyof Draft) => (e: { currentTarget: { value: string } }) => setDraft({ ...draft, [k]: e.currentTarget.value })
  async function submit(event: Event) {
    event.preventDefault()
    // PUT takes the complete entry: what was read, with the changed members
    const ok = await action.run(() => (entry ? api.put(path`/api/library/${entry.ThingUUID}`, { ...entry, ...draft }) : api.post('/api/library', draft)))
    if (ok) onDone(true)
  }
  return (
    <form class="stack panel" onSubmit={submit} aria-label={entry ? `Edit ${entry.Name}` : 'New query'}>
      <h2>{entry ? `Edit ${entry.Name}` : 'New query'}</h2>
      <label>
        Name
        <input required value={draft.Name} onInput={set('Name')} />
      </label>
      <label>
        Description
        <input value={draft.Description} onInput={set('Description')} />
      </label>
      <label>
        Query
        <textarea required rows={3} value={draft.Query} onInput={set('Query')} />
      </label>
      <GroupPicker legend="Share with groups" value={draft.GIDs} onChange={(GIDs) => setDraft({ ...draft, GIDs })} groups={groups} />
      <FormEnd action={action} onCancel={() => onDone(false)} />
    </form>
  )
}
