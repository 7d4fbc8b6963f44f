module github.com/runlet/runlet

go 1.26

require (
	github.com/google/jsonschema-go v0.4.3 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
