// Editing one dashboard: its name, description, sharing, time frame, searches (by query, by a library entry, or by
// an existing search's ID) and tiles (title, renderer, search, span and position, renderer options as JSON), with
// the layout previewed as it will be drawn. Nothing is sent until Save, which PUTs the whole dashboard as fetched
// with the changes; keys of `Data` this editor does not know are written back unchanged.
import { useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { GroupPicker, useShareableGroups } from '../components/groups'
import type { LibraryEntry } from '../pages/library'
import { me } from '../session'
import { TileGrid } from './grid'
import { DEFAULT_TIMEFRAME, RENDERERS, searchLabel, type Dashboard, type DashboardData, type DashboardSearch, type Tile, type Timeframe } from './model'

const PRESETS: [string, string][] = [
  ['PT15M', 'Last 15 minutes'],
  ['PT1H', 'Last hour'],
  ['PT24H', 'Last 24 hours'],
  ['P7D', 'Last 7 days'],
  ['P30D', 'Last 30 days'],
]

type SourceKind = 'query' | 'library' | 'template' | 'scheduledSearch' | 'searchID'
function kindOf(s: DashboardSearch): SourceKind {
  if (s.reference) return s.reference.type === 'template' || s.reference.type === 'scheduledSearch' ? s.reference.type : 'library'
  return s.searchID !== undefined && s.searchID !== null && String(s.searchID) !== '' ? 'searchID' : 'query'
}

/** datetime-local text (local time) from an RFC 3339 time, and back. */
const toLocal = (t: string | null | undefined) => {
  if (!t || Number.isNaN(Date.parse(t))) return ''
  const d = new Date(t)
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}
const fromLocal = (t: string) => (t ? new Date(t).toISOString() : null)

export function DashboardEditor({ dashboard, data, onSaved, onCancel }: { dashboard: Dashboard; data: DashboardData; onSaved: () => void; onCancel: () => void }) {
  const who = me.value!
  const groups = useShareableGroups()
  const library = useLoad(() => api.get<LibraryEntry[]>('/api/library'), [])
  const [name, setName] = useState(dashboard.Name)
  const [description, setDescription] = useState(dashboard.Description)
  const [gids, setGids] = useState<number[]>(dashboard.GIDs ?? [])
  const [global, setGlobal] = useState(dashboard.Global)
  const [frame, setFrame] = useState<Timeframe>(data.timeframe ?? { ...DEFAULT_TIMEFRAME })
  const [searches, setSearches] = useState<DashboardSearch[]>(data.searches)
  const [tiles, setTiles] = useState<Tile[]>(data.tiles)
  const [optionTexts, setOptionTexts] = useState<Record<number, string>>(() => Object.fromEntries(data.tiles.map((t) => [t.id, JSON.stringify(t.rendererOptions)])))
  const action = useAction()
  const libraryNames = new Map((library.value ?? []).map((l) => [l.GUID, l.Name]))

  const custom = frame.timeframe === 'custom'
  const setSearch = (i: number, s: DashboardSearch) => setSearches(searches.map((x, j) => (j === i ? s : x)))
  const setTile = (i: number, t: Partial<Tile>) => setTiles(tiles.map((x, j) => (j === i ? { ...x, ...t } : x)))
  const setSpan = (i: number, key: 'col' | 'row' | 'x' | 'y', text: string) => {
    const span = { ...tiles[i]!.span }
    const n = Math.round(Number(text))
    if ((key === 'x' || key === 'y') && text.trim() === '') delete span[key]
    else if (Number.isFinite(n)) span[key] = key === 'col' || key === 'row' ? Math.min(48, Math.max(1, n)) : Math.min(96, Math.max(0, n))
    setTile(i, { span })
  }

  function removeSearch(i: number) {
    // tiles name searches by index: those after the removed one move up, those on it move to the first
    setSearches(searches.filter((_, j) => j !== i))
    setTiles(tiles.map((t) => ({ ...t, searchesIndex: t.searchesIndex === i ? 0 : t.searchesIndex > i ? t.searchesIndex - 1 : t.searchesIndex })))
  }
  function addTile() {
    const id = Math.max(0, ...tiles.map((t) => t.id)) + 1
    setTiles([...tiles, { id, title: `Tile ${id}`, renderer: 'table', span: { col: 6, row: 3 }, searchesIndex: 0, rendererOptions: {} }])
    setOptionTexts({ ...optionTexts, [id]: '{}' })
  }

  async function save(event: Event) {
    event.preventDefault()
    await action.run(async () => {
      const finalTiles = tiles.map((t) => {
        let options: unknown
        try {
          options = JSON.parse(optionTexts[t.id] ?? '{}')
        } catch {
          options = undefined
        }
        if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new Error(`${t.title || `Tile ${t.id}`}: the renderer options must be a JSON object`)
        return { ...t, rendererOptions: options as Record<string, unknown> }
      })
      const body: DashboardData = { ...data, version: data.version ?? 2, timeframe: frame, searches, tiles: finalTiles }
      await api.put(path`/api/dashboards/${dashboard.ID}`, { ...dashboard, Name: name, Description: description, GIDs: gids, Global: global, Data: body })
      onSaved()
    })
  }

  return (
    <form class="editor" onSubmit={save} aria-label={`Edit ${dashboard.Name}`}>
      <div class="stack">
        <h2>Details</h2>
        <label>
          Name
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <GroupPicker legend="Share with groups" value={gids} onChange={setGids} groups={groups} />
        {who.Admin && (
          <label class="check">
            <input type="checkbox" checked={global} onChange={(e) => setGlobal(e.currentTarget.checked)} />
            Global (every user sees it)
          </label>
        )}
        <label>
          Time frame
          <select
            value={custom ? 'custom' : (frame.durationString ?? frame.timeframe ?? 'PT1H')}
            onChange={(e) => {
              const v = e.currentTarget.value
              setFrame(v === 'custom' ? { durationString: null, timeframe: 'custom', start: frame.start ?? new Date(Date.now() - 3_600_000).toISOString(), end: frame.end ?? new Date().toISOString() } : { durationString: v, timeframe: v, start: null, end: null })
            }}
          >
            {PRESETS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
            {!custom && frame.durationString && !PRESETS.some(([v]) => v === frame.durationString) && <option value={frame.durationString}>{frame.durationString}</option>}
            <option value="custom">From … to …</option>
          </select>
        </label>
        {custom && (
          <div class="row">
            <label>
              From
              <input type="datetime-local" required value={toLocal(frame.start)} onInput={(e) => setFrame({ ...frame, start: fromLocal(e.currentTarget.value) })} />
            </label>
            <label>
              To
              <input type="datetime-local" required value={toLocal(frame.end)} onInput={(e) => setFrame({ ...frame, end: fromLocal(e.currentTarget.value) })} />
            </label>
          </div>
        )}
      </div>

      <h2>Searches</h2>
      {searches.length === 0 && <p class="muted">No searches yet: add one, then tiles that draw it.</p>}
      {searches.map((s, i) => {
        const kind = kindOf(s)
        const n = i + 1
        return (
          <fieldset key={i} class="panel search-editor">
            <legend>{`Search ${n}`}</legend>
            <div class="row">
              <label>
                {`Search ${n} name`}
                <input value={s.alias ?? ''} onInput={(e) => setSearch(i, { ...s, alias: e.currentTarget.value || null })} />
              </label>
              <label>
                {`Search ${n} runs`}
                <select
                  value={kind}
                  onChange={(e) => {
                    const k = e.currentTarget.value as SourceKind
                    const { reference: _r, searchID: _s, query: _q, ...rest } = s
                    setSearch(
                      i,
                      k === 'query'
                        ? { ...rest, query: s.query ?? '' }
                        : k === 'library'
                          ? { ...rest, reference: { id: library.value?.[0]?.GUID ?? '', type: 'savedQuery' } }
                          : k === 'template' || k === 'scheduledSearch'
                            ? { ...rest, reference: { id: '', type: k } }
                            : { ...rest, searchID: '' },
                    )
                  }}
                >
                  <option value="query">a query</option>
                  <option value="library">a library query</option>
                  <option value="template">a template</option>
                  <option value="scheduledSearch">a scheduled search</option>
                  <option value="searchID">an existing search</option>
                </select>
              </label>
              <button type="button" class="danger" onClick={() => removeSearch(i)}>
                {`Remove search ${n}`}
              </button>
            </div>
            {kind === 'query' && (
              <label>
                {`Search ${n} query`}
                <textarea rows={2} required value={s.query ?? ''} onInput={(e) => setSearch(i, { ...s, query: e.currentTarget.value })} />
              </label>
            )}
            {kind === 'library' && (
              <label>
                {`Search ${n} library query`}
                <select required value={s.reference?.id ?? ''} onChange={(e) => setSearch(i, { ...s, reference: { id: e.currentTarget.value, type: 'savedQuery' } })}>
                  <option value="">Choose…</option>
                  {s.reference?.id && !library.value?.some((l) => l.GUID === s.reference!.id) && <option value={s.reference.id}>{s.reference.id}</option>}
                  {(library.value ?? []).map((l) => (
                    <option key={l.ThingUUID} value={l.GUID}>
                      {l.Name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            {(kind === 'template' || kind === 'scheduledSearch') && (
              <div class="row">
                <label>
                  {`Search ${n} ${kind === 'template' ? 'template' : 'scheduled search'} ID`}
                  <input required value={s.reference?.id ?? ''} onInput={(e) => setSearch(i, { ...s, reference: { ...s.reference!, id: e.currentTarget.value.trim() } })} />
                </label>
                {kind === 'template' && (
                  <label>
                    {`Search ${n} variable value`}
                    <input
                      value={s.reference?.extras?.defaultValue ?? ''}
                      onInput={(e) => setSearch(i, { ...s, reference: { ...s.reference!, extras: { ...s.reference?.extras, defaultValue: e.currentTarget.value || null } } })}
                    />
                  </label>
                )}
              </div>
            )}
            {kind === 'searchID' && (
              <label>
                {`Search ${n} search ID`}
                <input required inputMode="numeric" pattern="[0-9]+" value={String(s.searchID ?? '')} onInput={(e) => setSearch(i, { ...s, searchID: e.currentTarget.value })} />
              </label>
            )}
          </fieldset>
        )
      })}
      <button type="button" onClick={() => setSearches([...searches, { alias: null, query: '' }])}>
        Add search
      </button>

      <h2>Tiles</h2>
      {tiles.length === 0 && <p class="muted">No tiles yet.</p>}
      {tiles.map((t, i) => {
        const n = i + 1
        return (
          <fieldset key={t.id} class="panel">
            <legend>{`Tile ${n}: ${t.title}`}</legend>
            <div class="tile-editor">
              <label class="full">
                {`Tile ${n} title`}
                <input value={t.title} onInput={(e) => setTile(i, { title: e.currentTarget.value })} />
              </label>
              <label>
                {`Tile ${n} renderer`}
                <select value={t.renderer} onChange={(e) => setTile(i, { renderer: e.currentTarget.value })}>
                  {!(RENDERERS as readonly string[]).includes(t.renderer) && <option value={t.renderer}>{t.renderer}</option>}
                  {RENDERERS.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                {`Tile ${n} search`}
                <select value={String(t.searchesIndex)} onChange={(e) => setTile(i, { searchesIndex: Number(e.currentTarget.value) })}>
                  {searches.map((s, j) => (
                    <option key={j} value={String(j)}>
                      {`${j + 1}: ${searchLabel(s, j, libraryNames)}`}
                    </option>
                  ))}
                  {t.searchesIndex >= searches.length && <option value={String(t.searchesIndex)}>{`${t.searchesIndex + 1}: missing`}</option>}
                </select>
              </label>
              <label>
                {`Tile ${n} width`}
                <input type="number" min={1} max={48} value={t.span.col} onInput={(e) => setSpan(i, 'col', e.currentTarget.value)} />
              </label>
              <label>
                {`Tile ${n} height`}
                <input type="number" min={1} max={48} value={t.span.row} onInput={(e) => setSpan(i, 'row', e.currentTarget.value)} />
              </label>
              <label>
                {`Tile ${n} column`}
                <input type="number" min={0} max={96} placeholder="auto" value={t.span.x ?? ''} onInput={(e) => setSpan(i, 'x', e.currentTarget.value)} />
              </label>
              <label>
                {`Tile ${n} row`}
                <input type="number" min={0} max={96} placeholder="auto" value={t.span.y ?? ''} onInput={(e) => setSpan(i, 'y', e.currentTarget.value)} />
              </label>
              <label class="full">
                {`Tile ${n} options (JSON)`}
                <textarea rows={2} value={optionTexts[t.id] ?? '{}'} onInput={(e) => setOptionTexts({ ...optionTexts, [t.id]: e.currentTarget.value })} />
              </label>
              <div class="full">
                <button type="button" class="danger" onClick={() => setTiles(tiles.filter((_, j) => j !== i))}>
                  {`Remove tile ${n}`}
                </button>
              </div>
            </div>
          </fieldset>
        )
      })}
      <button type="button" onClick={addTile} disabled={searches.length === 0}>
        Add tile
      </button>

      <h2>Layout</h2>
      {tiles.length > 0 ? (
        <TileGrid tiles={tiles}>
          {(t) => (
            <>
              <h3 class="tile-title">{t.title}</h3>
              <p class="muted">{`${t.renderer} · ${searchLabel(searches[t.searchesIndex], t.searchesIndex, libraryNames)}`}</p>
            </>
          )}
        </TileGrid>
      ) : (
        <p class="muted">Tiles show here as they will be laid out.</p>
      )}

      <div class="row sticky-actions">
        <button type="submit" disabled={action.busy}>
          Save dashboard
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <action.Feedback />
    </form>
  )
}
