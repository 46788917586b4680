// Resources (`/resources`): list, create (empty, then contents uploaded as multipart `file`), download, edit name,
// description and sharing groups, delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { FormEnd, useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { GroupPicker, groupNames, useShareableGroups } from '../components/groups'
import { ItemsPage } from '../components/items'
import { fileForm, UploadButton } from '../components/upload'
import { bytes, when } from '../components/view'

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
  const action = useAction()
  const change = async (work: () => Promise<unknown>, done: string) => {
    await action.run(work, done)
    resources.reload()
  }
  return (
    <ItemsPage
      id="resources"
      title="Resources"
      newLabel="New resource"
      loaded={resources}
      empty="No resources yet."
      caption="Resources"
      rowKey={(r) => r.GUID}
      action={action}
      form={(resource, done) => <ResourceForm resource={resource} groups={groups} onDone={done} />}
      columns={(edit) => [
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
              <button type="button" onClick={() => edit(r)}>
                Edit
              </button>
              <ConfirmButton label="Delete" question={`Delete ${r.ResourceName}?`} onConfirm={() => change(() => api.delete(path`/api/resources/${r.GUID}`), `${r.ResourceName} deleted.`)} />
            </div>
          ),
        },
      ]}
    />
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
      <FormEnd action={action} onCancel={() => onDone(false)} />
    </form>
  )
}
