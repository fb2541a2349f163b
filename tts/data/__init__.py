"""Corpus layout, feature cache, dataset, collate and the batch samplers."""

from tts.data.corpus import SPLITS, Utterance, read_metadata, read_split, require_corpus
from tts.data.dataset import Batch, Collate, FeatureDataset, LengthBucketBatchSampler, RandomBatchSampler, batch_loader
from tts.data.features import compute_features, feature_dir, read_manifest

__all__ = ["SPLITS", "Batch", "Collate", "FeatureDataset", "LengthBucketBatchSampler", "RandomBatchSampler",
           "Utterance", "batch_loader", "compute_features", "feature_dir", "read_manifest", "read_metadata",
           "read_split", "require_corpus"]
