package modelconfig

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tritonhost/tritonhost/core/configpb"
)

func TestFromJSONAcceptsWhatBackendsSend(t *testing.T) {
	want := &configpb.ModelConfig{
		Name:         "m",
		MaxBatchSize: 8,
		Input: []*configpb.ModelInput{{
			Name: "IN", DataType: configpb.DataType_TYPE_INT32, Dims: []int64{-1, 3},
		}},
		SchedulingChoice: &configpb.ModelConfig_DynamicBatching{DynamicBatching: &configpb.ModelDynamicBatching{
			MaxQueueDelayMicroseconds: 100,
		}},
	}
	tests := []struct {
		name string
		json string
	}{
		{"numbers as ToJSON writes them",
			`{"name":"m","max_batch_size":8,"input":[{"name":"IN","data_type":"TYPE_INT32","dims":[-1,3]}],"dynamic_batching":{"max_queue_delay_microseconds":100}}`},
		{"int64 as strings, as protobuf writes them",
			`{"name":"m","max_batch_size":8,"input":[{"name":"IN","data_type":"TYPE_INT32","dims":["-1","3"]}],"dynamic_batching":{"max_queue_delay_microseconds":"100"}}`},
		{"enum by number",
			`{"name":"m","max_batch_size":8,"input":[{"name":"IN","data_type":8,"dims":[-1,3]}],"dynamic_batching":{"max_queue_delay_microseconds":100}}`},
		{"enum in lower case",
			`{"name":"m","max_batch_size":8,"input":[{"name":"IN","data_type":"type_int32","dims":[-1,3]}],"dynamic_batching":{"max_queue_delay_microseconds":100}}`},
		{"camelCase names",
			`{"name":"m","maxBatchSize":8,"input":[{"name":"IN","dataType":"TYPE_INT32","dims":[-1,3]}],"dynamicBatching":{"maxQueueDelayMicroseconds":100}}`},
		{"whitespace and defaults",
			"{\n  \"name\": \"m\", \"platform\": \"\", \"max_batch_size\": 8,\n  \"input\": [ { \"name\": \"IN\", \"data_type\": \"TYPE_INT32\", \"dims\": [ -1, 3 ], \"optional\": false } ],\n  \"batch_input\": [], \"parameters\": {},\n  \"dynamic_batching\": { \"max_queue_delay_microseconds\": 100 }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromJSON([]byte(tt.json))
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if !proto.Equal(got, want) {
				t.Errorf("FromJSON = %v, want %v", got, want)
			}
		})
	}
}

func TestFromJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []string
	}{
		{"unknown field", `{"name":"m","bogus_field":1}`, []string{"unknown field", "bogus_field"}},
		{"unknown nested field", `{"input":[{"name":"IN","dimz":[1]}]}`, []string{"unknown field", "dimz"}},
		{"unknown enum", `{"input":[{"data_type":"TYPE_NOPE"}]}`, []string{"TYPE_NOPE"}},
		{"wrong type", `{"max_batch_size":"eight"}`, []string{"maxBatchSize", "eight"}},
		{"empty document", ``, []string{"parse model config JSON"}},
		{"not an object", `[1]`, []string{"parse model config JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromJSON([]byte(tt.json))
			wantErr(t, err, tt.want...)
		})
	}
}
