// Choosing groups to share an item with: the groups the caller may name (an admin: every group; anyone else: their
// own, since the API refuses sharing with a group one is not in), as labelled checkboxes in a fieldset.
import { api } from '../api'
import { me } from '../session'
import { useLoad } from './async'
import { ErrorNote } from './error'

export interface Group {
  GID: number
  Name: string
  Desc: string
}

/** The groups the signed-in person may share with, loaded once per view. */
export function useShareableGroups() {
  const who = me.value
  return useLoad<Group[]>(async () => {
    if (who?.Admin) return api.get<Group[]>('/api/groups')
    return (who?.Groups ?? []).map((g) => ({ GID: g.GID, Name: g.Name, Desc: '' }))
  }, [who?.UID])
}

export function GroupPicker({ legend, value, onChange, groups }: { legend: string; value: number[]; onChange: (gids: number[]) => void; groups: ReturnType<typeof useShareableGroups> }) {
  const list = groups.value ?? []
  return (
    <fieldset class="groups">
      <legend>{legend}</legend>
      <ErrorNote error={groups.error} />
      {groups.value && list.length === 0 && <p class="muted">You belong to no group.</p>}
      {list.map((g) => (
        <label key={g.GID} class="check">
          <input
            type="checkbox"
            checked={value.includes(g.GID)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...value, g.GID] : value.filter((x) => x !== g.GID))}
          />
          {g.Name}
        </label>
      ))}
    </fieldset>
  )
}

/** Group ids as names where the caller knows them (`#7` otherwise). */
export function groupNames(gids: number[] | null | undefined, groups: Group[] | undefined): string {
  if (!gids?.length) return '—'
  return gids.map((gid) => groups?.find((g) => g.GID === gid)?.Name ?? `#${gid}`).join(', ')
}
