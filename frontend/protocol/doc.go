// Package protocol holds what Triton's gRPC and HTTP/REST protocols have in
// common above their encodings, so both frontends behave alike: the
// request parameters the protocol reserves and how they configure a
// request, model versions as strings, model metadata, the server's
// protocol extensions, and the runtime log settings.
//
// Each frontend decodes its own wire format into the neutral values here
// (Value, LogValue) and encodes what comes back; the rules live once.
package protocol
