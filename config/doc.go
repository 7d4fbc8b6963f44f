// Package config builds a Runlet agent and runtime from a YAML file, so an
// agent can be tried, shared and changed without writing Go:
//
//	setup, err := config.Load("agent.yaml", config.Tools(weather))
//	if err != nil {
//		log.Fatal(err) // agent.yaml:7:13: model.provider: unknown provider "openia"; did you mean "openai"? ...
//	}
//	rt := setup.NewRuntime()
//	res, err := rt.Run(ctx, setup.Agent, "Weather in Lisbon?")
//
// # Format
//
//	name: assistant                 # labels events and logs
//	instructions: |                 # the system prompt
//	  Be concise.
//	model:
//	  provider: openai              # openai | openai-responses | anthropic | gemini | ollama |
//	                                # vllm | llamacpp | deepseek | qwen | dashscope | openrouter |
//	                                # gemini-openai | azure | azure-responses (base_url: the
//	                                # resource's endpoint) | bedrock | vertex (see Clouds)
//	  name: gpt-4o-mini             # required
//	  base_url: ${OPENAI_BASE_URL:-https://api.openai.com/v1}
//	  api_key: ${OPENAI_API_KEY}    # never inline; empty means the provider's variable
//	  headers: {X-Title: my-app}    # added to every request
//	  max_retries: 2                # 0: no retries
//	  stream_idle_timeout: 2m       # a stream silent this long fails (default 10m)
//	  settings:                     # common request settings
//	    temperature: 0.2
//	    top_p: 1
//	    max_output_tokens: 1024
//	    stop_sequences: ["\n\n"]
//	    reasoning:                  # provider-neutral: each provider maps it
//	      effort: low               # low | medium | high
//	      budget_tokens: 2048       # Anthropic, Gemini
//	      summary: true             # return the reasoning
//	  options:                      # provider-specific request options, passed through
//	    reasoning_effort: low
//	max_turns: 10                   # model calls per run
//	limits:                         # per run; 0 or absent means unlimited
//	  total_tokens: 50000           # also input_tokens, output_tokens
//	  requests: 20
//	  tool_calls: 30
//	context:                        # context policy, before every model call
//	  keep_last_turns: 20           # the last 20 turns
//	  max_messages: 40              # at most 40 messages, whole turns
//	  token_budget: 100000
//	store: memory                   # sessions, state and checkpoints (Setup.OpenStore):
//	                                #   memory, or sqlite: {path: FILE},
//	                                #   postgres: {dsn: "${DATABASE_URL}", schema: NAME},
//	                                #   redis: {url: "${REDIS_URL}", prefix: "app:", ttl: 720h}
//	tools:                          # by name: the Loader's registry, then the built-ins
//	  - current_time
//	  - calculator
//	  - name: get_weather           # or with a per-tool policy
//	    timeout: 10s
//	    require_approval: false
//	  - name: search_news           # or made by a factory (Loader.Factories)
//	    use: serper                 #   from its params, decoded strictly
//	    params: {api_key: "${SERPER_API_KEY}", type: news}
//	hosted_tools:                   # tools the provider runs: web_search, code_execution, web_fetch
//	  - kind: web_search
//	    options: {max_uses: 3}      #   merged into the provider's declaration
//	  - provider: anthropic         # or one provider's own tool, sent only to it
//	    declaration: {type: web_fetch_20250910, name: web_fetch}
//	guardrails:                     # ready guardrails (package guardrails)
//	  max_input_bytes: 16384        #   refuse a longer input before any model call
//	  pii: true                     #   screen input, answer and tool calls for personal data
//	tool_timeout: 30s               # for tools without their own timeout
//	tool_concurrency: 4             # parallel tool calls per turn
//	mcp_servers:                    # tools of MCP servers, named NAME_TOOL
//	  - name: files                 # a server on stdio
//	    command: npx
//	    args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]
//	    env: {LOG_LEVEL: warn}
//	  - name: github                # a remote server (Streamable HTTP; sse: true for HTTP+SSE)
//	    url: https://api.githubcopilot.com/mcp/
//	    headers: {Authorization: "Bearer ${GITHUB_TOKEN}"}
//	    tools: [search_issues]      # only these; default all
//	    require_approval: true      # also timeout: 30s
//	prices:                         # your prices per million tokens, by model (runlet.WithPrices);
//	  my-model: {input: 1, cached_input: 0.1, cache_write: 1.25, output: 4}  # others: cost unknown
//	output_schema:                  # a JSON Schema: the answer is JSON matching it,
//	  title: contact                #   validated and asked for again when it does not
//	  type: object                  #   match (the title, if a valid name, names it)
//	  properties:
//	    name: {type: string}
//	    email: {type: string}
//	  required: [name]
//
// MCP servers are connected by Setup.ConnectMCP, and the store opened by
// Setup.OpenStore, not by Load: the program (or the CLI) decides when to
// start them, and closes them.
//
// # Stores
//
// The config package links no database driver: a program opens the
// durable stores it links through Loader.Stores (StoreOpeners, one func
// per kind), and a file naming a kind the program cannot open is an
// error at its line. So a program that keeps its sessions in memory does
// not build SQLite, PostgreSQL and Redis clients; the runlet CLI sets all
// the openers it has.
//
// # Clouds
//
// Models behind a cloud's own credentials take keys of their own in the
// model section:
//
//	model: {provider: vertex, name: gemini-2.5-flash, project: my-proj, location: global}
//	model: {provider: vertex, name: claude-sonnet-4-5@20250929, location: us-east5}
//	model: {provider: bedrock, name: us.anthropic.claude-sonnet-4-5-20250929-v1:0, region: us-east-1}
//	model: {provider: azure, deployment: gpt-4o, api_version: 2024-10-21,
//	        base_url: "https://my-resource.openai.azure.com"}   # azure-responses for Responses
//
// The config package links no cloud SDK: like stores, the program gives
// the credentials through Loader.Providers (ProviderOpeners): Bedrock's
// adapter, Application Default Credentials for Vertex AI, Entra ID tokens
// for Azure OpenAI without an API key. The nested module
// github.com/runlet/runlet/cloud has them (cloudconfig.Openers) and its
// CLI, cloud/cmd/runlet, sets them; a file naming a cloud the program
// cannot reach is an error that says so.
//
// examples/config/agent.yaml is a commented example.
//
// # Strictness
//
// Every key must be known and every value of the right type; the provider
// and each tool must exist; every ${VAR} must be set. Each problem is an
// *Error with the file, line and column, and a hint ("did you mean
// ...?"). All problems are reported at once, joined.
//
// # Variables
//
// String values may refer to environment variables: ${VAR} (an error when
// unset), ${VAR:-default} (default when unset or empty), ${VAR-default}
// (default when unset), ${VAR:?message} (an error with the message when
// unset or empty). $$ is a literal $. An unquoted value is typed after
// expansion, so max_turns: ${TURNS:-10} is an integer; a quoted one stays a
// string. Messages never show a variable's value.
//
// A config file may be written by someone else, and must not be able to
// send ${AWS_SECRET_ACCESS_KEY} to the model. So a file may read any
// variable only in its credential fields: model.api_key, model.base_url,
// model.headers, an MCP server's url, headers and env (a server's
// process inherits the environment anyway), store.postgres.dsn and
// store.redis.url, and the fields of a tool
// factory's params that its Go type tags config:"credential" (see
// ToolFactory). Every other field (the
// instructions, options, output_schema, settings, names, tools, numbers)
// reads only the variables the program lists in Loader.AllowEnv, by name or
// by prefix ("APP_*"; "*" for files you wrote), or the CLI user allows with
// --allow-env NAME (the CLI also allows RUNLET_MODEL). Any other reference
// there is an error naming the variable and how to allow it, whether the
// variable is set or not, and with a default too, so a file behaves the
// same on every machine.
//
// # Limits
//
// A file over Loader.MaxBytes (1 MiB unless set) is refused without being
// read whole. YAML aliases repeat their anchor's value, and aliases of
// aliases repeat it exponentially (the "billion laughs"), so aliases may
// add at most 100,000 values and 1 MiB of text to what the file spells
// out, an alias may not appear inside its own anchor's value, and values
// nest at most 1,000 levels deep: past that Decode stops with an *Error at
// the alias. Time and memory stay bounded by the file's size (parsing costs
// up to about 200 bytes of memory per byte of YAML).
//
// # Printing
//
// File, Model, MCPServer and ToolRef print (every fmt verb), log (slog)
// and marshal to JSON with their credentials masked: the API key and every
// header and env value as [REDACTED], base_url, an MCP server's url and
// the store's URLs without user info, query values or fragment (a
// key=value DSN all [REDACTED]), and a tool's params' credential fields
// as [REDACTED]. A value is still there to use; only its
// printed form is masked.
//
// # Built-in tools
//
// current_time (the date and time, in a time zone the model may name) and
// calculator (arithmetic) need no Go code. A Go program adds its own tools
// through the Loader's registry (Loader.Tools), and tool factories
// (Loader.Factories, made with Factory) that make as many tools of a kind
// as the file configures, each from its own params.
package config
