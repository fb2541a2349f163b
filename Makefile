# Two entry points do all set-up on a fresh machine:
#   make demo   — install everything, then run the demo (outputs in out/demo/)
#   make test   — install everything, then lint, type-check and run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
TTS := $(VENV)/bin/tts
# gcc: pesq (an eval meter) is built from source by pip; chromium and its driver: the browser test of tts serve
APT_PACKAGES := espeak-ng sox flite festival festvox-us-slt-hts fortunes fortunes-min gcc chromium chromium-driver

.PHONY: setup system-deps demo test bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml | system-deps
	python3 -m venv $(VENV)
	@# CPU machines take the pinned CPU wheel; a GPU machine gets the CUDA build of the same release
	if command -v nvidia-smi >/dev/null 2>&1; then $(PY) -m pip install -q 'torch>=2.1'; \
	else $(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pip install -q -e '.[dev,eval,onnx]'
	touch $@

# Speech engines and sentence lists for the synthetic corpus and the demo (Debian packages).
system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "missing system packages:$$missing — run: sudo apt-get install -y$$missing"; exit 1; fi; fi

demo: setup
	bash egs/demo.sh

test: setup
	$(VENV)/bin/ruff check tts
	$(VENV)/bin/mypy
	$(PY) -m pytest -q tests

bench: setup
	$(TTS) bench griffin-lim

clean:
	rm -rf out .pytest_cache
