package config_test

import (
	"testing"

	"github.com/runlet/runlet/internal/apitest"
)

// The package's API is what an application needs to load a config and
// what a tool author needs to offer tools to it; the calculator's engine
// and the built-in tools' argument types are not part of it.
func TestAPI(t *testing.T) {
	apitest.Check(t, []string{
		"Builtins", "Calculator", "CurrentTime", "Providers", "Tools", "Registry",
		"Load", "Loader", "Loader.Build", "Loader.Decode", "Loader.DecodeFile", "Loader.Load", "DefaultMaxBytes",
		"File", "Model", "ToolRef", "HostedTool", "MCPServer", "MCPServer.ServerConfig", "Context", "Guardrails",
		// Printing masks credentials (print.go).
		"File.Format", "File.LogValue", "File.MarshalJSON", "Model.Format", "Model.LogValue", "Model.MarshalJSON",
		"MCPServer.Format", "MCPServer.LogValue", "MCPServer.MarshalJSON",
		"ToolRef.Format", "ToolRef.LogValue", "ToolRef.MarshalJSON",
		// store: in the file (store.go); the program links the drivers it
		// opens.
		"Store", "Store.Kind", "SQLiteStore", "PostgresStore", "RedisStore", "StoreOpeners", "Setup.OpenStore",
		// The clouds whose credentials need an SDK (cloud.go).
		"ProviderOpeners",
		"PostgresStore.Format", "PostgresStore.LogValue", "PostgresStore.MarshalJSON",
		"RedisStore.Format", "RedisStore.LogValue", "RedisStore.MarshalJSON",
		// Tools made from params in the file (factory.go).
		"Factory", "ToolFactory",
		"Setup", "Setup.NewRuntime", "Setup.ConnectMCP",
		"Error", "Error.Error",
		// The CLI checks a --output-schema file before any call.
		"CheckOutputSchema",
	}, ".")
}
