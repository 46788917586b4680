// One dashboard (`/dashboards/:id`, `?edit=1` opens the editor): its tiles laid out by span, each drawing its
// search's result over the dashboard's time frame; Refresh runs the searches again.
import { useMemo, useState } from 'preact/hooks'
import { api, path } from '../api'
import { useAction } from '../components/action'
import { useLoad } from '../components/async'
import { ConfirmButton } from '../components/confirm'
import { LoadView } from '../components/view'
import { DashboardEditor } from '../dashboards/editor'
import { TileGrid } from '../dashboards/grid'
import { durationText, rangeOf, readData, type Dashboard, type Timeframe } from '../dashboards/model'
import { TileBody, useDashboardRuns } from '../dashboards/tiles'
import { TemplateValues } from '../dashboards/variables'
import { href, navigate } from '../router'
import { me } from '../session'
import type { PageProps } from './index'

function frameText(frame: Timeframe | undefined): string {
  const { start, end } = rangeOf(frame)
  if (frame?.timeframe === 'custom') return `${new Date(start).toLocaleString()} to ${new Date(end).toLocaleString()}`
  return `the last ${durationText(frame?.durationString ?? frame?.timeframe ?? 'PT1H')} (${new Date(start).toLocaleString()} to now)`
}

export function DashboardPage({ params, query }: PageProps) {
  const dashboard = useLoad(() => api.get<Dashboard>(path`/api/dashboards/${params.id!}`), [params.id])
  const editing = query.get('edit') === '1'
  return (
    <section aria-labelledby="dashboard-title">
      <p>
        <a href={href('/dashboards')}>All dashboards</a>
      </p>
      <LoadView loaded={dashboard} empty="">
        {(d) =>
          editing ? (
            <>
              <h1 id="dashboard-title">{`Edit ${d.Name}`}</h1>
              <DashboardEditor
                dashboard={d}
                data={readData(d.Data)}
                onSaved={() => {
                  dashboard.reload()
                  navigate(`/dashboards/${d.ID}`)
                }}
                onCancel={() => navigate(`/dashboards/${d.ID}`)}
              />
            </>
          ) : (
            <DashboardView dashboard={d} />
          )
        }
      </LoadView>
    </section>
  )
}

function DashboardView({ dashboard }: { dashboard: Dashboard }) {
  const who = me.value!
  const data = useMemo(() => readData(dashboard.Data), [dashboard])
  const [round, setRound] = useState(0)
  /** The template variables' values given on the page (none: each runs with its stored or default value). */
  const [values, setValues] = useState<Record<string, string>>({})
  const runs = useDashboardRuns(data, round, values)
  const action = useAction()
  const mayChange = dashboard.UID === who.UID || who.Admin
  return (
    <>
      <h1 id="dashboard-title">{dashboard.Name || `Dashboard ${dashboard.ID}`}</h1>
      {dashboard.Description && <p>{dashboard.Description}</p>}
      <div class="row">
        <p class="muted">{`Over ${frameText(data.timeframe)}`}</p>
        <button type="button" onClick={() => setRound(round + 1)}>
          Refresh
        </button>
        {mayChange && (
          <a class="button" href={href(`/dashboards/${dashboard.ID}`, { edit: '1' })}>
            Edit
          </a>
        )}
        {mayChange && (
          <ConfirmButton
            label="Delete"
            question={`Delete ${dashboard.Name}?`}
            onConfirm={async () => {
              if (await action.run(() => api.delete(path`/api/dashboards/${dashboard.ID}`))) navigate('/dashboards')
            }}
          />
        )}
      </div>
      <action.Feedback />
      <TemplateValues
        data={data}
        onRun={(given) => {
          setValues(given)
          setRound((r) => r + 1)
        }}
      />
      {data.tiles.length === 0 ? (
        <p class="muted">This dashboard has no tiles yet{mayChange ? ': edit it to add some.' : '.'}</p>
      ) : (
        <TileGrid tiles={data.tiles}>
          {(tile) => (
            <>
              <h2 class="tile-title">{tile.title}</h2>
              <TileBody tile={tile} run={runs[tile.searchesIndex]} />
            </>
          )}
        </TileGrid>
      )}
    </>
  )
}
