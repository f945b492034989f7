package modelconfig

import (
	"slices"
	"testing"

	"github.com/tritonhost/tritonhost/core/configpb"
)

func latest(n uint32) *configpb.ModelVersionPolicy {
	return &configpb.ModelVersionPolicy{PolicyChoice: &configpb.ModelVersionPolicy_Latest_{
		Latest: &configpb.ModelVersionPolicy_Latest{NumVersions: n}}}
}

func specific(v ...int64) *configpb.ModelVersionPolicy {
	return &configpb.ModelVersionPolicy{PolicyChoice: &configpb.ModelVersionPolicy_Specific_{
		Specific: &configpb.ModelVersionPolicy_Specific{Versions: v}}}
}

var all = &configpb.ModelVersionPolicy{PolicyChoice: &configpb.ModelVersionPolicy_All_{
	All: &configpb.ModelVersionPolicy_All{}}}

func TestSelectVersions(t *testing.T) {
	tests := []struct {
		name      string
		policy    *configpb.ModelVersionPolicy
		available []int64
		want      []int64
	}{
		{"nil policy is latest 1", nil, []int64{1, 3, 2}, []int64{3}},
		{"empty policy is latest 1", &configpb.ModelVersionPolicy{}, []int64{1, 3, 2}, []int64{3}},
		{"latest 1", latest(1), []int64{7, 2}, []int64{7}},
		{"latest 0 counts as 1", latest(0), []int64{7, 2}, []int64{7}},
		{"latest 2 ascending", latest(2), []int64{10, 2, 9, 1}, []int64{9, 10}},
		{"latest more than available", latest(5), []int64{2, 1}, []int64{1, 2}},
		{"latest of nothing", latest(1), nil, []int64{}},
		{"all", all, []int64{3, 1, 2, 2}, []int64{1, 2, 3}},
		{"specific present only", specific(4, 1, 9), []int64{1, 2, 3, 4}, []int64{1, 4}},
		{"specific none present", specific(9), []int64{1}, nil},
		{"duplicates on disk ignored", latest(2), []int64{5, 5, 4}, []int64{4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.available)
			got := SelectVersions(tt.policy, tt.available)
			if !slices.Equal(got, tt.want) {
				t.Errorf("SelectVersions = %v, want %v", got, tt.want)
			}
			if !slices.Equal(in, tt.available) {
				t.Errorf("SelectVersions modified its input: %v", tt.available)
			}
		})
	}
}
