"""A trained voice as ONNX graphs (:func:`export_onnx`) and their onnxruntime synthesizer (:func:`load_onnx`)."""

from tts.onnx.export import export_checkpoint, export_onnx
from tts.onnx.runtime import OnnxAcousticModel, OnnxExport, OnnxVocoder, is_onnx_export, load_onnx

__all__ = ["OnnxAcousticModel", "OnnxExport", "OnnxVocoder", "export_checkpoint", "export_onnx", "is_onnx_export",
           "load_onnx"]
