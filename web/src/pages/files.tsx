// User files (`/files`): list, upload a new file (contents, name, description, groups), replace the contents,
// download, edit name, description and sharing groups, delete.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { FormEnd, useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { GroupPicker, groupNames, useShareableGroups } from '../components/groups'
import { ItemsPage } from '../components/items'
import { fileForm, UploadButton } from '../components/upload'
import { bytes, when } from '../components/view'

export interface UserFile {
  GUID: string
  ThingUUID: string
  UID: number
  GIDs: number[]
  Global: boolean
  Size: number
  Type: string
  Name: string
  Desc: string
  Labels: string[]
  Updated: string
}

export function FilesPage() {
  const files = useLoad(() => api.get<UserFile[]>('/api/files'), [])
  const groups = useShareableGroups()
  const action = useAction()
  const change = async (work: () => Promise<unknown>, done: string) => {
    await action.run(work, done)
    files.reload()
  }
  return (
    <ItemsPage
      id="files"
      title="Files"
      newLabel="New file"
      loaded={files}
      empty="No files yet."
      caption="Files"
      rowKey={(f) => f.ThingUUID}
      action={action}
      form={(file, done) => <FileForm file={file} groups={groups} onDone={done} />}
      columns={(edit) => [
        { title: 'Name', cell: (f) => f.Name },
        { title: 'Description', cell: (f) => f.Desc },
        { title: 'Type', cell: (f) => f.Type },
        { title: 'Size', cell: (f) => bytes(f.Size) },
        { title: 'Changed', cell: (f) => when(f.Updated) },
        { title: 'Shared with', cell: (f) => (f.Global ? 'everyone' : groupNames(f.GIDs, groups.value)) },
        {
          title: 'Actions',
          cell: (f) => (
            <div class="actions" role="group" aria-label={f.Name}>
              <UploadButton label="Replace contents" disabled={action.busy} onFile={(file) => change(() => api.post(path`/api/files/${f.ThingUUID}`, fileForm(file)), `${f.Name}: contents replaced.`)} />
              <a class="button" href={path`/api/files/${f.ThingUUID}`} download={f.Name}>
                Download
              </a>
              <button type="button" onClick={() => edit(f)}>
                Edit
              </button>
              <ConfirmButton label="Delete" question={`Delete ${f.Name}?`} onConfirm={() => change(() => api.delete(path`/api/files/${f.ThingUUID}`), `${f.Name} deleted.`)} />
            </div>
          ),
        },
      ]}
    />
  )
}

function FileForm({ file, groups, onDone }: { file?: UserFile; groups: ReturnType<typeof useShareableGroups>; onDone: (saved: boolean) => void }) {
  const [name, setName] = useState(file?.Name ?? '')
  const [desc, setDesc] = useState(file?.Desc ?? '')
  const [gids, setGids] = useState<number[]>(file?.GIDs ?? [])
  const [contents, setContents] = useState<File>()
  const action = useAction()
  async function submit(event: Event) {
    event.preventDefault()
    const ok = await action.run(async () => {
      if (file) return api.patch(path`/api/files/${file.ThingUUID}`, { Name: name, Desc: desc, GIDs: gids })
      if (!contents) throw new Error('choose the file to upload')
      return api.post('/api/files', fileForm(contents, { meta: JSON.stringify({ Name: name || contents.name, Desc: desc, GIDs: gids }) }))
    })
    if (ok) onDone(true)
  }
  const title = file ? `Edit ${file.Name}` : 'New file'
  return (
    <form class="stack panel" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      {!file && (
        <label>
          Contents
          <input type="file" required onChange={(e) => setContents(e.currentTarget.files?.[0])} />
        </label>
      )}
      <label>
        Name
        <input required={!!file} value={name} placeholder={file ? undefined : 'the file name'} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description
        <input value={desc} onInput={(e) => setDesc(e.currentTarget.value)} />
      </label>
      <GroupPicker legend="Share with groups" value={gids} onChange={setGids} groups={groups} />
      <FormEnd action={action} onCancel={() => onDone(false)} />
    </form>
  )
}
