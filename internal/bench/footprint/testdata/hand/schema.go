//go:build footprint_schema

package main

// Built with -tags footprint_schema (measure.sh does), the hand-written
// program also links the JSON Schema library Runlet's root package imports,
// and nothing else of it: the size of that build is the floor any program
// using github.com/google/jsonschema-go starts from, since the library's
// package initialisation alone links regexp, log/slog and math/big.
import _ "github.com/google/jsonschema-go/jsonschema"
