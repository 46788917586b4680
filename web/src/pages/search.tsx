// The search page (`#/search?q=<query>&start=<-1h | RFC 3339>&end=<RFC 3339>`): a query editor checked as you type
// (the parse exchange; the error shown under the query with a mark at its position), suggestions of modules and of
// the values the engine names, a time range (relative presets or absolute), and the search's progress and result
// by renderer, with the overview histogram and its zoom, background/save/stop/delete and the renderer's downloads.
// A link with `q` runs its query when opened, one with `id` attaches to that search; running a query puts it and
// its range in the URL.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, path } from '../api'
import { ErrorNote } from '../components/error'
import { CHART_KINDS } from '../render/chart'
import type { RendererOptions } from '../render/options'
import { OverviewChart } from '../render/overview'
import { ResultView } from '../render/result'
import { href } from '../router'
import { ENTRY_RENDERERS, LiveSearch, type ModuleHint, type ParseResult, parse } from '../search/live'
import { PRESETS, fromLocalInput, resolveRange, showTime, toLocalInput } from '../search/range'
import type { PageProps } from './index'

/** The query is checked this long after the last keystroke. */
const PARSE_DELAY_MS = 300
const MAX_SUGGESTIONS = 8

interface ModuleInfo {
  Name: string
  Info?: string
  Description?: string
}

interface Suggestion {
  text: string
  note?: string
}

/** The word being typed at the cursor, where it starts, and whether a module name belongs there (after `|`). */
function wordAt(text: string, cursor: number): { word: string; from: number; module: boolean } {
  const before = text.slice(0, cursor)
  const m = /[A-Za-z0-9_.\-]*$/.exec(before)!
  const from = cursor - m[0].length
  const module = /\|\s*$/.test(text.slice(0, from))
  return { word: m[0], from, module }
}

function suggestionsFor(text: string, cursor: number, modules: ModuleInfo[], hints: ModuleHint[]): { list: Suggestion[]; from: number } {
  const { word, from, module } = wordAt(text, cursor)
  if (word.length === 0 && !module) return { list: [], from }
  const lower = word.toLowerCase()
  let list: Suggestion[]
  if (module) list = modules.filter((m) => m.Name.startsWith(lower)).map((m) => ({ text: m.Name, note: m.Info ?? m.Description }))
  else {
    const values = [...new Set(hints.flatMap((h) => h.ProducedEVs))]
    list = values.filter((v) => v.toLowerCase().startsWith(lower) && v !== word).map((v) => ({ text: v, note: 'value' }))
  }
  return { list: list.slice(0, MAX_SUGGESTIONS), from }
}

/** The time range field's choice for a link's range: its preset, or two times. */
const rangeChoiceOf = (start: string, end: string) => (!end && PRESETS.some((p) => p.value === start) ? start : 'custom')

/** The query with a mark under the character at `position` (the parse error's place). */
function ErrorMark({ query, position }: { query: string; position: number }) {
  const lineStart = query.lastIndexOf('\n', position - 1) + 1
  const lineEnd = query.indexOf('\n', position)
  const line = query.slice(lineStart, lineEnd === -1 ? undefined : lineEnd)
  const column = position - lineStart
  return (
    <pre class="error-mark" aria-hidden="true">
      {line}
      {'\n'}
      {' '.repeat(Math.max(0, column))}^
    </pre>
  )
}

