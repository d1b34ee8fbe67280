/**
 * The fields given, without those left out: options built from optional arguments, for
 * functions whose options are exact (`exactOptionalPropertyTypes`: absent, never undefined).
 */
export function definedFields<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> }
}
