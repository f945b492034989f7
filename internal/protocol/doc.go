// Package protocol holds what Triton's gRPC and HTTP/REST protocols have in
// common above their encodings, so both frontends behave alike and say
// the same words: the request parameters the protocol reserves and how they
// configure a request, model versions as strings (Triton's parsing and
// messages), model lookup, readiness and metadata, the server's id and
// protocol extensions, the system shared memory a request leases, and the
// runtime log settings.
//
// Each frontend decodes its own wire format into the neutral values here
// (Value, LogValue) and encodes what comes back; the rules live once.
// Where Triton's frontends word a message differently for each encoding
// (a parameter of the wrong type), the frontend keeps its own.
//
// Not API: what the frontends share among themselves, so it is internal.
// A program that embeds a server imports the frontends (grpcserver,
// httpserver) and sets their Options; the two fields there of types from
// this package (LogControl, Restrictions) are for `tritonhost serve`, and
// a program outside this module leaves them nil, which gives each
// frontend a log control of its own and restricts nothing. The per-request
// limits (limits.go) are the server's, named once here for both frontends,
// the flags and docs/limits.md.
package protocol
