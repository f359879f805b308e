# Every target sets up what it needs: a .venv with fastcredit installed
# (editable, C extension compiled) and its test dependencies.
PYTHON ?= python3
# Extras to install: the test tools and the light optional integrations
# ("all": shapiq, shap, Parquet, Dask, matplotlib), so their tests run instead of skipping. The
# heavy trainer stack (PyTorch + TRL) is opt-in: EXTRAS=test,all,trl make test.
EXTRAS ?= test,all
comma := ,
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: demo test test-trainers docs bench package clean

$(STAMP): pyproject.toml setup.py build_ffi.py $(wildcard csrc/*.c csrc/*.h csrc/*.inc)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

demo: $(STAMP)
	$(BIN)/fastcredit demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The trainer integrations on a real stack: torch first (pip takes a local
# CPU wheel where one is configured, PyPI's elsewhere), then the trl extra,
# then only the tests that need it (a tiny Llama trained on CPU, verl's
# advantages, a tiny GPT-2 replayed as an agent's policy).
test-trainers: $(STAMP)
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[test,trl]'
	$(BIN)/python -m pytest -q tests/test_trl.py tests/test_verl.py tests/test_trainer_recipe.py \
		tests/test_replay_lm.py

# The reference site (Sphinx: the API from the numpydoc docstrings, the
# narrative pages of docs/) into docs/_build/html, warnings as errors.
# The docs extra's requirements, read from pyproject.toml: the package is
# already installed, so installing '.[docs]' would only build it again.
DOCS_REQUIREMENTS := import tomllib; \
	print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs'])
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q $$($(BIN)/python -c "$(DOCS_REQUIREMENTS)")
	touch $@

docs: $(DOCS_STAMP)
	rm -rf docs/generated
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html

bench: $(STAMP)
	$(BIN)/python bench/ratios.py $(BENCH_ARGS)

# sdist + repaired manylinux abi3 wheel into dist/, each installed into a
# fresh venv and smoke-tested (C backend, C and C++ programs linking the
# shipped libfastcredit.so); what CI runs after the tests.
package:
	KEEP=dist PYTHON=$(PYTHON) .ci/packaging

clean:
	rm -rf $(VENV) build dist docs/_build docs/generated *.egg-info fastcredit/_cffi*.so fastcredit/_cffi.c fastcredit/lib
