# Every target sets up what it needs: a .venv with fastcredit installed
# (editable, C extension compiled) and its test dependencies.
PYTHON ?= python3
# Extras to install: "test" runs the core suite; CI adds the optional
# integrations (shapiq, Parquet, Dask) so their tests run instead of skipping.
EXTRAS ?= test
comma := ,
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: demo test bench clean

$(STAMP): pyproject.toml setup.py build_ffi.py $(wildcard csrc/*.c csrc/*.h csrc/*.inc)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

demo: $(STAMP)
	$(BIN)/fastcredit demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/ratios.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info fastcredit/_cffi*.so fastcredit/_cffi.c
