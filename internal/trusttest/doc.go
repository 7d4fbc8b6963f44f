// Package trusttest holds the tests every provider adapter passes on the
// HTTP trust boundary (issue 22): a key stays with its host across
// redirects, never travels in clear text off loopback, never prints, and
// a response is read within a bounded amount of memory. The tests run one
// table over every adapter (OpenAI Chat Completions and Responses, an
// OpenAI-compatible preset, Anthropic, Gemini), so a new adapter is one
// more row.
package trusttest
