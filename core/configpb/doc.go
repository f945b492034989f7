// Package configpb holds the Go types generated from proto/model_config.proto,
// tritonhost's copy of Triton's ModelConfig schema (protobuf package
// "inference"). Regenerate with `make proto`; do not edit the .pb.go file.
//
// Parsing, defaulting, validation and the JSON form handed to backends live
// in package tritonhost/core/modelconfig.
//
// API: core's exported types carry a model's configuration in these types
// (a Go-native backend reads its model's and its instance group's from
// them), and so do client's model config answers.
package configpb
