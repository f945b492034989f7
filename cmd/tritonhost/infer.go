package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tritonhost/tritonhost/client"
	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// inferOptions are the infer command's flags.
type inferOptions struct {
	URL     string
	Model   string
	Version int64
	ID      string
	Inputs  []string
	Outputs []string
	Params  []string
	Mode    string // auto, stream, unary
	JSON    bool
	Timeout time.Duration

	request client.Request
}

func newInferCommand() *cobra.Command {
	o := &inferOptions{}
	cmd := &cobra.Command{
		Use:   "infer MODEL --input NAME:DATATYPE:SHAPE:VALUES... [flags]",
		Short: "Send one inference request and print every response",
		Long: `Send one inference request to a Triton-protocol server and print each
response as it arrives, with the request id and whether it is the final one.

An input is NAME:DATATYPE:SHAPE:VALUES, where SHAPE is dimensions joined by
"x" (4, 2x3; "" for a scalar) and VALUES are comma-separated (for BYTES, the
strings). Decoupled models are reached over a stream automatically.`,
		Example: `  tritonhost infer repeat_int32 -i IN:INT32:4:4,2,0,1 -i DELAY:UINT32:4:1,2,3,4 -i WAIT:UINT32:1:5
  tritonhost infer square_int32 -i IN:INT32:1:3 --json
  tritonhost infer identity_fp32 -i INPUT0:FP32:1x3:0.5,1,2 --mode unary`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Model = args[0]
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.URL, "url", "u", "localhost:8001", "server address")
	f.Int64Var(&o.Version, "model-version", 0, "model version (0: the newest)")
	f.StringVar(&o.ID, "id", "0", "request id")
	f.StringArrayVarP(&o.Inputs, "input", "i", nil, "input tensor NAME:DATATYPE:SHAPE:VALUES (repeatable)")
	f.StringArrayVarP(&o.Outputs, "output", "o", nil, "output to return (repeatable; default: all)")
	f.StringArrayVarP(&o.Params, "param", "p", nil, "request parameter KEY=VALUE (true/false, integers, decimals, else a string; repeatable)")
	f.StringVar(&o.Mode, "mode", "auto", "auto (stream for decoupled models), stream or unary")
	f.BoolVar(&o.JSON, "json", false, "print one JSON object per response")
	f.DurationVar(&o.Timeout, "timeout", time.Minute, "give up after this long")
	return cmd
}

// Complete parses inputs and parameters into the request.
func (o *inferOptions) Complete() error {
	o.request = client.Request{Model: o.Model, Version: o.Version, ID: o.ID, Outputs: o.Outputs, Params: map[string]any{}}
	for _, spec := range o.Inputs {
		t, err := parseTensor(spec)
		if err != nil {
			return fmt.Errorf("--input %q: %w", spec, err)
		}
		o.request.Inputs = append(o.request.Inputs, t)
	}
	for _, p := range o.Params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return fmt.Errorf("--param %q: want KEY=VALUE", p)
		}
		o.request.Params[k] = parseParamValue(v)
	}
	return nil
}

// Validate checks the flags.
func (o *inferOptions) Validate() error {
	switch o.Mode {
	case "auto", "stream", "unary":
	default:
		return fmt.Errorf("--mode %q: want auto, stream or unary", o.Mode)
	}
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}

func parseParamValue(v string) any {
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}

// parseTensor reads NAME:DATATYPE:SHAPE:VALUES.
func parseTensor(spec string) (client.Tensor, error) {
	parts := strings.SplitN(spec, ":", 4)
	if len(parts) != 4 {
		return client.Tensor{}, errors.New("want NAME:DATATYPE:SHAPE:VALUES")
	}
	name, dt, shapeSpec, values := parts[0], strings.ToUpper(parts[1]), parts[2], parts[3]
	var shape []int64
	if shapeSpec != "" {
		for _, d := range strings.Split(shapeSpec, "x") {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n < 0 {
				return client.Tensor{}, fmt.Errorf("shape %q: dimension %q is not a non-negative integer", shapeSpec, d)
			}
			shape = append(shape, n)
		}
	}
	var vals []string
	if values != "" {
		vals = strings.Split(values, ",")
	}
	data, err := encodeValues(dt, vals)
	if err != nil {
		return client.Tensor{}, err
	}
	return client.Tensor{Name: name, Datatype: dt, Shape: shape, Data: data}, nil
}

// Run sends the request and prints the responses.
func (o *inferOptions) Run(ctx context.Context, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, c, err := client.Dial(o.URL, 0)
	if err != nil {
		return err
	}
	defer conn.Close()
	stream := o.Mode == "stream"
	if o.Mode == "auto" {
		cfg, err := c.ModelConfig(ctx, &pb.ModelConfigRequest{Name: o.Model})
		if err != nil {
			return fmt.Errorf("model %q: %w", o.Model, err)
		}
		stream = cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled()
	}
	if !stream {
		msg, err := o.request.Message()
		if err != nil {
			return err
		}
		resp, err := c.ModelInfer(ctx, msg)
		if err != nil {
			return err
		}
		return printResponse(w, o.JSON, client.Result{ID: resp.GetId(), Response: resp, Final: true})
	}
	s, err := client.OpenStream(ctx, c)
	if err != nil {
		return err
	}
	o.request.Params[client.EmptyFinalParam] = true
	if err := s.Send(o.request); err != nil {
		return err
	}
	if err := s.CloseSend(); err != nil {
		return err
	}
	var failed error
	for {
		res, err := s.Recv()
		if err == io.EOF {
			return failed
		}
		if err != nil {
			return err
		}
		if res.Err != nil {
			failed = fmt.Errorf("request %q: %w", res.ID, res.Err)
		}
		if err := printResponse(w, o.JSON, res); err != nil {
			return err
		}
	}
}

// printedTensor is an output as printed.
type printedTensor struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
	Data     []any   `json:"data"`
}

type printedResponse struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Version string          `json:"version"`
	Final   bool            `json:"final"`
	Error   string          `json:"error,omitempty"`
	Outputs []printedTensor `json:"outputs"`
}

func printResponse(w io.Writer, asJSON bool, res client.Result) error {
	p := printedResponse{ID: res.ID, Final: res.Final, Outputs: []printedTensor{}}
	if res.Err != nil {
		p.Error = res.Err.Error()
	}
	if r := res.Response; r != nil {
		p.Model, p.Version = r.GetModelName(), r.GetModelVersion()
		outs, err := client.Outputs(r)
		if err != nil {
			return err
		}
		for _, t := range outs {
			vals, err := t.Values()
			if err != nil {
				return err
			}
			p.Outputs = append(p.Outputs, printedTensor{Name: t.Name, Datatype: t.Datatype, Shape: t.Shape, Data: vals})
		}
	}
	if asJSON {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "id=%s final=%t", p.ID, p.Final)
	if p.Error != "" {
		fmt.Fprintf(&b, " error=%q", p.Error)
	}
	for _, t := range p.Outputs {
		fmt.Fprintf(&b, " %s %s %v = %v", t.Name, t.Datatype, t.Shape, t.Data)
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}
