// The console's pages: adding one is a file in this folder and one line here. The shell builds its navigation
// from this list (in this order) and shows `admin` pages to administrators only.
import type { ComponentType } from 'preact'
import { AccountPage } from './account'
import { SearchPage } from './search'

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
  { pattern: '/account', title: 'Account', component: AccountPage, nav: true },
  { pattern: '/search', title: 'Search', component: SearchPage, nav: true },
]

/** Where `/` leads. */
export const HOME = '/account'
