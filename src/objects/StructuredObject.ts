/** Every structured object: canonical JSON with a kind and a schema version. */
export interface StructuredObject {
  kind: string
  schemaVersion: number
  [field: string]: unknown
}
