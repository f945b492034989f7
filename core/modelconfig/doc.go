// Package modelconfig reads, completes, checks and serialises Triton model
// configurations (config.pbtxt) for tritonhost.
//
// The life of a configuration mirrors Triton's model loading:
//
//  1. Parse or ReadFile decodes the protobuf text format into a
//     configpb.ModelConfig.
//  2. Normalize fills in what Triton fills in before a model loads: the
//     name, backend fields derivable from the name, the version policy,
//     batcher defaults, pinned-memory defaults and the instance groups
//     (which needs the server's GPU list).
//  3. Validate checks the normalized configuration the way Triton's
//     ValidateModelConfig, ValidateModelIOConfig and ValidateInstanceGroup
//     do, and an ensemble's own configuration (its steps and data flow) as
//     ValidateEnsembleSchedulingConfig does, with Triton's messages. What
//     needs the configurations of the models an ensemble runs is checked
//     by core when the ensemble loads.
//  4. ToJSON renders the configuration byte-for-byte the way Triton hands it
//     to backends through TRITONBACKEND_ModelConfig; FromJSON reads a JSON
//     configuration back, as a backend passes it to
//     TRITONBACKEND_ModelSetConfig.
//
// SelectVersions applies a version policy to the versions found on disk.
//
// Every error caused by a bad configuration wraps ErrInvalid and names the
// model and the offending field.
package modelconfig
