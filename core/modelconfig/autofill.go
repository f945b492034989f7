package modelconfig

import (
	"strings"

	"github.com/tritonhost/tritonhost/core/configpb"
)

// Platform, backend and model file names Triton knows (core src/constants.h).
const (
	platformTFGraphDef    = "tensorflow_graphdef"
	platformTFSavedModel  = "tensorflow_savedmodel"
	platformTensorRT      = "tensorrt_plan"
	platformONNX          = "onnxruntime_onnx"
	platformLibTorch      = "pytorch_libtorch"
	platformLibTorchAlt   = "libtorch"
	platformTorchAOTI     = "torch_aoti"
	platformEnsemble      = "ensemble"
	backendTensorFlow     = "tensorflow"
	backendTensorRT       = "tensorrt"
	backendONNX           = "onnxruntime"
	backendOpenVINO       = "openvino"
	backendPyTorch        = "pytorch"
	backendPython         = "python"
	fileTFGraphDef        = "model.graphdef"
	fileTFSavedModel      = "model.savedmodel"
	fileTensorRT          = "model.plan"
	fileONNX              = "model.onnx"
	fileOpenVINO          = "model.xml"
	fileLibTorch          = "model.pt"
	fileTorchAOTI         = "model.pt2"
	filePython            = "model.py"
	customBackendFilePref = "model."
)

// autofillBackendFields is the part of Triton's AutoCompleteBackendFields
// that needs only the configuration: it completes backend, platform and
// default_model_filename from each other for the framework backends, and
// derives the backend of a config that names none of the three from a
// `<model>.<backend>` model name. Triton also inspects the first version
// directory for well-known model files; tritonhost does not (Normalize gets
// no path), so such configs must name their backend.
func autofillBackendFields(cfg *configpb.ModelConfig) error {
	setDefault := func(field *string, value string) {
		if *field == "" {
			*field = value
		}
	}

	// TensorFlow needs a platform; it can come from the model file name.
	if cfg.Platform == "" && (cfg.Backend == "" || cfg.Backend == backendTensorFlow) {
		switch cfg.DefaultModelFilename {
		case fileTFSavedModel:
			cfg.Platform = platformTFSavedModel
		case fileTFGraphDef:
			cfg.Platform = platformTFGraphDef
		}
	}
	switch cfg.Platform {
	case platformTFSavedModel:
		setDefault(&cfg.Backend, backendTensorFlow)
		setDefault(&cfg.DefaultModelFilename, fileTFSavedModel)
		return nil
	case platformTFGraphDef:
		setDefault(&cfg.Backend, backendTensorFlow)
		setDefault(&cfg.DefaultModelFilename, fileTFGraphDef)
		return nil
	}

	if cfg.Backend == "" {
		switch {
		case cfg.Platform == platformTensorRT || cfg.DefaultModelFilename == fileTensorRT:
			cfg.Backend = backendTensorRT
		case cfg.Platform == platformONNX || cfg.DefaultModelFilename == fileONNX:
			cfg.Backend = backendONNX
		case cfg.DefaultModelFilename == fileOpenVINO:
			cfg.Backend = backendOpenVINO
		case cfg.Platform == platformLibTorch || cfg.Platform == platformLibTorchAlt ||
			cfg.DefaultModelFilename == fileLibTorch ||
			cfg.Platform == platformTorchAOTI || cfg.DefaultModelFilename == fileTorchAOTI:
			cfg.Backend = backendPyTorch
		case cfg.DefaultModelFilename == filePython:
			cfg.Backend = backendPython
		}
	}

	switch cfg.Backend {
	case backendTensorRT:
		setDefault(&cfg.Platform, platformTensorRT)
		setDefault(&cfg.DefaultModelFilename, fileTensorRT)
	case backendONNX:
		setDefault(&cfg.Platform, platformONNX)
		setDefault(&cfg.DefaultModelFilename, fileONNX)
	case backendOpenVINO:
		setDefault(&cfg.DefaultModelFilename, fileOpenVINO)
	case backendPyTorch:
		if cfg.Platform == "" {
			cfg.Platform = platformLibTorch
			setDefault(&cfg.DefaultModelFilename, fileLibTorch)
		} else if cfg.Platform == platformTorchAOTI {
			setDefault(&cfg.DefaultModelFilename, fileTorchAOTI)
		}
	case backendPython:
		setDefault(&cfg.DefaultModelFilename, filePython)
	case "":
		if cfg.Platform != "" || cfg.DefaultModelFilename != "" {
			return nil // Validate reports the missing backend.
		}
		// A custom backend named by the model: "<model>.<backend>".
		dot := strings.IndexByte(cfg.Name, '.')
		if dot < 0 {
			return invalidf(cfg.Name, "backend", "must be set: the configuration names no backend and the model name is not of the form <model>.<backend>")
		}
		cfg.Backend = cfg.Name[dot+1:]
		cfg.DefaultModelFilename = customBackendFilePref + cfg.Backend
	}
	return nil
}
