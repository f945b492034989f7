// Package configpb holds the Go types generated from proto/model_config.proto,
// tritonhost's copy of Triton's ModelConfig schema (protobuf package
// "inference"). Regenerate with `make proto`; do not edit the .pb.go file.
//
// Parsing, defaulting, validation and the JSON form handed to backends live
// in package tritonhost/core/modelconfig.
package configpb
