// point2point (gravwell/wiki search/point2point/point2point.md): lines from a source to a destination on a map.
//   point2point -srclat <value> -srclong <value> -dstlat <value> -dstlong <value> [-mag <value>]
// Each entry (or condensed result) within the range asked for is a line between its source and destination
// coordinates (numbers, or text that reads as one; an entry without all four is left out); entries with the same
// four coordinates are one line, of magnitude their number, or with -mag the sum of that value. -srcloc and -dstloc
// (Location values of the geoip module) are refused: the engine has no Location values, the coordinates are given
// one by one. Lines come in the order first seen, paged by First and Last.
// The answer is the clients' P2PValue list ({Src: {Lat, Long}, Dst: {Lat, Long}, Magnitude}) with ValueNames [].
// Memory: at most MAX_GROUPS lines per answer. Downloads: json.
import { valueOf } from '../entry'
import { quote } from '../lex'
import { type ModuleDef, argError, readFlags } from '../module'
import { parseNumber } from '../value'
import { type Cell, MAX_GROUPS, type RecordSource, inRange, parseValueRecord, scan, valueRecord } from './records'
import { type CompiledRenderer, passAll } from './renderer'

export interface P2PValue {
  Src: { Lat: number; Long: number }
  Dst: { Lat: number; Long: number }
  Magnitude: number
}

const COORDINATES = ['srclat', 'srclong', 'dstlat', 'dstlong'] as const

const numeric = (c: Cell | undefined): number | null => {
  const n = typeof c === 'string' ? parseNumber(c) : c
  return typeof n === 'number' && Number.isFinite(n) ? n : null
}

/** The lines of the records within [from, to): `names` are the four coordinate values in COORDINATES order. */
async function lines(src: RecordSource, from: number, to: number, names: readonly string[], magnitude: string | undefined): Promise<P2PValue[]> {
  const out: P2PValue[] = []
  const index = new Map<string, number>()
  for await (const line of scan(src)) {
    const row = parseValueRecord(line)
    if (!inRange(row, from, to)) continue
    const c = names.map((n) => numeric(row.values.get(n)))
    if (c.some((v) => v === null)) continue
    const [sLat, sLong, dLat, dLong] = c as number[]
    const add = magnitude === undefined ? 1 : (numeric(row.values.get(magnitude)) ?? 0)
    const key = `${sLat} ${sLong} ${dLat} ${dLong}`
    const at = index.get(key)
    if (at !== undefined) out[at]!.Magnitude += add
    else if (out.length < MAX_GROUPS) {
      index.set(key, out.length)
      out.push({ Src: { Lat: sLat!, Long: sLong! }, Dst: { Lat: dLat!, Long: dLong! }, Magnitude: add })
    }
  }
  return out
}

export const point2point: ModuleDef = {
  name: 'point2point',
  kind: 'render',
  info: 'Shows lines from a source to a destination on a map: -srclat, -srclong, -dstlat and -dstlong name the coordinates; -mag a magnitude (else the number of entries).',
  examples: ['point2point -srclat slat -srclong slon -dstlat dlat -dstlong dlon', 'point2point -srclat slat -srclong slon -dstlat dlat -dstlong dlon -mag bytes'],
  compile(call) {
    const { flags, rest } = readFlags(call, { withValue: [...COORDINATES, 'mag', 'srcloc', 'dstloc'] })
    if (rest.length > 0) throw argError(call, 'point2point takes only flags (-srclat, -srclong, -dstlat, -dstlong, -mag)', rest[0])
    for (const loc of ['srcloc', 'dstloc']) {
      const t = flags.get(loc)
      if (t !== undefined && t !== true) throw argError(call, `-${loc} needs a Location value, which no module here makes: give -${loc.slice(0, 3)}lat and -${loc.slice(0, 3)}long`, t)
    }
    const named = (f: string) => {
      const v = flags.get(f)
      return v === undefined || v === true ? undefined : v.text
    }
    const names = COORDINATES.map((f) => {
      const n = named(f)
      if (n === undefined) throw argError(call, `point2point needs -${f}`, call.end)
      return n
    })
    const magnitude = named('mag')
    const consumes = [...new Set([...names, ...(magnitude !== undefined ? [magnitude] : [])])]
    const r: CompiledRenderer = {
      name: 'point2point',
      kind: 'render',
      text: ['point2point', ...COORDINATES.flatMap((f, i) => [`-${f}`, quote(names[i]!)]), ...(magnitude !== undefined ? ['-mag', quote(magnitude)] : [])].join(' '),
      consumes,
      produces: [],
      stateless: true,
      stage: () => passAll,
      record: (e) => valueRecord(e, consumes, valueOf),
      downloads: ['json'],
      async answer(src, req) {
        const all = await lines(src, req.from, req.to, names, magnitude)
        const page = all.slice(req.first, req.last)
        return { entries: page, count: page.length, more: req.first + page.length < all.length, extra: { ValueNames: [] } }
      },
      download(src, format) {
        if (format !== 'json') return undefined
        return (async function* () {
          yield JSON.stringify(await lines(src, 0, 0, names, magnitude))
        })()
      },
    }
    return r
  },
}
