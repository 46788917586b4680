// What a dashboard search's `reference` runs, read the way the platform's GUI reads it: a library entry
// (`savedQuery`: its Query), a template (`template`: its query with each variable replaced by its value) or a
// scheduled search (`scheduledSearch`: its SearchString). Templates and scheduled searches are the platform's
// objects (`GET /api/templates/{id}`, `GET /api/scheduledsearches`), in the shapes gravwell/js-client reads
// (RawTemplate, RawScheduledTask); a server without them answers with its refusal, which the tile shows.
//
// Templates are filled as template.ts says: a required variable without a value is refused before anything runs.
import { api, path } from '../api'
import type { LibraryEntry } from '../pages/library'
import type { DashboardSearch } from './model'
import { fillTemplate, type Template } from './template'

export { fillTemplate, valueOf, variablesOf, type Template, type TemplateVariable } from './template'

export interface ScheduledSearch {
  ID: number
  GUID: string
  Name: string
  SearchString: string
  Script?: string
}

export const getTemplate = (id: string) => api.get<Template>(path`/api/templates/${id}`)

/** A scheduled search by its ID or its GUID (a dashboard's reference names the GUID). */
export async function getScheduledSearch(id: string): Promise<ScheduledSearch> {
  if (/^\d+$/.test(id)) return api.get<ScheduledSearch>(path`/api/scheduledsearches/${id}`)
  const all = await api.get<ScheduledSearch[] | null>('/api/scheduledsearches')
  const found = (all ?? []).find((s) => s.GUID === id)
  if (!found) throw new Error(`no scheduled search ${id} is visible to you`)
  return found
}

/** The query a dashboard search's reference runs. */
export async function referencedQuery(s: DashboardSearch, given: Record<string, string>): Promise<string> {
  const ref = s.reference!
  switch (ref.type) {
    case 'savedQuery':
      return (await api.get<LibraryEntry>(path`/api/library/${ref.id}`)).Query
    case 'template':
      return fillTemplate(await getTemplate(ref.id), given, s)
    case 'scheduledSearch': {
      const scheduled = await getScheduledSearch(ref.id)
      if (!scheduled.SearchString?.trim()) throw new Error(`the scheduled search ${scheduled.Name || ref.id} runs a script, not a query`)
      return scheduled.SearchString
    }
    default:
      throw new Error(`a reference of type ${String((ref as { type: unknown }).type)} cannot be run`)
  }
}
