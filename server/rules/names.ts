// Names other people read (docs/security.md, "Names"): user names, real names, e-mail addresses, group names. A name
// must show what it is: no control or format characters (NUL, zero-width spaces and joiners, bidi overrides
// that reverse what follows), no line or paragraph separators, nothing unassigned, private or invisible. Names
// are kept in Unicode NFC, so one name has one spelling. A user name must also not pass for another: it is
// written in one script (Latin with Cyrillic, as in Cyrillic "а" + "dmin", is refused), and it may not share
// its confusable skeleton with an existing user name ("Admin", "ａｄｍｉｎ", "adrnin" next to "admin").
import { Errors } from '../http/errors'

/**
 * Unicode general categories Cc (controls), Cf (format: zero-width, bidi controls, soft hyphen), Zl, Zp, Co
 * (private use), Cn (unassigned and noncharacters), Cs (lone surrogates), and the default-ignorable code
 * points (variation selectors, Hangul fillers, combining grapheme joiner), which render as nothing.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]/u
/** The same, except the tab and line breaks a multi-line text (a description) may hold. */
const INVISIBLE_IN_TEXT = /(?![\t\n\r])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]/u

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`

/** `value` in NFC; 400 naming `field` and the character when it holds one a reader cannot see for what it is. */
export function checkName(value: string, field: string, opts: { multiline?: boolean } = {}): string {
  const bad = (opts.multiline ? INVISIBLE_IN_TEXT : INVISIBLE).exec(value)
  if (bad) throw Errors.badRequest(`${field} holds a control, format or invisible character (${codePoint(bad[0])})`)
  return value.normalize('NFC')
}

/**
 * Every script Unicode names (those this engine's RegExp knows), to find the script of a character. Common
 * (digits, punctuation) and Inherited (combining marks) go with any script.
 */
const SCRIPT_NAMES = (
  'Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Beria_Erfe Bhaiksuki ' +
  'Bopomofo ' +
  'Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Coptic ' +
  'Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan ' +
  'Elymaic Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han ' +
  'Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian ' +
  'Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao ' +
  'Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen ' +
  'Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro ' +
  'Multani Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki ' +
  'Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic ' +
  'Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic ' +
  'Samaritan Saurashtra Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar ' +
  'Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan ' +
  'Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square'
).split(' ')

/** Looked up in this order: the scripts most names are written in first. */
const FIRST = ['Latin', 'Cyrillic', 'Greek', 'Han', 'Arabic', 'Hiragana', 'Katakana', 'Hangul', 'Devanagari', 'Hebrew']
const SCRIPTS: { name: string; re: RegExp }[] = [...FIRST, ...SCRIPT_NAMES.filter((n) => !FIRST.includes(n))].flatMap((name) => {
  try {
    return [{ name, re: new RegExp(`^\\p{Script=${name}}$`, 'u') }]
  } catch {
    return [] // a script newer than this engine's Unicode data: none of its characters are assigned here either
  }
})
const ANY_SCRIPT = /[\p{Script=Common}\p{Script=Inherited}]/u

/** Scripts one writing system mixes (UTS #39 "highly restrictive"): Japanese, Chinese with Bopomofo, Korean. */
const ALLOWED_MIXES = [new Set(['Han', 'Hiragana', 'Katakana']), new Set(['Han', 'Bopomofo']), new Set(['Han', 'Hangul'])]

/** The scripts of a text's characters, Common and Inherited left out. */
function scriptsOf(text: string): Set<string> {
  const found = new Set<string>()
  for (const c of text) {
    if (ANY_SCRIPT.test(c)) continue
    const script = SCRIPTS.find((s) => s.re.test(c))?.name ?? 'Unknown'
    found.add(script)
  }
  return found
}

function singleScript(text: string): boolean {
  const scripts = scriptsOf(text)
  if (scripts.size <= 1) return !scripts.has('Unknown')
  return ALLOWED_MIXES.some((mix) => [...scripts].every((s) => mix.has(s)))
}

/**
 * Characters that pass for Latin letters or digits, mapped to what they pass for (after NFKC, which already
 * folds fullwidth and other compatibility forms): Cyrillic and Greek look-alikes, and the Latin ones (I, 1 and
 * | for l, 0 for o). Then the skeleton is lower-cased, and "rn" and "vv" read as "m" and "w".
 */
const CONFUSABLE: Record<string, string> = {
  // Cyrillic
  а: 'a', в: 'b', г: 'r', е: 'e', ё: 'e', з: '3', к: 'k', м: 'm', н: 'h', о: 'o', п: 'n', р: 'p', с: 'c', т: 't', у: 'y',
  х: 'x', ь: 'b', ѕ: 's', і: 'i', ї: 'i', ј: 'j', һ: 'h', ԁ: 'd', ԛ: 'q', ԝ: 'w', ӏ: 'l', ү: 'y', ɡ: 'g',
  А: 'a', В: 'b', Е: 'e', К: 'k', М: 'm', Н: 'h', О: 'o', Р: 'p', С: 'c', Т: 't', У: 'y', Х: 'x', Ѕ: 's', І: 'l', Ј: 'j', Ӏ: 'l',
  // Greek
  α: 'a', β: 'b', γ: 'y', ε: 'e', ζ: 'z', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', ω: 'w',
  Α: 'a', Β: 'b', Ε: 'e', Ζ: 'z', Η: 'h', Ι: 'l', Κ: 'k', Μ: 'm', Ν: 'n', Ο: 'o', Ρ: 'p', Τ: 't', Υ: 'y', Χ: 'x',
  // Latin and digits
  I: 'l', '1': 'l', '|': 'l', '0': 'o', ı: 'i',
}

/** What a name looks like, for telling look-alikes apart: equal skeletons pass for the same name. */
export function nameSkeleton(name: string): string {
  let out = ''
  for (const c of name.normalize('NFKC')) out += CONFUSABLE[c] ?? c
  return out.toLowerCase().replaceAll('rn', 'm').replaceAll('vv', 'w')
}

/**
 * A user name as stored: NFC, no invisible characters, written in one script. 400 otherwise. Whether it
 * passes for an existing name is the caller's check (it needs the store): compare nameSkeleton().
 */
export function checkUserName(name: string): string {
  const nfc = checkName(name, 'User')
  if (!singleScript(nfc)) throw Errors.badRequest('User mixes letters of different scripts (a look-alike of another name is refused)')
  return nfc
}

/**
 * The name of an item others may see (resource, dashboard, library entry, user file), checked and in NFC as
 * checkName does; null and undefined pass through (they mean "none" or "unchanged" to the routes). The item's
 * `current` name, sent back unchanged with the rest of the item, is not refused for what it held before.
 */
export function itemName<T extends string | null | undefined>(value: T, field = 'Name', current?: string): T {
  return (typeof value === 'string' && value !== current ? checkName(value, field) : value) as T
}

/** Labels of an item, each checked as a name (those it has already pass as they are). */
export function itemLabels<T extends readonly string[] | null | undefined>(labels: T, current: readonly string[] = []): T {
  return (labels ? labels.map((l) => (current.includes(l) ? l : checkName(l, 'Labels'))) : labels) as T
}
