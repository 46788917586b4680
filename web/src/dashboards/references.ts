// What a dashboard search's `reference` runs, read the way the platform's GUI reads it: a library entry
// (`savedQuery`: its Query), a template (`template`: its query with each variable replaced by its value) or a
// scheduled search (`scheduledSearch`: its SearchString). Templates and scheduled searches are the platform's
// objects (`GET /api/templates/{id}`, `GET /api/scheduledsearches`), in the shapes gravwell/js-client reads
// (RawTemplate, RawScheduledTask); a server without them answers with its refusal, which the tile shows.
//
// A template variable's value is, first found: the value given on the dashboard page, the reference's
// `extras.defaultValue` (what the dashboard stores for it), the template's own default. A required variable without
// any is refused with its label, before anything runs.
import { api, path } from '../api'
import type { LibraryEntry } from '../pages/library'
import type { DashboardSearch } from './model'

/** A template's variable (js-client TemplateVariable; older templates hold one, see `variablesOf`). */
export interface TemplateVariable {
  /** The text replaced in the query, `%%VAR%%` say. */
  name: string
  label: string
  /** The hint shown with the field. */
  description?: string | null
  required?: boolean
  defaultValue?: string | null
}

export interface Template {
  GUID: string
  Name: string
  Contents: {
    query: string
    variables?: TemplateVariable[]
    // the older shape: one variable
    variable?: string
    variableLabel?: string
    variableDescription?: string | null
    required?: boolean
  }
}

export interface ScheduledSearch {
  ID: number
  GUID: string
  Name: string
  SearchString: string
  Script?: string
}

/** The variables of a template, in either of the shapes the platform has stored them. */
export function variablesOf(t: Template): TemplateVariable[] {
  const c = t.Contents ?? { query: '' }
  if (Array.isArray(c.variables)) return c.variables.filter((v) => typeof v?.name === 'string' && v.name !== '')
  if (typeof c.variable === 'string' && c.variable !== '')
    return [{ name: c.variable, label: c.variableLabel || c.variable, description: c.variableDescription ?? null, required: c.required === true }]
  return []
}

/** The value a variable runs with (see the top of this file); undefined when there is none. */
export function valueOf(v: TemplateVariable, given: Record<string, string>, search: DashboardSearch): string | undefined {
  // a value given on the page wins, an empty one included (an optional variable left empty)
  if (Object.hasOwn(given, v.name)) return given[v.name] || undefined
  const stored = search.reference?.extras?.defaultValue
  for (const candidate of [stored, v.defaultValue]) if (typeof candidate === 'string' && candidate !== '') return candidate
  return undefined
}

/** The template's query with every variable replaced by its value (an optional one without a value: by nothing). */
export function fillTemplate(t: Template, given: Record<string, string>, search: DashboardSearch): string {
  let query = t.Contents?.query ?? ''
  for (const v of variablesOf(t)) {
    const value = valueOf(v, given, search)
    if (value === undefined && v.required) throw new Error(`give a value for ${v.label || v.name} to run ${t.Name || 'this template'}`)
    query = query.split(v.name).join(value ?? '')
  }
  return query
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
