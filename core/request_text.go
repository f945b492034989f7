package core

import (
	"strconv"
	"strings"
)

// The words of Triton's request validation (core src/infer_request.cc,
// InferenceRequest::Normalize and ValidateRequestInputs), reproduced
// exactly: clients and Triton's own tests match them. Where tritonhost says
// more, it says it after Triton's text.

// requestPrefix is Triton's InferenceRequest::LogRequest: the prefix of the
// messages about one request.
func requestPrefix(id string) string {
	if id == "" {
		id = "<id_unknown>"
	}
	return "[request id: " + id + "] "
}

// LogPrefix returns "[request id: <id>] ", which Triton puts before the
// messages of errors about one request ("<id_unknown>" when it has none).
func (r *Request) LogPrefix() string { return requestPrefix(r.ID()) }

// protocolName is a data type's name as Triton's messages spell it.
func protocolName(d DataType) string {
	if !d.Valid() {
		return "<invalid>"
	}
	return d.String()
}

// dimsString is Triton's DimsListToString: "[1,-1,3]".
func dimsString(dims []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range dims {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// quotedList is the list in Triton's missing-input message: "['A','B']";
// "[]" when empty.
func quotedList(names []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("'" + n + "'")
	}
	b.WriteByte(']')
	return b.String()
}

// batchNote is what Triton adds to a shape error of a model that batches.
const batchNote = "NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended to each input shape. If you want to specify the full shape including the batch dim in your input dims config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size."

// shapeError refuses an input whose shape does not fit the configuration's
// dims (with the batch dimension as -1 when the model batches).
func shapeError(id, model, input string, maxBatch int64, dims, got []int64) error {
	full := dims
	note := ""
	if maxBatch > 0 {
		full = append([]int64{-1}, dims...)
		note = batchNote
	}
	return Errorf(CodeInvalidArg, "%sunexpected shape for input '%s' for model '%s'. Expected %s, got %s. %s",
		requestPrefix(id), input, model, dimsString(full), dimsString(got), note)
}

// missingInputsError refuses a request with the wrong number of inputs in
// Triton's two forms: an exact count when the model has no optional input,
// a range otherwise. With no input missing (too many were given) Triton's
// list of missing inputs reads "]", and so does this one.
func missingInputsError(id, model string, total, required int, given, missing []string) error {
	missingList := "]"
	if len(missing) > 0 {
		missingList = quotedList(missing)
	}
	expected := "expected " + strconv.Itoa(total) + " inputs"
	if total != required {
		expected = "expected number of inputs between " + strconv.Itoa(required) + " and " + strconv.Itoa(total)
	}
	return Errorf(CodeInvalidArg, "%s%s but got %d inputs for model '%s'. Got input(s) %s, but missing required input(s) %s. Please provide all required input(s).",
		requestPrefix(id), expected, len(given), model, quotedList(given), missingList)
}

// byteSizeError refuses an input whose contents are not the size its shape
// and data type call for.
func byteSizeError(id, model, input string, want int64, got uint64) error {
	return Errorf(CodeInvalidArg, "%sinput byte size mismatch for input '%s' for model '%s'. Expected %d, got %d",
		requestPrefix(id), input, model, want, got)
}
