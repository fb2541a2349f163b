# Two entry points do all set-up on a fresh machine:
#   make demo   — install what running needs, then run the demo (outputs in out/demo/)
#   make test   — install everything (eval meters, ONNX, dev tools, a browser), then lint, type-check and test
VENV ?= .venv
PY := $(VENV)/bin/python
TTS := $(VENV)/bin/tts
# the vocoders the demo plays (the first is the default; e.g. make demo VOCODERS="hifigan griffin-lim" compares)
VOCODERS ?=
# espeak-ng: the demo's fallback without a bundled model
RUNTIME_APT := espeak-ng
# speech engines and sentence lists of the synthetic corpus; gcc: pesq (an eval meter) is built from source by
# pip; chromium and its driver: the browser test of tts serve
APT_PACKAGES := $(RUNTIME_APT) sox flite festival festvox-us-slt-hts festvox-kdlpc16k festvox-kallpc16k fortunes fortunes-min gcc chromium chromium-driver

.PHONY: setup runtime system-deps demo test bench clean

setup: $(VENV)/.installed
runtime: $(VENV)/.runtime

$(VENV)/.runtime: pyproject.toml
	@$(MAKE) --no-print-directory system-deps APT_PACKAGES="$(RUNTIME_APT)"
	python3 -m venv $(VENV)
	@# CPU machines take the pinned CPU wheel; a GPU machine gets the CUDA build of the same release
	if command -v nvidia-smi >/dev/null 2>&1; then $(PY) -m pip install -q 'torch>=2.1'; \
	else $(PY) -m pip install -q torch==2.13.0; fi
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: $(VENV)/.runtime | system-deps
	$(PY) -m pip install -q -e '.[dev,eval,onnx,corpus]'
	# the speaker encoder's weights (tts/metrics/speaker.py reads the file, never imports the package)
	$(PY) -m pip install -q --no-deps Resemblyzer==0.1.4
	touch $@

# Debian packages (as root; otherwise the apt-get line to run is printed).
system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "missing system packages:$$missing — run: sudo apt-get install -y$$missing"; exit 1; fi; fi

demo: runtime
	VOCODERS="$(VOCODERS)" bash egs/demo.sh

test: setup
	$(VENV)/bin/ruff check tts tests recipes egs
	$(VENV)/bin/mypy
	$(PY) -m pytest -q -n auto --dist worksteal tests

bench: setup
	$(TTS) bench griffin-lim

clean:
	rm -rf out .pytest_cache
