// Every module of the query language, by name: adding a module is its file and one line here.
import type { ModuleDef } from './module'
import { alias } from './modules/alias'
import { ax } from './modules/ax'
import { enrich } from './modules/enrich'
import { evalModule } from './modules/eval'
import { csv, fields } from './modules/fields'
import { first, last } from './modules/firstlast'
import { grep } from './modules/grep'
import { ip } from './modules/ip'
import { json } from './modules/json'
import { kv } from './modules/kv'
import { limit } from './modules/limit'
import { lookup } from './modules/lookup'
import { printf } from './modules/printf'
import { regex } from './modules/regex'
import { requireModule } from './modules/require'
import { sort } from './modules/sort'
import { loadAggregate } from './modules/stats/aggregates'
import { mathModules } from './modules/stats/math'
import { stats } from './modules/stats/stats'
import { syslog } from './modules/syslog'
import { time } from './modules/time'
import { unique } from './modules/unique'
import { lower, upper } from './modules/upperlower'
import { words } from './modules/words'
import { renderers } from './render'
import { registerAggregateLoader } from './render/records'

export const MODULES: readonly ModuleDef[] = [
  // extraction
  json,
  kv,
  fields,
  csv,
  syslog,
  regex,
  ax,
  // filtering and per-entry processing
  grep,
  words,
  requireModule,
  alias,
  upper,
  lower,
  ip,
  printf,
  enrich,
  time,
  evalModule,
  lookup,
  limit,
  // condensing
  stats,
  sort,
  unique,
  first,
  last,
  ...mathModules,
  // renderers
  ...renderers,
]

// Stored records of tables and charts hold the stats module's aggregates: loading them back is what lets a zoom merge windows.
registerAggregateLoader(loadAggregate)
