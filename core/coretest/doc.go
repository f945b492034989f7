// Package coretest is a Go-native fake backend and the helpers that tests of
// core and of its frontends need to drive a core.Server without cgo.
//
// A Provider is a core.BackendProvider whose models run in Go. Each model
// does what the Behaviour the test chose for it says: answer once (Echo),
// several times (Times), stream and end with a flags-only final (Stream;
// ReportedStream for a long stream that costs little and reports response
// statistics),
// never answer until a Gate opens (Detached, After), fail Execute (Fail),
// answer from another goroutine after releasing the request (Async, which
// holds the request with Request.Hold and Drop), wait (Gated, Delayed) or
// wait for the client to cancel (AwaitCancel). A Behaviour decides what
// happens to the batch and who owns its requests; an Answer decides what one
// request is sent; tests combine the two, or write their own.
//
// The Provider's lifecycle calls (LoadModel, NewInstance, the Finalize
// calls) can be made to fail (FailLoad, FailInstance) or to hang until a
// Gate opens (Hang), as a backend stuck in C would.
//
// The Provider records what the server asked of it (Events: loads,
// instances, finalizations), every execution (Executions, Batches) and every
// call a behaviour made for a request with what it returned (Calls), so a
// test can check the backend's side as well as the client's.
//
// Start writes a model repository into t.TempDir from configuration text,
// starts a core.Server over it and stops it at cleanup, failing the test if
// a request is still live or a goroutine the server started outlives it
// (Track, which tests can use for other servers too). A Collector receives a
// request's responses and checks the ResponseFunc contract as they arrive.
// Waiting is always for something that must happen, bounded by
// testenv.Patience: Provider.Reached and WaitCalls, Collector.Wait, and
// Settle, which waits for the goroutines a call set off
// (context.AfterFunc's, say); for a condition nothing signals, tests use
// testenv.WaitUntil. A server's log goes to a testenv.LogBuffer when a
// test reads it.
//
//	p := coretest.NewProvider().Set("m", coretest.Answering(coretest.Stream(3)))
//	srv := coretest.Start(t, p, coretest.ModelDir{Name: "m", Config: cfg})
//	got := coretest.Infer(t, srv, coretest.Request("m", "r1", coretest.Int32Input("INPUT0", []int64{2}, 1, 2))).Wait(t)
package coretest
