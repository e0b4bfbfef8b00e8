# Softmax, from naive to fastest: build, run and test every lesson.
# `make help` lists the targets. GNU Make is the only build system.

# ---- tools -------------------------------------------------------------------
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CC        ?= cc
BUILD     := build

# ---- GPU architecture ----------------------------------------------------------
# Native code for the GPU in this machine when nvidia-smi sees one; otherwise a
# fixed list, keeping only the targets this nvcc supports (CUDA 13 dropped
# everything below sm_75), plus PTX of the newest so later GPUs can JIT it.
# Override with e.g. `make ARCH="-arch=sm_90"`.
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .')
ifneq ($(GPU_CC),)
ARCH ?= -gencode arch=compute_$(GPU_CC),code=sm_$(GPU_CC)
else
NVCC_CODES := $(shell $(NVCC) --list-gpu-code 2>/dev/null)
ARCH_WANT  := 75 80 86 89 90
ARCH_HAVE  := $(foreach a,$(ARCH_WANT),$(if $(filter sm_$(a),$(NVCC_CODES)),$(a)))
ifeq ($(ARCH_HAVE),)
ARCH_HAVE  := $(ARCH_WANT)
endif
ARCH ?= $(foreach a,$(ARCH_HAVE),-gencode arch=compute_$(a),code=sm_$(a)) \
        -gencode arch=compute_$(lastword $(ARCH_HAVE)),code=compute_$(lastword $(ARCH_HAVE))
endif

# The programs' own objects (mains, tests, exercises, solutions: a few small
# kernels between them) for PROGRAM_ARCH, by default ARCH too: CI, which
# only compiles them, takes one target there and every ARCH for the kernels.
PROGRAM_ARCH := $(if $(PROGRAM_ARCH),$(PROGRAM_ARCH),$(ARCH))

# ---- flags: project code compiles with warnings as errors ----------------------
CFLAGS    ?= -O2
CFLAGS    += -std=c11 -Wall -Wextra -Werror -Icommon -MMD -MP
NVCCFLAGS ?= -O3 -lineinfo
NVCCFLAGS += -std=c++17 $(ARCH) -Icommon -I$(BUILD) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror -MMD -MP
LDLIBS    := -lm

# ---- what there is ---------------------------------------------------------------
# Every folder lessons/NN_name is a lesson; lesson N's make target is lessonN.
LESSON_DIRS := $(sort $(notdir $(wildcard lessons/[0-9][0-9]_*)))
lesson_num   = $(patsubst 0%,%,$(firstword $(subst _, ,$(1))))
LESSON_NUMS := $(foreach d,$(LESSON_DIRS),$(call lesson_num,$(d)))

