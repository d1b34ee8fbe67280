/** git's rule: a NUL byte in the first 8,000 bytes makes a file binary. */
export const looksBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, 8000).includes(0)
