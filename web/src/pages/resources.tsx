// Resources (`/resources`): list, create (empty, then contents uploaded as multipart `file`), download, edit name,
// description and sharing groups, delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { GroupPicker, groupNames, useShareableGroups } from '../components/groups'
import { DataTable } from '../components/table'
import { fileForm, UploadButton } from '../components/upload'
import { bytes, LoadView, when } from '../components/view'

export interface Resource {
  UID: number
  GUID: string
  LastModified: string
  VersionNumber: number
  GroupACL: number[]
  Global: boolean
  ResourceName: string
  Description: string
  Size: number
  Hash: string
}

export function ResourcesPage() {
  const resources = useLoad(() => api.get<Resource[]>('/api/resources'), [])
  const groups = useShareableGroups()
  const [editing, setEditing] = useState<Resource | 'new'>()
  const action = useAction()
  const change = async (work: () => Promise<unknown>, done: string) => {
    await action.run(work, done)
    resources.reload()
  }
  return (
    <section aria-labelledby="resources-title">
      <h1 id="resources-title">Resources</h1>
      <div class="row">
        <button type="button" onClick={() => setEditing('new')}>
          New resource
        </button>
      </div>
      <action.Feedback />
      {editing && (
        <ResourceForm
          key={editing === 'new' ? 'new' : editing.GUID}
          resource={editing === 'new' ? undefined : editing}
          groups={groups}
          onDone={(saved) => {
            setEditing(undefined)
            if (saved) resources.reload()
          }}
        />
      )}
      <LoadView loaded={resources} empty="No resources yet.">
        {(list) => (
          <DataTable
            caption="Resources"
            rows={list}
            rowKey={(r) => r.GUID}
            columns={[
              { title: 'Name', cell: (r) => r.ResourceName },
              { title: 'Description', cell: (r) => r.Description },
              { title: 'Size', cell: (r) => bytes(r.Size) },
              { title: 'Version', cell: (r) => r.VersionNumber },
              { title: 'Changed', cell: (r) => when(r.LastModified) },
              { title: 'Shared with', cell: (r) => (r.Global ? 'everyone' : groupNames(r.GroupACL, groups.value)) },
              {
                title: 'Actions',
                cell: (r) => (
                  <div class="actions" role="group" aria-label={r.ResourceName}>
                    <UploadButton
                      label="Upload contents"
                      disabled={action.busy}
                      onFile={(file) => change(() => api.put(path`/api/resources/${r.GUID}/raw`, fileForm(file)), `${r.ResourceName}: ${file.name} uploaded.`)}
                    />
                    {r.Size > 0 && (
                      <a class="button" href={path`/api/resources/${r.GUID}/raw`} download={r.ResourceName}>
                        Download
                      </a>
                    )}
                    <button type="button" onClick={() => setEditing(r)}>
                      Edit
                    </button>
                    <ConfirmButton label="Delete" question={`Delete ${r.ResourceName}?`} onConfirm={() => change(() => api.delete(path`/api/resources/${r.GUID}`), `${r.ResourceName} deleted.`)} />
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

function ResourceForm({ resource, groups, onDone }: { resource?: Resource; groups: ReturnType<typeof useShareableGroups>; onDone: (saved: boolean) => void }) {
  const [name, setName] = useState(resource?.ResourceName ?? '')
  const [description, setDescription] = useState(resource?.Description ?? '')
  const [gids, setGids] = useState<number[]>(resource?.GroupACL ?? [])
  const action = useAction()
  async function submit(event: Event) {
    event.preventDefault()
    const fields = { ResourceName: name, Description: description, GroupACL: gids }
    // PUT takes the metadata as read, with the changed fields
    const ok = await action.run(() => (resource ? api.put(path`/api/resources/${resource.GUID}`, { ...resource, ...fields }) : api.post('/api/resources', fields)))
    if (ok) onDone(true)
  }
  const title = resource ? `Edit ${resource.ResourceName}` : 'New resource'
  return (
    <form class="stack panel" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      <label>
        Name
        <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <GroupPicker legend="Share with groups" value={gids} onChange={setGids} groups={groups} />
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