COMMON_C    := options inputs npy reference verify f16
# The device building blocks and the row engine (common/device, lessons
# 5-8 teach them): one archive, from which each program links what it calls.
DEVICE_SRCS := $(wildcard common/device/*.cu)
DEVICE_LIB  := $(BUILD)/common/libdevice.a
COMMON_OBJS := $(COMMON_C:%=$(BUILD)/common/%.o) $(BUILD)/common/harness.o $(BUILD)/common/timing.o $(DEVICE_LIB)
CPU_TESTS   := $(basename $(notdir $(wildcard tests/test_*.c)))
# GPU tests (tests/test_*.cu) link every lesson's kernels.
GPU_TESTS   := $(basename $(notdir $(wildcard tests/test_*.cu)))
# The same, the longest on the CPU emulator first: run two at a time, the
# suite ends soonest when no long one starts last.
EMU_LONG_TESTS := test_kernels test_lesson11 test_lesson10 test_lesson9 test_lesson8 test_lesson7
GPU_TESTS_LONG_FIRST := $(filter $(GPU_TESTS),$(EMU_LONG_TESTS)) $(filter-out $(EMU_LONG_TESTS),$(GPU_TESTS))
# A lesson's kernels: every .cu in its folder but the program, the exercise,
# and lesson 11's NCCL calls (only its program links NCCL).
NOT_KERNELS  = lessons/$(1)/main.cu lessons/$(1)/exercise.cu lessons/$(1)/exercise_check.cu \
               lessons/$(1)/split_comm_nccl.cu
KERNEL_SRC   = $(filter-out $(NOT_KERNELS),$(wildcard lessons/$(1)/*.cu))
KERNEL_OBJ   = $(patsubst %.cu,$(BUILD)/%.o,$(call KERNEL_SRC,$(1)))
KERNEL_SRCS := $(foreach d,$(LESSON_DIRS),$(call KERNEL_SRC,$(d)))
KERNEL_OBJS := $(foreach d,$(LESSON_DIRS),$(call KERNEL_OBJ,$(d)))
EXPERIMENTS := $(basename $(notdir $(wildcard docs/experiments/*.cu)))

# Shape shared by `make lessons` for its comparison table: 2^26 floats,
# 256 MiB per tensor, far above any L2. On the CPU emulator (EMU=1), which
# times nothing, rows as long (each lesson takes the same path through its
# kernels) but 16 times fewer: all eleven in about 12 s on 2 cores.
COMPARE_ARGS ?= --rows 16384 --cols 4096
EMU_COMPARE_ARGS ?= --rows 1024 --cols 4096

# The CPU emulator (common/emu, docs/emulator.md): EMU=1 builds the programs
# with g++ and runs their kernels on the CPU; `make test` does so by itself
# when no GPU is found (EMU=0 keeps it on nvcc builds only).
TEST_EMU := $(if $(filter 1,$(EMU)),1,$(if $(filter 0,$(EMU)),,$(if $(GPU_CC),,1)))
NPROC := $(shell nproc 2>/dev/null || echo 1)
include common/emu/emu.mk
EMU_TEST_LINE = kernels run on the CPU emulator ($(if $(GPU_CC),EMU=1,no GPU found)): the GPU tests, \
  lessons and exercises are built by g++ against common/emu and checked at the same shapes as on a GPU; no timings

.PHONY: all all-targets help lessons test test-large test-mutants bench plots tables check-texts venv sanitize clean FORCE $(LESSON_NUMS:%=lesson%) $(LESSON_NUMS:%=exercise%)
.DEFAULT_GOAL := help

# Everything `make test` needs: the nvcc programs and, without a GPU or with
# EMU=1, the emulator's. `make all EMU=1` builds the emulator's only (and
# the plain C tests): on a machine without a GPU the nvcc programs could
# only say so and exit.
# The lessons' kernel objects come first, the last lessons' first: lesson
# 10's take nvcc a minute each, and begun last they would leave one core
# idle at the end of a parallel build.
reverse = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
all-targets: $(call reverse,$(KERNEL_OBJS)) $(LESSON_NUMS:%=$(BUILD)/lesson%) $(CPU_TESTS:%=$(BUILD)/tests/%) $(GPU_TESTS:%=$(BUILD)/tests/%) \
     $(LESSON_NUMS:%=$(BUILD)/exercise%) $(LESSON_NUMS:%=$(BUILD)/solution%) $(BUILD)/bench \
     $(BUILD)/odd_shapes $(BUILD)/large $(EXPERIMENTS:%=$(BUILD)/experiments/%) \
     $(if $(TEST_EMU),emu,$(EMU_SELF_TEST)) $(EMU_NATIVE_TEST)
all: $(if $(filter 1,$(EMU)),emu $(CPU_TESTS:%=$(BUILD)/tests/%),all-targets)

help:
	@echo "Softmax, from naive to fastest. Targets:"
	@echo "  make lessonN      build and run lesson N at its default shape; ARGS=\"--rows 8 --cols 100000\" passes options"
	@echo "  make lessons      run every lesson in order at $(COMPARE_ARGS), then compare them in one table"
	@echo "  make exerciseN    build your exercise for lesson N (lessons/NN_*/exercise.cu) and check it"
	@echo "  make bench        time every kernel over N = 32 ... 2^26 at M x N = 2^26 and lessons 8-10 at LM vocabulary shapes (+ cuDNN) into docs/results/<gpu>.csv"
	@echo "  make test-large   every kernel on 1 x (2^31+17) and (2^17+1) x (2^14+3): 64-bit indexing (GPU, ~35 GB)"
	@echo "  make sanitize     compute-sanitizer memcheck/racecheck/synccheck/initcheck on every kernel, odd shapes"
	@echo "  make profile-lessonN  Nsight Compute: DRAM bytes and throughput of lesson N at PROFILE_SHAPE=$(PROFILE_SHAPE)"
	@echo "  make plots        draw docs/img/*.png from docs/results/*.csv (python3's matplotlib, else installs it into .venv)"
	@echo "  make venv         only make .venv with matplotlib (CI does this so the plot test runs)"
	@echo "  make tables       rewrite the measured tables of README.md and the lessons' texts from docs/results/*.csv"
	@echo "  make check-texts  check every text: word budgets, no hand-typed measured number, date or commit in prose, no broken link"
	@echo "  make test         every test: reference math, options, .npy, CLI, kernels, solutions"
	@echo "  make all          build everything without running it"
	@echo "  make clean        remove $(BUILD)/"
	@echo "  make help         this list"
	@echo "Without a GPU: the CPU emulator (common/emu) runs the same kernels on the CPU, checked but not timed:"
	@echo "  make lessons      finds no GPU: every lesson's demos and checks at $(EMU_COMPARE_ARGS), then their table"
	@echo "  make lessonN EMU=1    lesson N on the emulator; ARGS as above; make exerciseN EMU=1 checks your exercise"
	@echo "  make test         finds no GPU and runs the GPU tests, lessons and exercises on the emulator"
	@echo "  make all EMU=1    build the emulator's programs only (make emu: the same, without the plain C tests)"
	@echo "  make test EMU=1   the GPU tests on the CPU emulator even with a GPU"
	@echo "  make test-asan    the GPU tests and the emulator's own tests on the CPU emulator under AddressSanitizer"
	@echo "  make test-mutants apply each bug of tests/mutants.txt to a copy of the tree and report which tests catch it (CPU emulator; hours on 2 cores, MUTANTS_SHARDS=K splits it over K copies)"
	@echo "Lessons: $(LESSON_DIRS)"
	@echo "Variables: NVCC, CUDA_HOME, ARCH (now: $(strip $(ARCH))), ARGS, EMU (now: $(if $(TEST_EMU),1 for make test,0))"

