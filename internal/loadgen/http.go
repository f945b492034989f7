package loadgen

import (
	"context"
	"time"

	"github.com/tritonhost/tritonhost/client"
)

// httpSender posts the request, encoded once (client.BinaryInfer), and
// waits for its whole answer.
type httpSender struct {
	ctx    context.Context
	client *client.HTTP
	req    *client.BinaryInfer
}

func (h *httpSender) call(string) outcome {
	o := outcome{sent: time.Now()}
	o.err = h.client.InferDiscard(h.ctx, h.req)
	o.done = time.Now()
	if o.err == nil {
		o.responses, o.first = 1, o.done
	}
	return o
}

func (h *httpSender) close() {}
