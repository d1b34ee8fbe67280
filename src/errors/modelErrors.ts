import { CorruptDataError } from './ForkpointError.js'

/** A safetensors file (or a tensor in one) that is not well-formed: refused, exit 5. */
export class MalformedTensorFileError extends CorruptDataError<{ path?: string; tensor?: string }> {}
