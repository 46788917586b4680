// Every module of the query language, by name: adding a module is its file and one line here.
import type { ModuleDef } from './module'
import { grep } from './modules/grep'
import { limit } from './modules/limit'
import { regex } from './modules/regex'
import { mathModules } from './modules/stats/math'
import { stats } from './modules/stats/stats'
import { renderers } from './render'

export const MODULES: readonly ModuleDef[] = [grep, regex, limit, stats, ...mathModules, ...renderers]
