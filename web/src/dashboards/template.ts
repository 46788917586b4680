// Templates as the platform stores them (gravwell/js-client RawTemplate: `Contents.variables[]`, or the older single
// `Contents.variable`) and their queries filled with the variables' values. A variable's value is, first found: the
// value given on the dashboard page (an empty one included), the dashboard reference's `extras.defaultValue` (one per
// reference, from when templates had one variable: it fills the template's first variable), the template's own
// default; a required variable without any is refused with its label. Pure: no request, no DOM.
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

/** The variables of a template, in either of the shapes the platform has stored them. */
export function variablesOf(t: Template): TemplateVariable[] {
  const c = t.Contents ?? { query: '' }
  if (Array.isArray(c.variables)) return c.variables.filter((v) => typeof v?.name === 'string' && v.name !== '')
  if (typeof c.variable === 'string' && c.variable !== '')
    return [{ name: c.variable, label: c.variableLabel || c.variable, description: c.variableDescription ?? null, required: c.required === true }]
  return []
}

/** The value the template's variable `index` runs with (see the top of this file); undefined when there is none. */
export function valueOf(v: TemplateVariable, index: number, given: Record<string, string>, search: DashboardSearch): string | undefined {
  if (Object.hasOwn(given, v.name)) return given[v.name] || undefined
  const stored = index === 0 ? search.reference?.extras?.defaultValue : undefined
  for (const candidate of [stored, v.defaultValue]) if (typeof candidate === 'string' && candidate !== '') return candidate
  return undefined
}

/** The template's query with every variable replaced by its value (an optional one without a value: by nothing). */
export function fillTemplate(t: Template, given: Record<string, string>, search: DashboardSearch): string {
  let query = t.Contents?.query ?? ''
  for (const [i, v] of variablesOf(t).entries()) {
    const value = valueOf(v, i, given, search)
    if (value === undefined && v.required) throw new Error(`give a value for ${v.label || v.name} to run ${t.Name || 'this template'}`)
    query = query.split(v.name).join(value ?? '')
  }
  return query
}
