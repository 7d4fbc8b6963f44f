// Package mcp connects runlet agents and MCP (Model Context Protocol)
// servers, both ways, using the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk): an agent uses the tools of MCP
// servers, and an agent or a set of runlet tools is served as an MCP server.
//
// # Using an MCP server's tools
//
// [Connect] gives a [Toolset], a live connection to one server, for an
// agent's Toolsets field. The server is a subprocess speaking MCP over
// stdio, or a remote server over Streamable HTTP (or the older HTTP+SSE
// transport) with headers such as a bearer token:
//
//	github, err := mcp.Connect(ctx, mcp.ServerConfig{
//		Name:    "github",
//		URL:     "https://api.githubcopilot.com/mcp/",
//		Headers: map[string]string{"Authorization": "Bearer " + token},
//	}, mcp.WithPrefix("github_"))
//	files, err := mcp.Connect(ctx, mcp.ServerConfig{
//		Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
//	}, mcp.WithPrefix("fs_"))
//	agent := &runlet.Agent{Model: m, Toolsets: []runlet.Toolset{github, files}}
//
// The Toolset follows the server: when it sends
// notifications/tools/list_changed, the agent sees the new list from its
// next model call on; when it goes away (the process exits, the HTTP
// session expires), the next call reconnects, with bounded retries and
// backoff ([WithRetry]). Calls in flight when the connection breaks, and
// calls while the server stays unreachable, fail with error results the
// model can act on. Close the Toolset when done.
//
// For a session you manage yourself, [Tools] takes a snapshot of its tools:
//
//	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "my-app", Version: "v1.0.0"}, nil)
//	session, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: exec.Command("my-server")}, nil)
//	if err != nil { ... }
//	defer session.Close()
//	tools, err := mcp.Tools(ctx, session, mcp.WithPrefix("files_"))
//	agent := &runlet.Agent{Model: m, Tools: tools}
//
// Each tool's spec comes from the server: its name (see below), its
// description (or title, when it has no description) and its input schema.
// A call sends tools/call with the model's JSON arguments. In a run (the
// tool is a runlet.PartsTool) the model gets the result's content with its
// kinds kept, as runlet parts in order:
//
//   - text content as text, content blocks on lines of their own;
//   - images and audio as runlet.ImagePart and runlet.AudioPart;
//   - an embedded blob resource as the part its MIME type says (image,
//     audio, else a runlet.FilePart named after its URI), an embedded text
//     resource as text headed by "[resource URI]";
//   - a resource link to an http(s) URL as an image or file by URL; any
//     other link, which a provider cannot fetch, as the text
//     "[resource link NAME: URI]";
//   - structuredContent as the result's structured value
//     (runlet.ToolResultPart.Structured), and as its text when there is no
//     text content.
//
// A tool that declares an output schema is held to it, as the MCP
// specification asks of clients: a result without structured content, or
// whose structured content does not match the schema, is an error (an
// is-error result in a run). Call, for a caller that wants text only,
// gives the same content as text, other content summarised, such as
// "[image image/png, 1234 bytes]".
//
// A result the server marks isError becomes a [*ToolError] whose message is
// that text, so the runtime gives the model an is-error tool result and the
// model can correct itself. A protocol failure (unknown tool, closed
// connection, ...) is returned as an error too. Cancelling the call's context
// cancels the request on the server (the SDK sends notifications/cancelled)
// and Call returns at once.
//
// # Serving agents and tools
//
// [AddAgent] adds an agent to an SDK server as one tool that takes a prompt
// (and, with Sessions, a session ID); [AddTools] adds runlet tools as they
// are, every call running through the Runtime's tool executor
// (runlet.Runtime.CallTool: schema checks, timeout, output cap, recovered
// panics). What a served tool or agent returns beyond text keeps its kind:
// images and audio as image and audio content, an inline file as an
// embedded resource (URI "runlet:" and its name; text for a text/* file),
// media by URL as resource links, a structured value as
// structuredContent; an agent's answer whose final message holds images,
// files or audio is served with them. Serve the server on stdio with [ServeStdio], for a client that
// starts it as a subprocess (Claude Desktop, Claude Code, Cursor), or over
// Streamable HTTP with [HTTPHandler]:
//
//	server := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "research", Version: "v1.0.0"}, nil)
//	err := mcp.AddAgent(server, mcp.AgentTool{Agent: agent, Description: "Researches a topic."})
//	err = mcp.ServeStdio(ctx, server)
//
// Over HTTP the clients are strangers, and [HTTPHandler] bounds what they
// can do ([HTTPOptions]): web pages of origins not allowed get 403 (the MCP
// specification's protection against DNS rebinding), bodies are bounded
// in size and in the time they take to arrive, each write of a response in
// time (a client that stops reading loses its connection), sessions in
// number and idle time, and requests and tool calls in how many run at
// once:
//
//	http.Handle("/mcp", mcp.HTTPHandler(server, &mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}}))
//	err = (&http.Server{Addr: "127.0.0.1:8080", ReadHeaderTimeout: 10 * time.Second}).ListenAndServe()
//
// The command `runlet mcp serve --config agent.yaml` does this for an agent
// described in YAML.
//
// # Tool names
//
// MCP allows tool names of up to 128 characters with dots, while model
// providers are stricter: OpenAI requires ^[a-zA-Z0-9_-]{1,64}$, and
// others have similar rules. So the runlet name is the prefix (see [WithPrefix])
// plus the MCP name with every other character replaced by '_', and a name
// longer than 64 bytes is cut to 55 and ends in '_' and 8 hex digits of a
// hash of the full name, which keeps long names distinct. The MCP name is
// what is sent to the server. Of two tools of a server whose names become
// the same, the one the server lists first keeps the name and the other is
// left out, with a warning in the log ([WithLogger]); [WithFilter] chooses
// otherwise. A name taken by another tool of the agent is handled by the
// runtime (see runlet.Toolset): the agent's own tools win.
//
// # A server is input
//
// A server may be slow, broken or hostile; what it sends is bounded (see
// [Limits], set with [WithLimits]):
//
//   - time: a connection attempt, a tools/list and a tools/call each have
//     a timeout (30s, 30s and 5m by default); the error is a [*LimitError]
//     naming the limit;
//   - size: a tools/list takes at most 100 pages and 1000 tools; a message
//     from the server (a tool's result, a page of tools) at most 16 MiB, over
//     stdio, Streamable HTTP and SSE alike, and over HTTP it is not read past
//     that; a tool description is cut at 8 KiB, and a tool whose input
//     schema is over 64 KiB (or invalid) is left out;
//   - text: names and descriptions are made valid UTF-8 without control
//     characters (other than newline and tab) or bidirectional controls
//     before a model or a log sees them;
//   - errors: a 401 or 403 answer is an [*AuthError] saying that a token is
//     needed, and is not retried; a request the transport could not deliver
//     (the server is down) drops the connection, so the next call connects
//     again; malformed JSON-RPC fails the call or ends the connection,
//     never the program.
//
// [Tools] is a snapshot: call it again to see tools the server added later
// (the SDK's ClientOptions.ToolListChangedHandler tells you when), or use
// [Connect].
package mcp
