# Each target sets itself up from a fresh clone: a local venv, the package, then the job.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-core docs bench clean chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch 2.13.0 first, pinned: its CPU wheel is on these machines; unpinned would fetch CUDA builds
	$(BIN)/pip install -q 'torch==2.13.0'
	$(BIN)/pip install -q -e '.[test,run]'
	touch $(STAMP)

# the headline first, in seconds and without torch: a shipped log diagnosed, a GH200 cluster judged from its parts,
# then one number judged
demo: $(STAMP)
	$(BIN)/collperf diagnose examples/14_h100-ib400-2node-16gpu-allreduce.txt
	$(BIN)/collperf diagnose examples/22_gh200-slingshot-2node-8gpu-allreduce.txt
	$(BIN)/collperf diagnose allreduce --size 1GB --time 500ms --ranks 16 --cluster dgx-h100 --nodes 2
	$(BIN)/collperf predict allreduce --size 2G --cluster dgx-h100 --nodes 8
	$(BIN)/collperf bench --ranks 4 --algorithm ring,rhd,mesh,builtin -b 64K -e 4M -f 4 -n 10 -w 2
	$(BIN)/collperf predict allreduce --size 1M,64M,1G --ranks 16 --latency 10us --bandwidth 100GB/s --reduce-bandwidth 500GB/s
	$(BIN)/collperf crossover allreduce --ranks 64 --latency 5us --bandwidth 50GB/s -A ring,rhd,double-binary-tree,recursive-doubling
	$(BIN)/collperf schedule allreduce --algorithm rhd --ranks 6
	$(BIN)/collperf simulate allreduce --algorithm ring --size 1G --topology dgx1v --mode events

# everything: the multi-process and testbed tests, the docs' runnable examples and the strict site build
test: $(STAMP) chromium
	$(BIN)/python -m pytest tests

# the quick core: no test that starts ranks or a testbed, and none of the long cases marked slow
test-core: $(STAMP)
	$(BIN)/python -m pytest tests -m "not multiprocess and not slow"

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

# headless Chromium for the report's browser test (tests/test_report.py): installed when missing, only as root on
# Debian/Ubuntu; elsewhere, or when apt cannot install it, the step says so and that test skips with its reason
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ [ "$$(id -u)" = 0 ] && [ -f /etc/debian_version ] && \
	  (timeout 300 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq chromium >/dev/null) ; } || \
	echo "chromium not installed: the headless-browser report test will be skipped"

bench: $(STAMP)
	$(BIN)/python benchmarks/model_throughput.py
	$(BIN)/python benchmarks/simulator_scaling.py

clean:
	rm -rf $(VENV) build site src/*.egg-info .pytest_cache .hypothesis
