# The CPU emulator (common/emu): every CUDA program of the course, built by
# g++ instead of nvcc, with its kernels run on the CPU. Included by the
# Makefile after LESSON_DIRS, KERNEL_SRC(S), GPU_TESTS and COMMON_C are set.
#
#   each .cu/.h/.cuh -> common/emu/rewrite -> $(EMU_SRC)/same/path (.cu becomes .cpp)
#   each .cpp        -> g++ -include cuda_emu.h -> $(V)/obj/same/path.o
#   programs         -> $(V)/lessonN, exerciseN, solutionN, tests/test_*, tests/emu/test_emu
#
# Two variants V share the rewritten sources: $(BUILD)/emu (-O2) and
# $(BUILD)/emu-asan (AddressSanitizer: an out-of-bounds access in a kernel
# is reported to the byte and fails the run).

EMU_CXX  ?= g++
EMU_SRC  := $(BUILD)/emu/src
EMU_TOOL := $(BUILD)/emu/rewrite
EMU_DIR  := $(BUILD)/emu
EMU_ASAN_DIR := $(BUILD)/emu-asan

# -fno-strict-aliasing: kernels read float arrays through float4 pointers,
# which C++'s aliasing rules allow g++ to reorder; nvcc does not.
EMU_CXXFLAGS ?= -O2
EMU_CXXFLAGS += -std=c++17 -fno-strict-aliasing -include common/emu/cuda_emu.h \
                -Icommon/emu/include -Icommon/emu -I$(EMU_SRC)/common -I$(BUILD) -MMD -MP
# The runtime switches stacks by hand: keep it out of CET shadow stacks.
EMU_CFLAGS   := -O2 -std=c11 -Wall -Wextra -Werror -fcf-protection=none -MMD -MP
# Under AddressSanitizer: line tables only (-g1), enough for its reports
# to name file and line; full debug information took the heaviest object
# 47 s to compile against 34.
EMU_ASAN_FLAGS := -O1 -g1 -fsanitize=address -fno-omit-frame-pointer

# Every file a .cu may #include, rewritten too: headers hold templates,
# device functions, __shared__ declarations and launches (and a lesson may
# include another lesson's .cu).
EMU_HDRS := $(patsubst ./%,%,$(shell find common lessons solutions tests \
              \( -name '*.h' -o -name '*.cuh' -o -name '*.hpp' -o -name '*.inl' -o -name '*.inc' \
                 -o -name '*.cu' \) -not -path 'common/emu/*' 2>/dev/null))
