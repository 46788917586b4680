// The template variables of a dashboard whose searches reference templates (the platform's "investigative
// dashboard"): one field per variable, filled with the value it runs with now (the dashboard's stored value, else the
// template's default), its label and hint from the template. "Run with these values" runs the dashboard's searches
// again with the values given. Variables of the same name in several templates share one field, as they share one
// value. A template that cannot be read shows the API's refusal (its tiles show it too).
import { useEffect, useState } from 'preact/hooks'
import { useLoad } from '../components/async'
import { ErrorNote } from '../components/error'
import type { DashboardData } from './model'
import { getTemplate, type TemplateVariable, valueOf, variablesOf } from './references'

interface Field extends TemplateVariable {
  initial: string
}

/** The variables of the templates the dashboard's drawn searches reference, once per name, with their first value. */
async function fieldsOf(data: DashboardData): Promise<Field[]> {
  const fields = new Map<string, Field>()
  for (const [i, s] of data.searches.entries()) {
    if (s.reference?.type !== 'template' || !s.reference.id || !data.tiles.some((t) => t.searchesIndex === i)) continue
    const template = await getTemplate(s.reference.id)
    for (const [j, v] of variablesOf(template).entries()) if (!fields.has(v.name)) fields.set(v.name, { ...v, initial: valueOf(v, j, {}, s) ?? '' })
  }
  return [...fields.values()]
}

export function TemplateValues({ data, onRun }: { data: DashboardData; onRun: (values: Record<string, string>) => void }) {
  const hasTemplates = data.searches.some((s) => s.reference?.type === 'template')
  const loaded = useLoad(() => (hasTemplates ? fieldsOf(data) : Promise.resolve([])), [data])
  const [draft, setDraft] = useState<Record<string, string>>({})
  useEffect(() => setDraft(Object.fromEntries((loaded.value ?? []).map((f) => [f.name, f.initial]))), [loaded.value])
  if (!hasTemplates) return null
  if (loaded.error !== undefined) return <ErrorNote error={loaded.error} />
  const fields = loaded.value ?? []
  if (fields.length === 0) return null
  return (
    <form
      class="panel template-values"
      aria-label="Template values"
      onSubmit={(e) => {
        e.preventDefault()
        onRun(draft)
      }}
    >
      <div class="row">
        {fields.map((f) => (
          <label key={f.name}>
            {f.label || f.name}
            <input required={f.required === true} value={draft[f.name] ?? ''} onInput={(e) => setDraft({ ...draft, [f.name]: e.currentTarget.value })} />
            {f.description && <span class="muted">{f.description}</span>}
          </label>
        ))}
        <button type="submit">Run with these values</button>
      </div>
    </form>
  )
}
