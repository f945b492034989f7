package core

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// Model warmup (model_warmup), as Triton's TritonModelInstance
// GenerateWarmupData and WarmUp: before a version is ready, each of its
// active instances runs every sample whose batch_size is not 0, count
// times (at least once), each time as one batch of batch_size requests
// executed directly on the instance, not through the scheduler. The
// inputs are zeros (zero_data), random bytes (random_data; zeros for
// STRING), or a file under the model directory's warmup/ directory
// (input_data_file: for STRING the whole file, else its first bytes). A
// sample whose responses carry an error fails the load, with Triton's
// text. The load steps run the samples (Model.loadSteps), each sample of
// each instance one call bounded by Options.BackendCallTimeout, once the
// instances exist and are registered with the rate limiter, which the
// samples go through as any execution does.

// maxWarmupBatch bounds a sample's batch_size: the requests one warmup
// execution holds at once.
const maxWarmupBatch = maxInstances

// warmupSample is one model_warmup entry made ready to run. Its buffers
// are shared by every request that runs it, and never written.
type warmupSample struct {
	name   string
	count  uint32  // iterations, at least 1
	batch  int     // requests per execution
	inputs []Input // those the configuration lists, as a client sends them
	extra  []Input // those it does not (a sequence batcher's control inputs), as the backend sees them
}

