package client

import (
	"testing"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

func TestTextHasStableSpacing(t *testing.T) {
	msg := &pb.ModelInferRequest{ModelName: "square_int32", Id: "0",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{{Name: "IN", Datatype: "INT32", Shape: []int64{1}}}}
	want := `> model_name: "square_int32"
> id: "0"
> inputs: {
>   name: "IN"
>   datatype: "INT32"
>   shape: 1
> }
`
	if got := Text(msg, "> "); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
