"""``tts serve``: the HTTP service and its page (:mod:`tts.serve.app`)."""

from tts.serve.app import Limits, Service, create_app

__all__ = ["Limits", "Service", "create_app"]
