import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { entry, normal, refusedAt, values } from './extractions.testkit'

const fmt = (format: string, ...args: (string | number)[]) => {
  const vals = Object.fromEntries(args.map((a, i) => [`a${i}`, a]))
  const q = `tag=x printf "${format.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}" ${args.map((_, i) => `a${i}`).join(' ')}`
  return values(q, [entry('d', vals)])[0]!.printf
}

describe('printf: arguments and normal form', () => {
  test.each([
    ['tag=x printf "The source port is %v and the destination port is %v!" SrcPort DstPort', 'tag=x printf "The source port is %v and the destination port is %v!" SrcPort DstPort'],
    ['tag=x printf -e line %d n', 'tag=x printf -e line "%d" n'],
    ['tag=x printf "100%%"', 'tag=x printf "100%%"'],
  ])('%s → %s', (q, expected) => {
    expect(normal(q)).toBe(expected)
    expect(normal(expected)).toBe(expected)
  })
  test.each([
    ['tag=x printf', 12],
    ['tag=x printf "%v %v" a', 22],
    ['tag=x printf %v a b', 18],
    ['tag=x printf ab%y a', 15],
    ['tag=x printf "%y" a', 13],
    ['tag=x printf "%" a', 13],
    ['tag=x printf -e "" %v a', 16],
  ])('%s is refused at %d', (q, pos) => refusedAt(q, pos))
})

describe('printf: Go fmt outputs', () => {
  test.each([
    ['%v|%s', [42, 'hi'], '42|hi'],
    ['%5.2f', [3.14159], ' 3.14'],
    ['%-5d|', [42], '42   |'],
    ['%05d', [-42], '-0042'],
    ['%+d % d', [5, 5], '+5  5'],
    ['%x %#x %X %o %#o %O %b %#b', [255, 255, 255, 8, 8, 8, 5, 5], 'ff 0xff FF 10 010 0o10 101 0b101'],
    ['%e %E', [1234.5678, 1234.5678], '1.234568e+03 1.234568E+03'],
    ['%g %g %g %g %.3g %G', [1234.5678, 1e21, 0.00001, 1234567, 1234.5678, 1e-7], '1234.5678 1e+21 1e-05 1.234567e+06 1.23e+03 1E-07'],
    ['%f %.0f %8.3f|%-8.3f|%08.3f', [1.5, 2.5, -1.5, 1.5, -1.5], '1.500000 2   -1.500|1.500   |-001.500'],
    ['%.0f %.0f %.1f %.2f %.2f', [0.5, 3.5, 0.25, 1.005, 2.675], '0 4 0.2 1.00 2.67'],
    ['%c%c %U %#U', [72, 105, 0x1f600, 0x41], "Hi U+1F600 U+0041 'A'"],
    ['%q %q', ['say "hi"', 65], "\"say \\\"hi\\\"\" 'A'"],
    ['%x % x %X', ['hi', 'hi', 'hi'], '6869 68 69 6869'],
    ['%6.2s|%-4s|', ['abcdef', 'ab'], '    ab|ab  |'],
    ['%d %d', ['12', 'abc'], '12 %!d(string=abc)'],
    ['%.3d %8.3d', [7, -7], '007     -007'],
    ['%d', [1.5], '%!d(float64=1.5)'],
  ])('%j of %j', (format, args, expected) => {
    expect(fmt(format, ...(args as (string | number)[]))).toBe(expected)
  })

  test('integers in every base, against Number.prototype.toString', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), fc.integer({ min: 0, max: 20 }), (n, w) => {
        const sign = n < 0 ? '-' : ''
        const a = Math.abs(n)
        expect(fmt(`%d|%x|%o|%b|%${w}d`, n, n, n, n, n)).toBe(`${n}|${sign}${a.toString(16)}|${sign}${a.toString(8)}|${sign}${a.toString(2)}|${String(n).padStart(w)}`)
      }),
    )
  })

  test('floats with %f and %e, against toFixed and toExponential', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e15, max: 1e15, noNaN: true }), fc.integer({ min: 0, max: 10 }), (x, p) => {
        const sign = x < 0 || Object.is(x, -0) ? '-' : ''
        // exact ties (2.5) round to even in Go and up in toFixed: the table above checks them
        const exact = Math.abs(x).toFixed(p + 25)
        if (!/^50*$/.test(exact.slice(exact.length - 25))) expect(fmt(`%.${p}f`, x)).toBe(sign + Math.abs(x).toFixed(p))
        expect(fmt(`%.${p}e`, x)).toBe(sign + Math.abs(x).toExponential(p).replace(/e([+-])(\d)$/, 'e$10$2'))
      }),
    )
  })

  test('an entry that lacks a value gets no result and passes', () => {
    expect(values('tag=x printf "%v-%v" a b', [entry('d', { a: 1 }), entry('d', { a: 1, b: 'x' })])).toEqual([{ a: 1 }, { a: 1, b: 'x', printf: '1-x' }])
    expect(values('tag=x printf -e out "%s@%v" TAG a', [entry('d', { a: 2 })])).toEqual([{ a: 2, out: 'x@2' }])
  })
})

test('printf: precisions past what JS writes are cut, not a failure', () => {
  expect(values('tag=x printf "%.200f|%.150e|%.300g" a a a', [entry('d', { a: 1.5 })])[0]!.printf).toBe(`1.${'5'.padEnd(75, '0')}|1.${'5'.padEnd(100, '0')}e+00|1.5`)
})
