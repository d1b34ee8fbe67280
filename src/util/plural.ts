/** `n` and the noun in the number it takes: `counted(1, 'step')` is `1 step`, `counted(2, 'entry', 'entries')` is `2 entries`. */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`
}
