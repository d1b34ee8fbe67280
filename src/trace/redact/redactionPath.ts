import { UsageError } from '../../errors/index.js'

/** Any one child as `childPath` renders it: `.key`, `["odd key"]` or `[3]`. */
const ANY_CHILD = '(?:\\.[A-Za-z_$][A-Za-z0-9_$]*|\\["(?:[^"\\\\]|\\\\.)*"\\]|\\[\\d+\\])'

/**
 * A user's JSON path rule (`$.headers.x-trace`, `$.messages[*].content`, `$..password`,
 * `$["odd key"][0]`, `$.a.*`) as an anchored regex over the paths `childPath` renders.
 * A dotted key may hold any character but `.` and `[` (so `x-trace` works as written);
 * `*` is any child; `..` any depth. Keys match case-insensitively (headers are recorded
 * in lower case). A rule that does not parse is a UsageError (exit 2), never a silent no-op.
 */
export function pathRuleRegex(rule: string): RegExp {
  const fail = (why: string): never => {
    throw new UsageError(`--redact-path ${JSON.stringify(rule)}: ${why}; write it like $.headers.x-trace, $.messages[*].content or $..password`, { rule })
  }
  const text = rule.trim()
  if (!text.startsWith('$')) fail('a path starts at $')
  let source = ''
  let i = 1
  while (i < text.length) {
    let segment: [string, number]
    if (text.startsWith('..', i)) {
      source += `${ANY_CHILD}*`
      segment = text[i + 2] === '[' ? bracket(text, i + 2, fail) : dotted(text, i + 2, fail)
    } else if (text[i] === '.') segment = dotted(text, i + 1, fail)
    else if (text[i] === '[') segment = bracket(text, i, fail)
    else return fail(`unexpected ${JSON.stringify(text[i])} at ${i}`)
    source += segment[0]
    i = segment[1]
  }
  if (source === '') fail('it names nothing below $')
  return new RegExp(`^\\$${source}$`, 'i')
}

function dotted(text: string, from: number, fail: (why: string) => never): [string, number] {
  let end = from
  while (end < text.length && text[end] !== '.' && text[end] !== '[') end++
  const name = text.slice(from, end)
  if (name === '') fail(`an empty key at ${from}`)
  return [name === '*' ? ANY_CHILD : keyPattern(name), end]
}

function bracket(text: string, from: number, fail: (why: string) => never): [string, number] {
  const m = /^\[(?:(\d+)|(\*)|"((?:[^"\\]|\\.)*)"|'([^']*)')\]/.exec(text.slice(from))
  if (!m) return fail(`a bracket at ${from} must hold an index, * or a quoted key`)
  const [whole, index, star, dq, sq] = m
  if (index !== undefined) return [`\\[${index}\\]`, from + whole.length]
  if (star !== undefined) return [ANY_CHILD, from + whole.length]
  return [keyPattern(dq !== undefined ? unquote(dq, fail) : sq!), from + whole.length]
}

function unquote(body: string, fail: (why: string) => never): string {
  try {
    return JSON.parse(`"${body}"`) as string
  } catch {
    return fail(`the quoted key "${body}" is not a valid JSON string`)
  }
}

/** A key as childPath renders it: `.name` for identifiers, else `["…"]`. */
function keyPattern(key: string): string {
  const rendered = /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
  return rendered.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
