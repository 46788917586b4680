// Running a dashboard's searches and drawing its tiles: each search some tile draws runs once (launched over the
// dashboard's time frame, or its own; attached when it names an existing search; a reference runs the query of the
// library entry, template or scheduled search it names: references.ts), and every tile on it draws its latest result
// with the tile's renderer and options. Leaving the dashboard (or running it again) closes every search it started,
// so none outlives the view.
import { useEffect, useState } from 'preact/hooks'
import { ErrorNote } from '../components/error'
import { ResultView } from '../render/result'
import type { RendererOptions } from '../render/options'
import { LiveSearch } from '../search/live'
import { referencedQuery } from './references'
import { hasOwnFrame, rangeOf, type DashboardData, type DashboardSearch, type Tile } from './model'

/** What a dashboard search runs: a query to launch, or an existing search to attach to. */
export type SearchSource = { query: string } | { searchID: string }

/**
 * Resolves a dashboard search: its query, its search ID, or the query of what it references (templates filled with
 * `values`, the template variables' values given on the page).
 */
export async function sourceOf(s: DashboardSearch, values: Record<string, string> = {}): Promise<SearchSource> {
  if (s.reference?.id) return { query: await referencedQuery(s, values) }
  if (s.searchID !== undefined && s.searchID !== null && String(s.searchID) !== '' && String(s.searchID) !== '0') return { searchID: String(s.searchID) }
  if (s.query && s.query.trim()) return { query: s.query }
  throw new Error('this search names no query, search ID or library entry')
}

export interface Run {
  live?: LiveSearch
  error?: unknown
}

/** The runs of `data`'s searches (index for index); `round` changes to run them all again, with `values`. */
export function useDashboardRuns(data: DashboardData, round: number, values: Record<string, string> = {}): Run[] {
  const [runs, setRuns] = useState<Run[]>([])
  useEffect(() => {
    let current = true
    const started: LiveSearch[] = []
    const frame = rangeOf(data.timeframe)
    setRuns(data.searches.map(() => ({})))
    data.searches.forEach(async (s, i) => {
      if (!data.tiles.some((t) => t.searchesIndex === i)) return
      const settle = (run: Run) => current && setRuns((rs) => rs.map((r, j) => (j === i ? run : r)))
      try {
        const source = await sourceOf(s, values)
        if (!current) return
        const range = hasOwnFrame(s) ? rangeOf(s.timeframe) : frame
        const live = 'searchID' in source ? LiveSearch.attach(source.searchID) : LiveSearch.start({ query: source.query, start: range.start, end: range.end })
        started.push(live)
        // The socket's answer may say Finished while carrying entries read just before the end (plugins/ws reads
        // them, then the state): one more read once finished draws the whole result.
        let reread = false
        const unsubscribe = live.state.subscribe((state) => {
          if (!state.finished || reread) return
          reread = true
          queueMicrotask(() => {
            unsubscribe()
            live.refresh()
          })
        })
        settle({ live })
      } catch (error) {
        settle({ error })
      }
    })
    return () => {
      current = false
      for (const live of started) live.close()
    }
  }, [data, round])
  return runs
}

export function TileBody({ tile, run }: { tile: Tile; run: Run | undefined }) {
  if (!run) return <p class="muted">This tile names no search of the dashboard.</p>
  if (run.error !== undefined) return <ErrorNote error={run.error} />
  if (!run.live)
    return (
      <p role="status" class="muted">
        Starting…
      </p>
    )
  const state = run.live.state.value
  const result = run.live.result.value
  return (
    <div class="tile-body" data-search-id={state.id} data-finished={state.finished ? 'yes' : 'no'}>
      {state.error ? <ErrorNote error={state.error} /> : <ResultView renderer={tile.renderer} result={result} options={tile.rendererOptions as RendererOptions} />}
    </div>
  )
}
