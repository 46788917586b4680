// The console's pages: adding one is a file in this folder and one line here. The shell builds its navigation
// from this list (in this order) and shows `admin` pages to administrators only.
import type { ComponentType } from 'preact'
import { AccountPage } from './account'
import { DashboardPage } from './dashboard'
import { DashboardsPage } from './dashboards'
import { FilesPage } from './files'
import { GroupsPage } from './groups'
import { LibraryPage } from './library'
import { ResourcesPage } from './resources'
import { SearchPage } from './search'
import { SearchesPage } from './searches'
import { TokensPage } from './tokens'
import { UsersPage } from './users'

export interface PageProps {
  /** The route's parameters (`:id` in `pattern`) and its query. */
  params: Record<string, string>
  query: URLSearchParams
}

export interface Page {
  /** `/dashboards/:id`; the first page whose pattern matches is shown. */
  pattern: string
  title: string
  component: ComponentType<PageProps>
  /** Listed in the navigation (pages reached only by a link, such as one dashboard, are not). */
  nav?: boolean
  admin?: boolean
}

export const PAGES: Page[] = [
  { pattern: '/search', title: 'Search', component: SearchPage, nav: true },
  { pattern: '/dashboards', title: 'Dashboards', component: DashboardsPage, nav: true },
  { pattern: '/dashboards/:id', title: 'Dashboard', component: DashboardPage },
  { pattern: '/searches', title: 'Searches', component: SearchesPage, nav: true },
  { pattern: '/library', title: 'Library', component: LibraryPage, nav: true },
  { pattern: '/resources', title: 'Resources', component: ResourcesPage, nav: true },
  { pattern: '/files', title: 'Files', component: FilesPage, nav: true },
  { pattern: '/tokens', title: 'Tokens', component: TokensPage, nav: true },
  { pattern: '/users', title: 'Users', component: UsersPage, nav: true, admin: true },
  { pattern: '/groups', title: 'Groups', component: GroupsPage, nav: true, admin: true },
  { pattern: '/account', title: 'Account', component: AccountPage, nav: true },
]

/** Where `/` leads: what a person signs in for. */
export const HOME = '/search'