// warmUp runs m's warmup samples on each active instance, in turn; nothing
// when the configuration has none. It stops at the first failure, and once
// the waiter of the load gave up.
func (m *Model) warmUp(lc *lifecycle) error {
	if len(m.cfg.GetModelWarmup()) == 0 {
		return nil
	}
	samples, err := m.warmupSamples()
	if err != nil {
		return err
	}
	for _, inst := range m.instances {
		if inst.Passive() {
			continue
		}
		for _, s := range samples {
			if lc.givenUp() {
				return errGivenUp
			}
			what := fmt.Sprintf("warmup sample %q on instance %q", s.name, inst.name)
			if err := lc.call(what, func() error { return inst.warmUp(s) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// warmUp runs sample s on the instance, s.count times, each time as one
// batch, and waits for every request of the batch to be finished (its
// final response delivered, released by the backend).
func (i *Instance) warmUp(s *warmupSample) error {
	m := i.model
	for it := uint32(1); it <= s.count; it++ {
		m.log.Verbosef(1, "model '%s' instance %s is running warmup sample '%s' for iteration %d", m.name, i.name, s.name, it)
		var mu sync.Mutex
		var failures []string
		var wg sync.WaitGroup
		collect := func(resp *Response, _ bool) {
			if resp == nil {
				return
			}
			if resp.Err != nil {
				mu.Lock()
				failures = append(failures, resp.Err.Error())
				mu.Unlock()
			}
			resp.Free()
		}
		batch := make([]*Request, s.batch)
		for k := range batch {
			r, err := m.warmupRequest(s, collect)
			if err != nil {
				return err
			}
			wg.Add(1)
			r.onFinished = func(*Request) { wg.Done() }
			batch[k] = r
		}
		i.execute(batch)
		wg.Wait()
		if len(failures) > 0 {
			m.log.Verbosef(1, "model '%s' instance %s failed to run warmup sample '%s'", m.name, i.name, s.name)
			var b strings.Builder
			for _, f := range failures {
				b.WriteString(f)
				b.WriteString("; ")
			}
			return Errorf(CodeInvalidArg, "model %q instance %q: failed to run warmup sample '%s': %s", m.name, i.name, s.name, b.String())
		}
	}
	return nil
}

// warmupRequest makes one request of sample s, whose responses go to fn.
func (m *Model) warmupRequest(s *warmupSample, fn ResponseFunc) (*Request, error) {
	r, err := m.newRequest(&Submission{Inputs: s.inputs}, fn)
	if err != nil {
		return nil, Errorf(CodeInvalidArg, "model %q: model_warmup '%s': %w", m.name, s.name, err)
	}
	r.responder.start = r.requestStart
	if len(s.extra) > 0 {
		r.inputs = append(slices.Clip(r.inputs), s.extra...)
	}
	return r, nil
}

// warmupSamples prepares the samples of m's model_warmup, skipping (and
// logging) those of batch_size 0. A sample the server cannot run fails
// with an error naming the model, the sample and the field.
func (m *Model) warmupSamples() ([]*warmupSample, error) {
	var out []*warmupSample
	for _, w := range m.cfg.GetModelWarmup() {
		if w.GetBatchSize() == 0 {
			m.log.Verbosef(1, "Skipping batch 0 warmup sample '%s'", w.GetName())
			continue
		}
		m.log.Verbosef(1, "Generating warmup sample data for '%s'", w.GetName())
		s, err := m.warmupSample(w)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// warmupSample prepares one sample: its inputs' data, shaped [1]+dims when
// the model batches, and a first request, which checks the inputs as a
// client's would be checked.
func (m *Model) warmupSample(w *configpb.ModelWarmup) (*warmupSample, error) {
	bad := func(format string, args ...any) error {
		return Errorf(CodeInvalidArg, "model %q: model_warmup '%s': %s", m.name, w.GetName(), fmt.Sprintf(format, args...))
	}
	if w.GetBatchSize() > maxWarmupBatch {
		return nil, bad("batch_size %d is more than %d, the most requests a warmup execution may hold", w.GetBatchSize(), maxWarmupBatch)
	}
	s := &warmupSample{name: w.GetName(), count: max(w.GetCount(), 1), batch: int(w.GetBatchSize())}
	names := make([]string, 0, len(w.GetInputs()))
	for name := range w.GetInputs() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		in, err := m.warmupInput(name, w.GetInputs()[name])
		if err != nil {
			return nil, bad("%v", err)
		}
		if m.inputs[name] != nil && !m.sequenceInput(name) {
			s.inputs = append(s.inputs, in)
		} else {
			s.extra = append(s.extra, in)
		}
	}
	if _, err := m.warmupRequest(s, func(*Response, bool) {}); err != nil {
		return nil, err
	}
	return s, nil
}

// warmupInput makes the data of one input of a sample: enough for one
// batch row of its dims, within MaxTensorBytes.
func (m *Model) warmupInput(name string, in *configpb.ModelWarmup_Input) (Input, error) {
	dtype := DataType(in.GetDataType())
	count := int64(0) // Triton counts no element for empty dims
	for k, d := range in.GetDims() {
		if d < 0 {
			return Input{}, fmt.Errorf("warmup setting expects all variable-size dimensions are specified for input '%s'", name)
		}
		if k == 0 {
			count = d
		} else if c, ok := mulInt64(count, d); ok {
			count = c
		} else {
			return Input{}, fmt.Errorf("input '%s': dims %s have more elements than an int64 counts", name, dimsString(in.GetDims()))
		}
	}
	elem := int64(dtype.ByteSize())
	if elem == 0 {
		elem = 4 // a STRING element's length prefix, as Triton sizes it
	}
	size, ok := mulInt64(count, elem)
	if !ok {
		size = -1
	}
	if !ok || size > m.maxTensor.bytes {
		return Input{}, fmt.Errorf("input '%s', dims %s of %s, is %s", name, dimsString(in.GetDims()), dtype, m.maxTensor.tooLarge(size))
	}
	var data []byte
	switch src := in.GetInputDataType().(type) {
	case *configpb.ModelWarmup_Input_ZeroData:
		data = make([]byte, size)
	case *configpb.ModelWarmup_Input_RandomData:
		data = make([]byte, size)
		if dtype != TypeBytes {
			for k := range data {
				data[k] = byte(rand.Uint32())
			}
		}
	case *configpb.ModelWarmup_Input_InputDataFile:
		var err error
		if data, err = m.warmupFile(src.InputDataFile, dtype, size); err != nil {
			return Input{}, fmt.Errorf("input '%s': input_data_file: %w", name, err)
		}
	default:
		return Input{}, fmt.Errorf("%swarmup setting expects input '%s' to have input_data_type set", requestPrefix(""), name)
	}
	shape := slices.Clone(in.GetDims())
	if m.maxBatch > 0 {
		shape = append([]int64{1}, shape...)
	}
	return NewInput(name, dtype, shape, data), nil
}

// warmupFile reads a sample's input_data_file, under the model directory's
// warmup/ directory, through the server's bounded reader: for STRING the
// whole file (at most MaxTensorBytes), else its first size bytes, which it
// must hold.
func (m *Model) warmupFile(file string, dtype DataType, size int64) ([]byte, error) {
	path, err := modelFile(m.dir, "warmup", file)
	if err != nil {
		return nil, err
	}
	if dtype == TypeBytes {
		return m.readFile(path, m.maxTensor, false)
	}
	data, err := m.readFile(path, tensorLimit{bytes: size, setting: m.maxTensor.setting}, true)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) < size {
		// Triton's words (its warmup requests have no id), its missing
		// space included.
		return nil, fmt.Errorf("%swarmup setting expects %d bytes, but the data provided from %sonly has %d bytes", requestPrefix(""), size, file, len(data))
	}
	return data, nil
}
