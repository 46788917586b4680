// The zone RFC 3164 timestamps (which carry none) are read in: QUARRY_TIMESTAMP_ZONE, as lines read it
// (server/ingest/timestamps.ts zoneOf), refused at start with one line naming the variable.
import { ConfigError } from '../../runtime/config'
import { type Zone, zoneOf } from '../timestamps'

export type { Zone }

export function parseZone(name: string, raw: string): Zone {
  try {
    return zoneOf(raw)
  } catch (e) {
    throw new ConfigError(`${name}: ${(e as Error).message}`)
  }
}
