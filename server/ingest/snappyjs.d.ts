// snappyjs ships no types: the one function Quarry calls (server/ingest/snappy.ts).
declare module 'snappyjs' {
  /** Decompresses a snappy block; throws when it declares more than `maxLength` bytes or is malformed. */
  function uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array
  function compress(uncompressed: Uint8Array): Uint8Array
  const SnappyJS: { uncompress: typeof uncompress; compress: typeof compress }
  export default SnappyJS
}
