// Tiles laid out by their `span` on a grid as wide as the widest tile's column plus span (12 at least): a tile with
// x and y sits at that cell, one without them takes the next free place. Positions go through CSS custom properties
// set from script (no style attribute in markup, as the console's CSP requires); a narrow window stacks the tiles.
import type { ComponentChildren } from 'preact'
import { gridColumns, type Tile } from './model'

const place = (start: number | undefined, span: number) => (start === undefined ? `auto / span ${span}` : `${start + 1} / span ${span}`)

export function TileGrid({ tiles, children }: { tiles: Tile[]; children: (tile: Tile, index: number) => ComponentChildren }) {
  return (
    <div class="tiles" style={{ '--cols': String(gridColumns(tiles)) }}>
      {tiles.map((tile, index) => (
        <article
          key={tile.id}
          class="tile"
          aria-label={tile.title || `Tile ${index + 1}`}
          data-tile={tile.id}
          style={{ '--gc': place(tile.span.x, tile.span.col), '--gr': place(tile.span.y, tile.span.row), '--rows': String(tile.span.row) }}
        >
          {children(tile, index)}
        </article>
      ))}
    </div>
  )
}
