package protocol

import "context"

// WatchedContext is the context a handler that cancels its request itself
// whenever it stops waiting for the response (the client gone included)
// gives core.Server.SubmitCancelable: none, so that core does not watch
// ctx too (a context.AfterFunc, five allocations a request), unless ctx
// has ended already, when core refuses the request.
func WatchedContext(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.Background()
}
