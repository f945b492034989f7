package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/client"
	"github.com/tritonhost/tritonhost/internal/datatype"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// prepare builds the request perf sends: the --input tensors, and every
// other input of the model made from its metadata (zeros). It also decides
// between unary calls and a stream.
func (o *perfOptions) prepare(ctx context.Context, srv *perfServer) error {
	version := versionString(o.Version)
	cfg, err := srv.ModelConfig(ctx, &pb.ModelConfigRequest{Name: o.Model, Version: version})
	if err != nil {
		return fmt.Errorf("model %q: %w", o.Model, err)
	}
	meta, err := srv.ModelMetadata(ctx, &pb.ModelMetadataRequest{Name: o.Model, Version: version})
	if err != nil {
		return fmt.Errorf("model %q: %w", o.Model, err)
	}
	decoupled := cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled()
	if decoupled && o.Protocol == "http" {
		return fmt.Errorf("model %q is decoupled: HTTP infer refuses it (generate_stream serves it, with JSON); measure it with --protocol grpc", o.Model)
	}
	o.stream = o.Mode == "stream" || o.Mode == "auto" && decoupled

	req := client.Request{Model: o.Model, Version: o.Version, Params: map[string]any{}}
	given := map[string]bool{}
	for _, spec := range o.Inputs {
		t, err := parseTensor(spec)
		if err != nil {
			return fmt.Errorf("--input %q: %w", spec, err)
		}
		given[t.Name] = true
		req.Inputs = append(req.Inputs, t)
	}
	shapes, err := parseShapes(o.Shapes)
	if err != nil {
		return err
	}
	batching := cfg.GetConfig().GetMaxBatchSize() > 0
	for _, in := range meta.GetInputs() {
		if given[in.GetName()] {
			continue
		}
		t, err := zeroInput(in, shapes[in.GetName()], batching)
		if err != nil {
			return fmt.Errorf("model %q: %w", o.Model, err)
		}
		req.Inputs = append(req.Inputs, t)
	}
	for _, p := range o.Params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return fmt.Errorf("--param %q: want KEY=VALUE", p)
		}
		req.Params[k] = parseParamValue(v)
	}
	o.request, err = req.Message()
	return err
}

// parseShapes reads --shape NAME:D1,D2,...
func parseShapes(specs []string) (map[string][]int64, error) {
	shapes := map[string][]int64{}
	for _, spec := range specs {
		name, dims, ok := strings.Cut(spec, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("--shape %q: want NAME:D1,D2,...,DN", spec)
		}
		var shape []int64
		for _, d := range strings.Split(dims, ",") {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--shape %q: %q is not a dimension", spec, d)
			}
			shape = append(shape, n)
		}
		shapes[name] = shape
	}
	return shapes, nil
}

// zeroInput makes an input of zeros shaped as the metadata says: a batch
// of 1 for batching models, the --shape given for variable dimensions.
func zeroInput(in *pb.ModelMetadataResponse_TensorMetadata, shape []int64, batching bool) (client.Tensor, error) {
	if shape == nil {
		shape = append([]int64(nil), in.GetShape()...)
		for i, d := range shape {
			switch {
			case d >= 0:
			case i == 0 && batching:
				shape[i] = 1
			default:
				return client.Tensor{}, fmt.Errorf("input %q has variable dims %v: give --shape %s:... or --input", in.GetName(), in.GetShape(), in.GetName())
			}
		}
	}
	n := int64(1)
	for _, d := range shape {
		n *= d
		if n > 1<<28 {
			return client.Tensor{}, fmt.Errorf("input %q: shape %v is too large to generate", in.GetName(), shape)
		}
	}
	var data []byte
	if in.GetDatatype() == "BYTES" {
		data = make([]byte, 4*n) // n empty strings
	} else {
		size, ok := datatype.Size(in.GetDatatype())
		if !ok {
			return client.Tensor{}, fmt.Errorf("input %q: cannot generate %s data", in.GetName(), in.GetDatatype())
		}
		data = make([]byte, n*int64(size))
	}
	return client.Tensor{Name: in.GetName(), Datatype: in.GetDatatype(), Shape: shape, Data: data}, nil
}
