// Elysia's t.Integer and t.Numeric, with their checkers compiled when first needed instead of when the schema is
// made (bench/README.md, cold start). Elysia 1.4.30 compiles a TypeBox checker for the number inside each call (a
// `new Function` of generated code, ~0.28 ms each), and Quarry's routes make ~60 of them at start, plus those Elysia
// makes itself when it coerces query and path schemas (its replace-schema calls t.Numeric): ~17 ms of a ~200 ms start.
// Most are for answers or rarely used routes and are never run. Each replacement here builds the same schema (same
// JSON, same Transform) and decodes exactly as Elysia's does; only the moment of the compilation moves.
// Imported first by server/app.ts, before any plugin module makes its schemas; server/runtime/lazy-numeric.test.ts checks the
// two agree.
import { t } from 'elysia'
import { compile } from 'elysia/type-system/utils'
import { type IntegerOptions, type NumberOptions, Type } from '@sinclair/typebox'

type Compiled = ReturnType<typeof compile>

function lazy(make: () => Compiled): () => Compiled {
  let compiled: Compiled | undefined
  return () => (compiled ??= make())
}

/** Elysia 1.4.30's ElysiaType.Integer, checker compiled on first decode. */
export function lazyInteger(property?: IntegerOptions) {
  const schema = Type.Integer(property)
  const compiler = lazy(() => compile(schema))
  return t
    .Transform(t.Union([t.String({ format: 'integer', default: 0 }), Type.Integer(property)], property))
    .Decode((value) => {
      const number = +value
      if (!compiler().Check(number)) throw compiler().Error(number)
      return number
    })
    .Encode((value) => value)
}

/** Elysia 1.4.30's ElysiaType.Numeric, checker compiled on first decode. */
export function lazyNumeric(property?: NumberOptions) {
  const schema = Type.Number(property)
  const compiler = lazy(() => compile(schema))
  return t
    .Transform(t.Union([t.String({ format: 'numeric', default: 0 }), t.Number(property)], property))
    .Decode((value) => {
      const number = +value
      if (isNaN(number)) return value
      if (property && !compiler().Check(number)) throw compiler().Error(number)
      return number
    })
    .Encode((value) => value)
}

/** Elysia's own, kept for the equivalence test. */
export const elysiaInteger = t.Integer
export const elysiaNumeric = t.Numeric

Object.assign(t, { Integer: lazyInteger, Numeric: lazyNumeric })
