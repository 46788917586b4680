// Every module of the query language, by name: adding a module is its file and one line here.
import type { ModuleDef } from './module'
import { count } from './modules/count'
import { evalModule } from './modules/eval'
import { first, last } from './modules/firstlast'
import { grep } from './modules/grep'
import { limit } from './modules/limit'
import { lookup } from './modules/lookup'
import { regex } from './modules/regex'
import { sort } from './modules/sort'
import { unique } from './modules/unique'
import { renderers } from './render'

export const MODULES: readonly ModuleDef[] = [grep, regex, limit, count, evalModule, sort, unique, first, last, lookup, ...renderers]
