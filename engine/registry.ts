// Every module of the query language, by name: adding a module is its file and one line here.
import type { ModuleDef } from './module'
import { ax } from './modules/ax'
import { count } from './modules/count'
import { grep } from './modules/grep'
import { limit } from './modules/limit'
import { regex } from './modules/regex'
import { renderers } from './render'

export const MODULES: readonly ModuleDef[] = [grep, regex, limit, count, ax, ...renderers]
