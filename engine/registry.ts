// Every module of the query language, by name: adding a module is its file and one line here.
import type { ModuleDef } from './module'
import { alias } from './modules/alias'
import { count } from './modules/count'
import { csv, fields } from './modules/fields'
import { grep } from './modules/grep'
import { limit } from './modules/limit'
import { ip } from './modules/ip'
import { json } from './modules/json'
import { kv } from './modules/kv'
import { printf } from './modules/printf'
import { regex } from './modules/regex'
import { requireModule } from './modules/require'
import { syslog } from './modules/syslog'
import { lower, upper } from './modules/upperlower'
import { words } from './modules/words'
import { renderers } from './render'

export const MODULES: readonly ModuleDef[] = [grep, regex, limit, count, json, kv, fields, csv, syslog, words, alias, requireModule, upper, lower, ip, printf, ...renderers]
