package result

import _ "embed"

// SchemaJSON is the JSON Schema of the result file (schema.json).
//
//go:embed schema.json
var SchemaJSON []byte
