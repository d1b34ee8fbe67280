/** One variable of a git config file: `section` and `name` lower-cased as git compares them, `subsection` as written. */
export interface GitConfigEntry {
  section: string
  subsection: string | null
  name: string
  /** null for a name without `=` (git reads it as true) */
  value: string | null
}

const SECTION = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/
const NAME = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:(=)|$|(?=[#;]))/

/**
 * The variables of a git config file, as git reads them: `[section "sub"]` and the legacy `[section.sub]`, comments
 * after `#` or `;`, values with quotes, escapes and backslash-newline continuations. A line git would refuse is
 * skipped: git stops at it, so nothing after it runs either way, and skipping keeps every variable before and after
 * in view.
 */
export function parseGitConfig(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = []
  let section: string | null = null
  let subsection: string | null = null
  for (let line of logicalLines(text)) {
    line = line.trimStart()
    const header = SECTION.exec(line)
    if (header) {
      const [name, legacySub] = splitLegacy(header[1]!)
      section = name
      subsection = header[2] === undefined ? legacySub : header[2].replace(/\\(.)/g, '$1')
      line = line.slice(header[0].length).trimStart()
    }
    const variable = section === null ? null : NAME.exec(line)
    if (!variable || section === null) continue
    const value = variable[2] === undefined ? null : parseValue(line.slice(variable[0].length))
    entries.push({ section, subsection, name: variable[1]!.toLowerCase(), value })
  }
  return entries
}

/** The lines of `text`, a backslash at a line's end joining it to the next (outside a comment, as git reads it). */
function logicalLines(text: string): string[] {
  return text.replace(/\r\n/g, '\n').replace(/\\\n/g, '').split('\n')
}

/** `[core]` → core; `[branch.main]` → branch, main (the legacy form, its subsection lower-cased by git). */
function splitLegacy(header: string): [string, string | null] {
  const dot = header.indexOf('.')
  return dot === -1 ? [header.toLowerCase(), null] : [header.slice(0, dot).toLowerCase(), header.slice(dot + 1).toLowerCase()]
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', b: '\b', '"': '"', '\\': '\\' }

/** A value after its `=`: quotes removed, escapes applied, a comment and surrounding blanks dropped. */
function parseValue(raw: string): string {
  let value = ''
  let quoted = false
  let blanks = ''
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!
    if (c === '\\' && i + 1 < raw.length) {
      value += blanks + (ESCAPES[raw[++i]!] ?? '')
      blanks = ''
    } else if (c === '"') quoted = !quoted
    else if (!quoted && (c === '#' || c === ';')) break
    else if (!quoted && (c === ' ' || c === '\t')) blanks += value === '' ? '' : c
    else {
      value += blanks + c
      blanks = ''
    }
  }
  return value
}