EMU_HDRS_OUT := $(EMU_HDRS:%=$(EMU_SRC)/%)
EMU_SELF_SRCS := $(wildcard tests/emu/*.cu)
# Rewritten files are made by pattern rules: keep them (make would delete
# them as intermediates), they are what g++ compiled and what errors name.
.SECONDARY: $(EMU_HDRS_OUT)
.PRECIOUS: $(EMU_SRC)/%.cpp

# Each rewrite goes to a file of its own, renamed into place: one header
# reached by two paths (lessons/05_fused/x.cuh and lessons/08_fastest/../
# 05_fused/x.cuh in the .d files) is two targets of one file, which make -j
# may rewrite at once; written in place, the two could leave a torn file.
$(EMU_TOOL): common/emu/rewrite.c
	@mkdir -p $(@D)
	$(CC) -O2 -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

$(EMU_SRC)/%.cpp: %.cu $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.h: %.h $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.cuh: %.cuh $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.hpp: %.hpp $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.inl: %.inl $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.inc: %.inc $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(EMU_SRC)/%.cu: %.cu $(EMU_TOOL)
	@mkdir -p $(@D)
	@$(EMU_TOOL) $< $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

# A solution includes its lesson's headers, as with nvcc (-Ilessons/NN_x).
# (Quoted includes find the rewritten copies next to the rewritten file; the
# original folder, given with -iquote after them, is only a fallback.)
emu_lesson_inc = $(if $(filter solutions/%,$(1)),-I$(EMU_SRC)/lessons/$(word 2,$(subst /, ,$(1))))

# $(1) = variant folder, $(2) = extra flags (sanitizer), $(3) = C objects of common/
define EMU_VARIANT
$(1)/obj/%.o: $(EMU_SRC)/%.cpp | $(EMU_HDRS_OUT)
	@mkdir -p $$(@D)
	$(EMU_CXX) $(EMU_CXXFLAGS) $(2) $$(call emu_lesson_inc,$$*) -iquote $$(dir $$*) -c $$< -o $$@
$(1)/obj/common/harness.o: $(BUILD)/commit.h
$(1)/obj/common/emu/emu.o: common/emu/emu.c
	@mkdir -p $$(@D)
	$(CC) $(EMU_CFLAGS) $(2) -c $$< -o $$@
$(1)/obj/common/%.o: common/%.c
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS) $(2) -c $$< -o $$@

$(1)/libdevice.a: $(patsubst %.cu,$(1)/obj/%.o,$(DEVICE_SRCS))
	@rm -f $$@
	ar rcs $$@ $$^
$(1)_COMMON := $(3) $(1)/obj/common/harness.o $(1)/obj/common/timing.o $(1)/obj/common/emu/emu.o $(1)/libdevice.a
$(1)_KERNELS := $(patsubst %.cu,$(1)/obj/%.o,$(KERNEL_SRCS))

$(1)/tests/emu/test_emu: $(patsubst %.cu,$(1)/obj/%.o,$(EMU_SELF_SRCS)) $$($(1)_COMMON)
	@mkdir -p $$(@D)
	$(EMU_CXX) $(2) -o $$@ $$^ $(LDLIBS)
$(GPU_TESTS:%=$(1)/tests/%): $(1)/tests/%: $(1)/obj/tests/%.o $$($(1)_KERNELS) $$($(1)_COMMON)
	@mkdir -p $$(@D)
	$(EMU_CXX) $(2) -o $$@ $$^ $(LDLIBS)
endef

# $(1) = variant folder, $(2) = extra flags, $(3) = lesson folder, $(4) = number
define EMU_LESSON
$(1)/lesson$(4): $(1)/obj/lessons/$(3)/main.o $(patsubst %.cu,$(1)/obj/%.o,$(call KERNEL_SRC,$(3))) $$($(1)_COMMON)
	$(EMU_CXX) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/exercise$(4): $(1)/obj/lessons/$(3)/exercise.o $(1)/obj/lessons/$(3)/exercise_check.o $(patsubst %.cu,$(1)/obj/%.o,$(call KERNEL_SRC,$(3))) $$($(1)_COMMON)
	$(EMU_CXX) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/solution$(4): $(1)/obj/solutions/$(3)/exercise.o $(1)/obj/lessons/$(3)/exercise_check.o $(patsubst %.cu,$(1)/obj/%.o,$(call KERNEL_SRC,$(3))) $$($(1)_COMMON)
	$(EMU_CXX) $(2) -o $$@ $$^ $(LDLIBS)
endef

$(eval $(call EMU_VARIANT,$(EMU_DIR),,$(COMMON_C:%=$(BUILD)/common/%.o)))
$(eval $(call EMU_VARIANT,$(EMU_ASAN_DIR),$(EMU_ASAN_FLAGS),$(COMMON_C:%=$(EMU_ASAN_DIR)/obj/common/%.o)))
$(foreach d,$(LESSON_DIRS),$(eval $(call EMU_LESSON,$(EMU_DIR),,$(d),$(call lesson_num,$(d)))))

# What `make test` runs on the CPU path, and what it needs built.
EMU_SELF_TEST  := $(EMU_DIR)/tests/emu/test_emu
EMU_GPU_TESTS  := $(GPU_TESTS_LONG_FIRST:%=$(EMU_DIR)/tests/%)
EMU_PROGRAMS   := $(LESSON_NUMS:%=$(EMU_DIR)/lesson%) $(LESSON_NUMS:%=$(EMU_DIR)/exercise%) \
                  $(LESSON_NUMS:%=$(EMU_DIR)/solution%)
EMU_ASAN_TESTS := $(GPU_TESTS_LONG_FIRST:%=$(EMU_ASAN_DIR)/tests/%) $(EMU_ASAN_DIR)/tests/emu/test_emu

# With a GPU, the feature half of the emulator's tests also runs natively:
# it shows that what the emulator is tested against is what a GPU does.
EMU_NATIVE_TEST := $(if $(GPU_CC),$(BUILD)/tests/emu/test_emu)
$(BUILD)/tests/emu/test_emu: $(patsubst %.cu,$(BUILD)/%.o,$(EMU_SELF_SRCS)) $(COMMON_OBJS)
	$(NVCC) $(ARCH) -o $@ $^ $(LDLIBS)

.PHONY: emu test-asan
emu: $(EMU_SELF_TEST) $(EMU_GPU_TESTS) $(EMU_PROGRAMS)

# Every GPU test program and the emulator's own tests under AddressSanitizer
# (CI runs this once; the kernels' out-of-bounds accesses then fail). As
# under make sanitize (SOFTMAX_SANITIZE), the lesson tests leave out their
# few slowest shapes, whose code the shorter ones run: make test runs them.
test-asan: $(EMU_ASAN_TESTS)
	@echo "kernels run on the CPU emulator under AddressSanitizer: $(EMU_ASAN_TESTS)"
	@SOFTMAX_SANITIZE=1 ASAN_OPTIONS=detect_leaks=0 TEST_JOBS=$(NPROC) tests/run.sh $(EMU_ASAN_TESTS)
