"""``tts serve``: the HTTP service and its page (:mod:`tts.serve.app`), loaded by :mod:`tts.serve.loading`."""

from tts.serve.app import Limits, Service, create_app
from tts.serve.loading import load_service

__all__ = ["Limits", "Service", "create_app", "load_service"]