export function SearchPage({ query: params }: PageProps) {
  const linkQuery = params.get('q') ?? ''
  /** `id`: the page attaches to that search (one of the caller's, or shared with them) instead of running a query. */
  const linkSearch = params.get('id') ?? ''
  const linkStart = params.get('start') ?? '-1h'
  const linkEnd = params.get('end') ?? ''

  const [text, setText] = useState(linkQuery)
  const [rangeChoice, setRangeChoice] = useState(rangeChoiceOf(linkStart, linkEnd))
  const initial = resolveRange(linkStart, linkEnd || undefined) ?? resolveRange('-1h', undefined)!
  const [from, setFrom] = useState(toLocalInput(initial.start))
  const [to, setTo] = useState(toLocalInput(initial.end))
  const [checked, setChecked] = useState<ParseResult | undefined>()
  const [hints, setHints] = useState<ModuleHint[]>([])
  const [cursor, setCursor] = useState(0)
  const [modules, setModules] = useState<ModuleInfo[]>([])
  const [live, setLive] = useState<LiveSearch | undefined>()
  const [runs, setRuns] = useState(0)
  const [error, setError] = useState<unknown>()
  const editor = useRef<HTMLTextAreaElement>(null)
  const parseRound = useRef(0)

  // the modules a query may name, for the suggestions
  useEffect(() => {
    Promise.all([api.get<ModuleInfo[]>('/api/info/searchmodules'), api.get<ModuleInfo[]>('/api/info/rendermodules')]).then(
      ([s, r]) => setModules([...s, ...r]),
      (e: unknown) => setError(e),
    )
  }, [])

  // the query checked as it is typed (the latest answer wins)
  useEffect(() => {
    if (!text.trim()) {
      setChecked(undefined)
      return
    }
    const round = ++parseRound.current
    const timer = setTimeout(() => {
      parse(text).then(
        (r) => {
          if (round !== parseRound.current) return
          setChecked(r)
          if (r.good) setHints(r.moduleHints)
        },
        (e: unknown) => round === parseRound.current && setChecked({ good: false, error: e instanceof Error ? e.message : String(e), moduleIndex: 0, moduleHints: [], tags: [], parsedQuery: text }),
      )
    }, PARSE_DELAY_MS)
    return () => clearTimeout(timer)
  }, [text])

  // a link's query runs when the page opens with it (or the link changes)
  useEffect(() => {
    if (!linkQuery || linkSearch) return
    setText(linkQuery)
    const r = resolveRange(linkStart, linkEnd || undefined)
    if (!r) {
      setError(new Error('the link\'s time range cannot be read'))
      return
    }
    // the fields show the link's range
    setRangeChoice(rangeChoiceOf(linkStart, linkEnd))
    setFrom(toLocalInput(r.start))
    setTo(toLocalInput(r.end))
    launch(linkQuery, r.start, r.end)
  }, [linkQuery, linkStart, linkEnd, linkSearch])

  // a link to a search attaches to it; its query is shown in the editor once known
  useEffect(() => {
    if (!linkSearch) return
    setError(undefined)
    const attached = LiveSearch.attach(linkSearch)
    setLive(attached)
    setRuns((n) => n + 1)
    const shown = attached.state.subscribe((st) => st.query && setText((t) => t || st.query))
    return shown
  }, [linkSearch])

  // the page's search is let go when the page closes
  useEffect(() => () => live?.close(), [live])

  function launch(query: string, start: number, end: number) {
    setError(undefined)
    setLive(LiveSearch.start({ query, start, end }))
    setRuns((n) => n + 1)
  }

  function run(event: Event) {
    event.preventDefault()
    const query = text.trim()
    if (!query) return setError(new Error('type a query first'))
    let start: string
    let end: string | undefined
    if (rangeChoice === 'custom') {
      const a = fromLocalInput(from)
      const b = fromLocalInput(to)
      if (!a || !b) return setError(new Error('give both ends of the time range'))
      start = a
      end = b
    } else start = rangeChoice
    const r = resolveRange(start, end)
    if (!r) return setError(new Error('the time range must start before it ends'))
    history.replaceState(null, '', href('/search', { q: query, start, end }))
    launch(query, r.start, r.end)
  }

  const suggestions = useMemo(() => suggestionsFor(text, cursor, modules, hints), [text, cursor, modules, hints])

  function insert(s: Suggestion) {
    const { word } = wordAt(text, cursor)
    const next = text.slice(0, suggestions.from) + s.text + text.slice(suggestions.from + word.length)
    const at = suggestions.from + s.text.length
    setText(next)
    setCursor(at)
    requestAnimationFrame(() => {
      editor.current?.focus()
      editor.current?.setSelectionRange(at, at)
    })
  }

  const bad = checked && !checked.good && text.trim() !== ''
  return (
    <section aria-labelledby="search-title" class="search-page">
      <h1 id="search-title">Search</h1>
      <form onSubmit={run} class="search-form" aria-label="Search">
        <label for="query">Query</label>
        <textarea
          id="query"
          ref={editor}
          rows={3}
          spellcheck={false}
          autoComplete="off"
          value={text}
          aria-invalid={bad ? true : undefined}
          aria-describedby={bad ? 'query-error' : undefined}
          onInput={(e) => {
            setText(e.currentTarget.value)
            setCursor(e.currentTarget.selectionStart)
          }}
          onKeyUp={(e) => setCursor(e.currentTarget.selectionStart)}
          onClick={(e) => setCursor(e.currentTarget.selectionStart)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) run(e)
          }}
        />
        {bad && (
          <div id="query-error" class="error query-error" role="alert" data-position={checked.position}>
            <span>{checked.error}</span>
            {checked.position !== undefined && <ErrorMark query={text} position={checked.position} />}
          </div>
        )}
        {suggestions.list.length > 0 && (
          <ul class="suggestions" aria-label="Suggestions">
            {suggestions.list.map((s) => (
              <li key={s.text}>
                <button type="button" onClick={() => insert(s)} title={s.note}>
                  {s.text}
                </button>
                {s.note && <span class="muted"> {s.note.length > 80 ? `${s.note.slice(0, 80)}…` : s.note}</span>}
              </li>
            ))}
          </ul>
        )}
        <div class="row">
          <label>
            Time range
            <select value={rangeChoice} onChange={(e) => setRangeChoice(e.currentTarget.value)}>
              {PRESETS.map((p) => (
                <option key={p.value} value={p.value}>
                  {p.label}
                </option>
              ))}
              <option value="custom">Between two times</option>
            </select>
          </label>
          {rangeChoice === 'custom' && (
            <>
              <label>
                From
                <input type="datetime-local" step={1} value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
              </label>
              <label>
                To
                <input type="datetime-local" step={1} value={to} onInput={(e) => setTo(e.currentTarget.value)} />
              </label>
            </>
          )}
          <button type="submit">Run</button>
        </div>
      </form>
      <ErrorNote error={error} />
      {live ? <SearchResult key={runs} live={live} onDeleted={() => setLive(undefined)} /> : <p class="muted">Type a query and run it.</p>}
    </section>
  )
}

