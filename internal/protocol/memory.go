package protocol

import (
	"slices"
	"sync"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

// RequestMemory is the system shared memory one request uses: the leases
// of its inputs and outputs, and the model's buffer the request was
// received into (Received), released together when the request is
// finished (or refused), and where each output goes. Each frontend parses
// the tensor parameters that name a region in its own encoding and leases
// the spans through it. The zero value uses no memory. Input and Output
// are called while the request is decoded, by one goroutine; Place and
// Release may be called from any goroutine after that.
type RequestMemory struct {
	leases  []*sharedmem.Lease
	outputs map[string]*sharedmem.Lease // by output name
	// received is the buffer from the model (core.Model.InputBuffer) the
	// request was received into, if any: its inputs' data lie there.
	received core.InputBuffer
	once     sync.Once
}

// Received makes b, the buffer the request was received into, the
// request's: released with its leases.
func (rm *RequestMemory) Received(b core.InputBuffer) { rm.received = b }

// Input leases byteSize bytes from offset of region for an input and
// returns the input's data, copied into host memory of the server's own
// (Lease.Read). Errors are the registry's, in Triton's words.
func (rm *RequestMemory) Input(reg *sharedmem.Registry, region string, offset, byteSize uint64) ([]byte, error) {
	l, err := reg.Acquire(region, offset, byteSize)
	if err != nil {
		return nil, err
	}
	rm.leases = append(rm.leases, l)
	return l.Read()
}

// Output leases byteSize bytes from offset of region for the output name,
// checked now, as Triton checks them before the request runs; Place writes
// the output there.
func (rm *RequestMemory) Output(reg *sharedmem.Registry, name, region string, offset, byteSize uint64) error {
	l, err := reg.Acquire(region, offset, byteSize)
	if err != nil {
		return err
	}
	rm.leases = append(rm.leases, l)
	if rm.outputs == nil {
		rm.outputs = map[string]*sharedmem.Lease{}
	}
	rm.outputs[name] = l
	return nil
}

// Used reports whether the request leased any memory (then Release must be
// called once core is done with it: set it as the request's Finished).
func (rm *RequestMemory) Used() bool { return rm != nil && (len(rm.leases) > 0 || rm.received != nil) }

// InShared reports whether the output name goes to shared memory.
func (rm *RequestMemory) InShared(name string) bool {
	return rm != nil && rm.outputs[name] != nil
}

// Release ends every lease; later calls do nothing.
func (rm *RequestMemory) Release() {
	if rm == nil {
		return
	}
	rm.once.Do(func() {
		for _, l := range rm.leases {
			l.Release()
		}
		if rm.received != nil {
			rm.received.Release()
		}
	})
}

// Place writes the outputs of resp that the client placed in shared memory
// into their regions, and returns the response to send: those outputs
// keep their name, data type and shape but carry no data, as in Triton.
// An output larger than its region turns the response into Triton's
// error. It runs before the request is finished, while the leases hold.
// The response returned holds resp's lent memory, if any (resp no longer
// does).
func (rm *RequestMemory) Place(resp *core.Response) *core.Response {
	if rm == nil || len(rm.outputs) == 0 || resp == nil || resp.Err != nil {
		return resp
	}
	out := *resp
	resp.Lent = nil // now out's
	out.Outputs = slices.Clone(resp.Outputs)
	for i := range out.Outputs {
		o := &out.Outputs[i]
		l := rm.outputs[o.Name]
		if l == nil {
			continue
		}
		if uint64(len(o.Data)) > l.Size() {
			out.Free()
			return &core.Response{Err: core.Errorf(core.CodeInternal,
				"shared memory size specified with the request for output '%s' (%d bytes) should be at least %d bytes to hold the results",
				o.Name, l.Size(), len(o.Data))}
		}
		if err := l.Write(o.Data); err != nil { // to the device for a CUDA region
			out.Free()
			return &core.Response{Err: err}
		}
		o.Data = nil
	}
	return &out
}
