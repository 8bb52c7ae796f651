// Package geminitest is a loopback fake of the Gemini Developer API's REST protocol, for tests
// that drive the real google.golang.org/genai client (and adk-go's gemini model on top of it)
// without a network.
//
// It serves what the genai client sends for generateContent: POST
// /v1beta/models/{model}:generateContent, answered with one JSON GenerateContentResponse, and POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse, answered with server-sent events (one
// "data: {json}" event per chunk, events separated by a blank line). Requests are decoded from the
// wire format (contents, systemInstruction, tools, toolConfig, safetySettings, generationConfig,
// cachedContent, serviceTier) and, like the real service, a body with an unknown field is refused
// with 400 INVALID_ARGUMENT. Errors are Google API error bodies ({"error": {"code", "message",
// "status", "details"}}) with the matching HTTP status.
//
// Tests script the replies: a queue ([Server.Enqueue]) and then a handler ([Options.Handler])
// that sees each decoded [Request] and returns a [Reply]: text, function calls, usage, finish
// reason, an API error, a non-JSON error page, a stream cut by an error chunk, a reset
// connection, or no reply until the client gives up. Every request is recorded
// ([Server.Requests]) with the usage the fake reported for it. Prompt usage is derived from the
// request ([Options.PromptTokens]) so that token calibration can be exercised.
//
// [Server.ClientConfig] points a genai client, or adk-go's Gemini model (model/gemini.NewModel),
// at the fake.
package geminitest
