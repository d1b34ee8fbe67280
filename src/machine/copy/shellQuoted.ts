/** A word for a guest's /bin/sh, single-quoted whatever it holds. */
export const shellQuoted = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`