/** The search's progress, controls, overview and result. */
function SearchResult({ live, onDeleted }: { live: LiveSearch; onDeleted: () => void }) {
  const s = live.state.value
  const result = live.result.value
  const overview = live.stats.value
  const info = live.info.value
  const [note, setNote] = useState<string>()
  const [error, setError] = useState<unknown>()
  const [kind, setKind] = useState('line')
  const [chartOptions, setChartOptions] = useState<RendererOptions>({})
  /** Set once this page's Stop was accepted while the search ran: the status then says stopped, not finished. */
  const [stopped, setStopped] = useState(false)

  async function act(what: 'background' | 'save' | 'stop' | 'delete') {
    setNote(undefined)
    setError(undefined)
    try {
      if (what === 'background') await api.patch(path`/api/searchctrl/${s.id}/background`)
      if (what === 'save') await api.patch(path`/api/searchctrl/${s.id}/save`)
      if (what === 'stop') {
        const running = !live.state.value.finished
        await api.put(path`/api/searchctrl/${s.id}/stop`)
        if (running) setStopped(true)
      }
      if (what === 'delete') {
        await api.delete(path`/api/searchctrl/${s.id}`)
        live.close()
        onDeleted()
        return
      }
      live.refresh()
      const now = await live.details()
      setNote(`${what === 'background' ? 'Backgrounded' : what === 'save' ? 'Saved' : 'Stopped'}${now ? `: ${now.State}` : ''}.`)
    } catch (e) {
      setError(e)
    }
  }

  /** The keyboard's zoom: the middle half of the window shown (the drag's, for those who cannot drag). */
  function zoomIn() {
    const w = s.window ?? { start: s.start, end: s.end }
    const quarter = (w.end - w.start) / 4
    live.zoom(w.start + quarter, w.end - quarter)
  }

  const entriesRenderer = ENTRY_RENDERERS.has(s.renderer)
  const page = s.page
  const size = page.last - page.first
  const shownRenderer = s.renderer === 'chart' ? kind : s.renderer

  return (
    <div class="search-result">
      <div class="row status-row">
        {s.error ? (
          <p class="error" role="alert">
            {s.error}
          </p>
        ) : !s.id ? (
          <p role="status">Starting…</p>
        ) : s.finished ? (
          <p role="status" class="search-status">
            {stopped ? 'Stopped' : 'Finished'}: {s.entries.toLocaleString('en-US')} results
          </p>
        ) : (
          <p role="status" class="search-status">
            <progress aria-label="Search progress" /> {stopped ? 'Stopping' : 'Running'}: {s.entries.toLocaleString('en-US')} results so far
          </p>
        )}
      </div>
      {s.id && (
        <div class="row actions">
          <span class="muted">Search {s.id}{info ? ` · ${info.State}` : ''}</span>
          <button type="button" onClick={() => act('background')}>
            Background
          </button>
          <button type="button" onClick={() => act('save')}>
            Save
          </button>
          <button type="button" onClick={() => act('stop')} disabled={/\b(SAVED|DORMANT)\b/.test(info?.State ?? '')}>
            Stop
          </button>
          <button type="button" class="danger" onClick={() => act('delete')}>
            Delete
          </button>
          {info?.RenderDownloadFormats?.map((f) => (
            <a key={f} class="download" href={path`/api/searchctrl/${s.id}/download/${f}`} download>
              Download {f}
            </a>
          ))}
        </div>
      )}
      {note && <p role="status">{note}</p>}
      <ErrorNote error={error} />
      {overview && s.id && (
        <div class="overview-box">
          <div class="row">
            <h2 class="overview-title">Overview</h2>
            <button type="button" onClick={zoomIn} title="Zoom in on the middle half of the window shown">
              Zoom in
            </button>
            {s.window ? (
              <>
                <span class="zoom-window">
                  {showTime(s.window.start)} to {showTime(s.window.end)}
                </span>
                <button type="button" onClick={() => live.zoom(null, null)}>
                  Whole range
                </button>
              </>
            ) : (
              <span class="muted">
                {showTime(s.start)} to {showTime(s.end)} · drag or click to zoom
              </span>
            )}
          </div>
          <OverviewChart overview={overview} window={s.window} onZoom={(a, b) => live.zoom(a, b)} />
        </div>
      )}
      {s.id && !s.error && (
        <>
          {s.renderer === 'chart' && (
            <label class="inline">
              Draw as
              <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
                {CHART_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            </label>
          )}
          {s.renderer === 'chart' && <ChartOptions options={chartOptions} onChange={setChartOptions} />}
          <div class="result" data-renderer={s.renderer}>
            <ResultView renderer={shownRenderer} result={result} options={s.renderer === 'chart' ? chartOptions : undefined} />
          </div>
          {entriesRenderer && result && (page.first > 0 || result.AdditionalEntries) && (
            <div class="row pager">
              <button type="button" disabled={page.first === 0} onClick={() => live.setPage(Math.max(0, page.first - size), page.first)}>
                Previous {size}
              </button>
              <span class="muted">
                Entries {page.first + 1} to {page.first + (Array.isArray(result.Entries) ? result.Entries.length : 0)}
              </span>
              <button type="button" disabled={!result.AdditionalEntries} onClick={() => live.setPage(page.last, page.last + size)}>
                Next {size}
              </button>
            </div>
          )}
        </>
      )}
    </div>
  )
}

/** The chart's options a person may change here (the rendererOptions a dashboard tile stores). */
const CHART_SWITCHES: { label: string; key: keyof RendererOptions; on: string; off?: string }[] = [
  { label: 'Stacked', key: 'Stack', on: 'stacked', off: 'grouped' },
  { label: 'Smooth lines', key: 'Smoothing', on: 'smooth', off: 'normal' },
  { label: 'Connect gaps', key: 'ConnectNulls', on: 'yes', off: 'no' },
  { label: 'Logarithmic scale', key: 'LogScale', on: 'yes', off: 'no' },
  { label: 'Horizontal bars', key: 'Orientation', on: 'h', off: 'v' },
  { label: 'Leave out "other"', key: 'IncludeOther', on: 'no', off: 'yes' },
]

function ChartOptions({ options, onChange }: { options: RendererOptions; onChange: (o: RendererOptions) => void }) {
  return (
    <details class="chart-options">
      <summary>Chart options</summary>
      <fieldset>
        <legend class="muted">Chart options</legend>
        {CHART_SWITCHES.map((c) => (
          <label key={c.key} class="check">
            <input type="checkbox" checked={options[c.key] === c.on} onChange={(e) => onChange({ ...options, [c.key]: e.currentTarget.checked ? c.on : c.off })} />
            {c.label}
          </label>
        ))}
      </fieldset>
    </details>
  )
}