# ---- compiling -------------------------------------------------------------------
# The commit goes into every report; the header changes only when it does.
# A copy without .git (a tarball, a remote run) can pass GIT_COMMIT=... .
GIT_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
$(BUILD)/commit.h: FORCE
	@mkdir -p $(@D)
	@echo '#define GIT_COMMIT "$(GIT_COMMIT)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/common/harness.o: $(BUILD)/commit.h

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

PROGRAM_OBJS := $(patsubst %.cu,$(BUILD)/%.o,$(wildcard lessons/*/main.cu lessons/*/exercise.cu \
                  lessons/*/exercise_check.cu solutions/*/exercise.cu tests/*.cu))
$(PROGRAM_OBJS): ARCH := $(PROGRAM_ARCH)

# ---- lessons, exercises, solutions ---------------------------------------------------
# $(1) = folder (01_naive), $(2) = number (1)
define LESSON_RULES
$(BUILD)/lesson$(2): $(BUILD)/lessons/$(1)/main.o $(call KERNEL_OBJ,$(1)) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $$@ $$^ $$(LDLIBS)
lesson$(2): $(if $(filter 1,$(EMU)),$(EMU_DIR),$(BUILD))/lesson$(2)
	$$< $$(ARGS)
# The learner's file and the tested solution share one checker.
$(BUILD)/exercise$(2): $(BUILD)/lessons/$(1)/exercise.o $(BUILD)/lessons/$(1)/exercise_check.o $(call KERNEL_OBJ,$(1)) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $$@ $$^ $(LDLIBS)
$(BUILD)/solution$(2): $(BUILD)/solutions/$(1)/exercise.o $(BUILD)/lessons/$(1)/exercise_check.o $(call KERNEL_OBJ,$(1)) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $$@ $$^ $(LDLIBS)
$(BUILD)/solutions/$(1)/exercise.o: NVCCFLAGS += -Ilessons/$(1)
exercise$(2): $(if $(filter 1,$(EMU)),$(EMU_DIR),$(BUILD))/exercise$(2)
	$$< $$(ARGS)
endef
$(foreach d,$(LESSON_DIRS),$(eval $(call LESSON_RULES,$(d),$(call lesson_num,$(d)))))

$(DEVICE_LIB): $(DEVICE_SRCS:%.cu=$(BUILD)/%.o)
	@rm -f $@
	ar rcs $@ $^

# Lesson 11 joins GPUs through NCCL: the CUDA install's, the system's, or
# the pip wheel nvidia-nccl-cu13's (site-packages/nvidia/nccl; NCCL_HOME=...
# points at another). Only lesson 11's program links it; without NCCL it
# is built with the in-process stand-in only, and make says how to get NCCL.
ifeq ($(origin NCCL_HOME),undefined)
NCCL_HOME := $(shell python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
endif
NCCL_H  := $(firstword $(wildcard $(if $(NCCL_HOME),$(NCCL_HOME)/include/nccl.h) $(CUDA_HOME)/include/nccl.h \
             /usr/include/nccl.h))
NCCL_SO := $(firstword $(wildcard $(if $(NCCL_HOME),$(NCCL_HOME)/lib/libnccl.so $(NCCL_HOME)/lib/libnccl.so.[0-9]*) \
             $(CUDA_HOME)/lib64/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so.[0-9]*))
L11_NCCL := $(BUILD)/lessons/11_multi_gpu/split_comm_nccl.o
$(BUILD)/lesson11: $(L11_NCCL)
ifneq ($(and $(NCCL_H),$(NCCL_SO)),)
$(L11_NCCL): NVCCFLAGS += -DHAVE_NCCL -I$(dir $(NCCL_H))
$(BUILD)/lesson11: LDLIBS += -L$(dir $(NCCL_SO)) -Xlinker -l:$(notdir $(NCCL_SO)) -Xlinker -rpath=$(dir $(NCCL_SO))
else
$(L11_NCCL): | nccl-missing
.PHONY: nccl-missing
nccl-missing:
	@echo "lesson 11: NCCL not found, so lesson11 runs only its in-process stand-in (--comm local). For NCCL: pip install nvidia-nccl-cu13, or NCCL_HOME=DIR (DIR/include/nccl.h, DIR/lib/libnccl.so*), then make again"
endif
$(EMU_DIR)/lesson11: $(EMU_DIR)/obj/lessons/11_multi_gpu/split_comm_nccl.o

# On the emulator where `make test` would be (EMU=1, or no GPU found and
# no EMU=0): its programs at EMU_COMPARE_ARGS, their checks in the table
# (tests/compare.awk: no timings); build/emu/lessons.csv.
LESSONS_DIR  := $(if $(TEST_EMU),$(EMU_DIR),$(BUILD))
LESSONS_ARGS := $(if $(TEST_EMU),$(EMU_COMPARE_ARGS),$(COMPARE_ARGS))
lessons: $(LESSON_NUMS:%=$(LESSONS_DIR)/lesson%)
	@rm -f $(LESSONS_DIR)/lessons.csv
	@set -e; for n in $(LESSON_NUMS); do \
	  echo "==================== make lesson$$n$(if $(TEST_EMU), EMU=1) ARGS=\"$(LESSONS_ARGS)\""; \
	  $(LESSONS_DIR)/lesson$$n $(LESSONS_ARGS) --csv $(LESSONS_DIR)/lessons.csv; echo; done
	@awk -f tests/compare.awk $(LESSONS_DIR)/lessons.csv

# ---- tests ---------------------------------------------------------------------------
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(COMMON_C:%=$(BUILD)/common/%.o)
	$(CC) -o $@ $^ $(LDLIBS)

$(GPU_TESTS:%=$(BUILD)/tests/%): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(KERNEL_OBJS) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $@ $^ $(LDLIBS)

# The benchmark: every kernel over the sweep, plus cuDNN when it is installed.
# CUDNN_HOME=... points at another install, e.g. the pip wheel nvidia-cudnn-cu13
# (site-packages/nvidia/cudnn, whose library is only libcudnn.so.9).
CUDNN_H := $(firstword $(wildcard $(if $(CUDNN_HOME),$(CUDNN_HOME)/include/cudnn.h) \
             $(CUDA_HOME)/include/cudnn.h /usr/include/cudnn.h /usr/include/x86_64-linux-gnu/cudnn.h))
CUDNN_SO := $(firstword $(wildcard $(if $(CUDNN_HOME),$(CUDNN_HOME)/lib/libcudnn.so $(CUDNN_HOME)/lib/libcudnn.so.[0-9]*) \
             $(CUDA_HOME)/lib64/libcudnn.so /usr/lib/x86_64-linux-gnu/libcudnn.so))
ifneq ($(and $(CUDNN_H),$(CUDNN_SO)),)
$(BUILD)/tests/bench.o $(BUILD)/tests/bench_cudnn.o: NVCCFLAGS += -DHAVE_CUDNN -I$(dir $(CUDNN_H))
BENCH_LIBS := -L$(dir $(CUDNN_SO)) -Xlinker -l:$(notdir $(CUDNN_SO)) -Xlinker -rpath=$(dir $(CUDNN_SO))
endif
$(BUILD)/bench: $(BUILD)/tests/bench.o $(BUILD)/tests/bench_shapes.o $(BUILD)/tests/bench_training.o $(BUILD)/tests/bench_cudnn.o \
                $(KERNEL_OBJS) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $@ $^ $(BENCH_LIBS) $(LDLIBS)

bench: $(BUILD)/bench
	@mkdir -p docs/results
	$(BUILD)/bench --out docs/results $(ARGS)

# compute-sanitizer over every kernel on odd shapes (a GPU is needed).
$(BUILD)/odd_shapes: $(BUILD)/tests/odd_shapes.o $(KERNEL_OBJS) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $@ $^ $(LDLIBS)
# Lessons 3-4 are in odd_shapes; their own tests add 8 GiB shapes, far too slow under the tools.
SANITIZE_TESTS := $(filter-out %/test_lesson3 %/test_lesson4,$(filter $(BUILD)/tests/test_lesson%,$(GPU_TESTS:%=$(BUILD)/tests/%)))
sanitize: $(BUILD)/odd_shapes $(SANITIZE_TESTS)
	@tests/sanitize.sh $(BUILD) $(BUILD)/odd_shapes $(SANITIZE_TESTS)

# More than 2^31 elements (a GPU with ~35 GB free for lesson 10, ~18 GB for the others).
$(BUILD)/large: $(BUILD)/tests/large.o $(KERNEL_OBJS) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $@ $^ $(LDLIBS)
test-large: $(BUILD)/large
	@tests/run.sh $(BUILD)/large

# Nsight Compute on one lesson: DRAM bytes against the design's traffic.
PROFILE_SHAPE ?= 16384x4096
profile-lesson%: $(BUILD)/bench
	@tests/profile.sh $(BUILD) $* $(PROFILE_SHAPE)

# Plots: matplotlib in a local virtual environment, made on first use.
PYTHON ?= python3
VENV   := .venv
# --system-site-packages: a machine without a network that already has
# matplotlib (a GPU server, say) uses it instead of downloading it.
$(VENV)/ok: requirements.txt
	$(PYTHON) -m venv --system-site-packages $(VENV)
	$(VENV)/bin/python -c 'import matplotlib' 2>/dev/null || $(VENV)/bin/pip install -q -r requirements.txt
	@touch $@
venv: $(VENV)/ok

# The measured plots (docs/plots.py, from the CSVs) and the idea pictures
# (docs/diagrams.py, nothing measured). A Python that already imports
# matplotlib is used as it is (a GPU server without a network, whose matplotlib a venv may not see: it lived outside
# the system site-packages on the course's H100 machine); otherwise .venv.
# Lesson 11's tables (lessons/11_multi_gpu/sweep.sh) have columns of their own:
# they sit in docs/results/multi-gpu/, out of docs/results/*.csv; `make tables`
# reads them as lesson 11's (tests/tables.awk), plots.py only through --multi-gpu.
MULTI_GPU_CSVS := $(wildcard docs/results/multi-gpu/*.csv)
PEERS_CSVS := $(wildcard docs/results/peers/*.csv)
PLOTS_ARGS := $(wildcard docs/results/*.csv) $(if $(MULTI_GPU_CSVS),--multi-gpu $(MULTI_GPU_CSVS)) --out docs/img
plots:
	@if $(PYTHON) -c 'import matplotlib' 2>/dev/null; then py=$(PYTHON); \
	 else $(MAKE) --no-print-directory $(VENV)/ok && py=$(VENV)/bin/python; fi; \
	 echo "$$py docs/plots.py $(PLOTS_ARGS)"; \
	 $$py docs/plots.py $(PLOTS_ARGS) && \
	 echo "$$py docs/diagrams.py --out docs/img" && \
	 $$py docs/diagrams.py --out docs/img

# Tables: the <!-- measured: ... --> regions of the texts, from the same CSVs
# (awk only; tests/tables.awk says which regions there are).
MEASURED_TEXTS := README.md $(wildcard lessons/*/README.md) $(wildcard docs/*.md) $(wildcard docs/experiments/*.md)
tables:
	awk -f tests/tables.awk -f tests/tables_kinds.awk -f tests/tables_peers.awk $(wildcard docs/results/*.csv) $(MULTI_GPU_CSVS) $(PEERS_CSVS) $(MEASURED_TEXTS)

# The texts' rules (tests/texts.awk says them): word budgets, no date or
# commit in prose, no measured number typed by hand, no "seed 00N", no
# broken relative link. `make check-texts` and `make test` check every text.
TEXTS := $(MEASURED_TEXTS)
check-texts:
	awk -f tests/texts.awk $(TEXTS)

# On the CPU emulator (one core per program) the test programs run NPROC
# at a time; on a GPU, one at a time (tests/run.sh, TEST_JOBS). The long
# ones start first (the plots' test takes most of a minute): begun last,
# one would run alone at the end.
test: all-targets
	@$(if $(TEST_EMU),echo "$(EMU_TEST_LINE)";) \
	TEST_JOBS=$(if $(TEST_EMU),$(NPROC),1) tests/run.sh $(CPU_TESTS:%=$(BUILD)/tests/%) \
	  "tests/plots.sh $(BUILD) $(VENV)/bin/python" \
	  $(if $(TEST_EMU),$(EMU_GPU_TESTS),$(GPU_TESTS:%=$(BUILD)/tests/%)) $(EMU_SELF_TEST) $(EMU_NATIVE_TEST) \
	  "tests/cli.sh $(BUILD) $(LESSON_NUMS)" "tests/exercises.sh $(if $(TEST_EMU),$(EMU_DIR),$(BUILD)) $(LESSON_NUMS)" \
	  $(if $(TEST_EMU),"tests/emu/lessons.sh $(EMU_DIR) $(LESSON_NUMS)") \
	  "tests/tables.sh $(BUILD)" \
	  "tests/texts.sh $(BUILD) $(TEXTS)" tests/runner.sh "tests/mutants.sh --check" tests/code_rules.sh

# The experiments the lessons' texts cite (docs/experiments/*.cu): programs
# of their own for sm_90 (Hopper), run by hand, e.g. build/experiments/copy_sum.
# Built with everything, so that a change to the code they include cannot
# leave them broken unnoticed.
$(BUILD)/experiments/%: docs/experiments/%.cu $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(NVCC) $(subst $(ARCH),-arch=sm_90,$(NVCCFLAGS)) -MF $@.d $< $(COMMON_OBJS) -o $@ $(LDLIBS)

# The tests' bug-catch rate: realistic kernel bugs, one at a time, on the
# CPU emulator (tests/mutants.sh; long, so not part of `make test`).
test-mutants:
	tests/mutants.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
