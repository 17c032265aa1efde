# caliber: plain GNU Makefile.
#
#   make              build ./caliber
#   make check        build and run every test (unit, CLI, golden, bad input, Python)
#   make check-sanitize  the same suite against an ASan+UBSan build
#   make demo         install what is missing, build, run `caliber demo`
#   make deps         install missing build/test dependencies from Debian's packages
#   make fuzz         libFuzzer targets, FUZZ_SECONDS each (clang)
#   make man          man pages into man/: caliber.1 and caliber-<command>.1,
#                     generated from the commands' option tables
#   make install      PREFIX (/usr/local) and DESTDIR as usual: bin/caliber and
#                     its tree in share/caliber (see "install" below)
#   make WERROR=1     warnings are errors (CI does this)

VERSION := 0.1.0

CC      ?= cc
PKGS    := jansson libcrypto
# jansson's iteration macros take non-const values, hence no -Wcast-qual.
# -Wformat-truncation (of -Wall) stays on: a message or path that does not
# fit a buffer is handled where it is written, never cut silently.
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion \
           -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
           -Wpointer-arith -Wundef -Wvla -Wimplicit-fallthrough -Wwrite-strings
ifeq ($(WERROR),1)
WARN    += -Werror
endif
STD     := -std=c11 -D_XOPEN_SOURCE=700
OPT     ?= -O2 -g

# Build flavours: the normal build and the sanitizer build live side by side.
ifeq ($(SANITIZE),1)
BUILD   := build/sanitize
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT     := -O1 -g
else
BUILD   := build/normal
SANFLAGS :=
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

CFLAGS_ALL  = $(STD) $(OPT) $(WARN) $(SANFLAGS) -pthread -Isrc -I$(BUILD) $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(SANFLAGS) $(LDFLAGS)
LIBS_ALL    = $(PKG_LIBS) -lm -pthread

# src/<folder>/*.c is the library, one folder per subsystem (each folder's
# README says what it may include; scripts/check_includes.sh holds every
# #include to those rules); src/cmd/*.c the commands (one file per command,
# as git's builtin/), which only the binary links; main.c holds their table.
SUBSYSTEMS := base seal ir campaign account run views
LIB_SRC  := $(sort $(foreach d,$(SUBSYSTEMS),$(wildcard src/$(d)/*.c)))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(BUILD)/%.o)
CMD_SRC  := $(sort $(wildcard src/cmd/*.c))
CMD_OBJ  := $(CMD_SRC:src/cmd/%.c=$(BUILD)/cmd/%.o)
HDRS     := $(wildcard src/*.h src/*/*.h)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TLIB_SRC := $(sort $(wildcard tests/lib/*.c))
TLIB_OBJ := $(TLIB_SRC:tests/lib/%.c=$(BUILD)/tests/lib/%.o)
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)

.SECONDARY:

.PHONY: all check check-sanitize demo deps fuzz clean bench device-check man install uninstall FORCE

all: caliber

# The binary at the top is always the normal build; the sanitizer build stays
# under build/sanitize/caliber.
ifeq ($(SANITIZE),1)
caliber: $(BUILD)/caliber
else
caliber: $(BUILD)/caliber
	cp $< $@
endif

$(BUILD)/caliber: $(BUILD)/main.o $(CMD_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIBS_ALL)

$(BUILD)/%.o: src/%.c $(HDRS) $(BUILD)/version.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/cmd/%.o: src/cmd/%.c $(HDRS) $(BUILD)/version.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Isrc/cmd -c -o $@ $<

# version.h carries the version and the commit the build came from; it is
# rewritten only when either changes, so a rebuild stays incremental. Every
# rule that writes into $(BUILD) makes the folder it writes to.
$(BUILD)/version.h: FORCE
	@mkdir -p $(@D)
	@commit=$$(git rev-parse -q --verify HEAD 2>/dev/null); \
	if [ -z "$$commit" ]; then \
	  if git rev-parse --git-dir >/dev/null 2>&1; then commit="unknown (no commit in this checkout yet)"; \
	  else commit="unknown (built outside a git checkout)"; fi; \
	elif [ -n "$$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$$commit+dirty"; fi; \
	printf '#define CALIBER_VERSION "%s"\n#define CALIBER_COMMIT "%s"\n' '$(VERSION)' "$$commit" > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/tests/lib/%.o: tests/lib/%.c tests/lib/*.h $(HDRS) $(BUILD)/version.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests/lib -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJ) $(TLIB_OBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests/lib $(LDFLAGS_ALL) -o $@ $< $(LIB_OBJ) $(TLIB_OBJ) $(LIBS_ALL) $(CMOCKA_LIBS)

# Test tools: small programs the CLI tests use to build and seal run roots
# through the same library the binary uses.
$(BUILD)/tools/%: tests/tools/%.c $(LIB_OBJ) $(TLIB_OBJ) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Itests/lib $(LDFLAGS_ALL) -o $@ $< $(LIB_OBJ) $(TLIB_OBJ) $(LIBS_ALL)

check: $(BUILD)/caliber $(UNIT_BIN) $(TOOL_BIN)
	@tests/run.sh $(BUILD)

check-sanitize:
	@$(MAKE) --no-print-directory SANITIZE=1 check

deps:
	@scripts/deps.sh

# Man pages, written by the binary from the same tables as --help: the
# commands as `caliber --help` lists them, each page by `caliber CMD --man`.
MAN_DIR ?= man
man: $(BUILD)/caliber
	@mkdir -p $(MAN_DIR)
	$(BUILD)/caliber --man >$(MAN_DIR)/caliber.1.tmp && mv $(MAN_DIR)/caliber.1.tmp $(MAN_DIR)/caliber.1
	@for c in $$($(BUILD)/caliber --help | sed -n '/^commands:/,/^$$/s/^  \([a-z][a-z]*\) .*/\1/p'); do \
	  $(BUILD)/caliber $$c --man >$(MAN_DIR)/caliber-$$c.1.tmp && mv $(MAN_DIR)/caliber-$$c.1.tmp $(MAN_DIR)/caliber-$$c.1 || exit 1; \
	done; echo "man: $$(ls $(MAN_DIR)/*.1 | wc -l) pages in $(MAN_DIR)/"

demo: deps
	@$(MAKE) --no-print-directory caliber
	./caliber demo

FUZZ_SECONDS ?= 10
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build/fuzz/%)
FUZZ_CFLAGS = -std=c11 -D_XOPEN_SOURCE=700 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -Ibuild/fuzz $(PKG_CFLAGS)

build/fuzz/%: fuzz/%.c $(LIB_SRC) $(HDRS) build/fuzz/version.h
	clang $(FUZZ_CFLAGS) -pthread -o $@ $< $(LIB_SRC) $(PKG_LIBS) -lm

build/fuzz/version.h: $(BUILD)/version.h
	mkdir -p build/fuzz && cp $< $@

fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do \
	  name=$$(basename $$f); mkdir -p build/fuzz/corpus/$$name; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=0 build/fuzz/corpus/$$name fuzz/seeds/$$name 2>build/fuzz/$$name.log \
	    || { tail -40 build/fuzz/$$name.log; exit 1; }; \
	done

bench: caliber
	bench/reaccount.sh
	bench/overhead.sh
	bench/large_inputs.sh

# On a GPU machine (through the device tool): the Python side's GPU tests and
# a two-workload campaign. Needs ./caliber already built (the GPU image has
# no jansson headers; the binary built here runs there).
device-check:
	sh tests/device/device_check.sh

# make install: the binary in $(PREFIX)/bin, and in $(PREFIX)/share/caliber
# the tree it reads at run time (backends, the Python package caliber_pytest
# its workers load, the built-in corpus ops/, the demo compiler and the CPU
# example, the demo's campaign with its sealed H200 run for the offline demo,
# the other campaigns' manifests). The binary finds that tree from its own
# location (bin/../share/caliber), so the installed tree can be moved or
# staged with DESTDIR; CALIBER_HOME overrides it. The docs go to
# $(PREFIX)/share/doc/caliber, and the man pages of man/ (make man), where
# they exist, to $(PREFIX)/share/man/man1.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_TREE := backends python/caliber_pytest python/README.md ops examples campaigns/example \
		campaigns/two-builds-h200 campaigns/flaggems-h200 campaigns/demo-h200/README.md \
		campaigns/demo-h200/manifest.in.json campaigns/demo-h200/runs/all
INSTALL_DOCS := README.md docs

install: $(BUILD)/caliber
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/caliber" "$(DESTDIR)$(PREFIX)/share/doc/caliber"
	install -m 755 $(BUILD)/caliber "$(DESTDIR)$(PREFIX)/bin/caliber"
	tar -c --exclude=__pycache__ --exclude='*.pyc' $(INSTALL_TREE) | tar -x --no-same-owner -C "$(DESTDIR)$(PREFIX)/share/caliber"
	tar -c $(INSTALL_DOCS) | tar -x --no-same-owner -C "$(DESTDIR)$(PREFIX)/share/doc/caliber"
	@if [ -d man ]; then \
	  install -d "$(DESTDIR)$(PREFIX)/share/man/man1" && \
	  for m in man/*.1; do [ -f "$$m" ] || continue; install -m 644 "$$m" "$(DESTDIR)$(PREFIX)/share/man/man1/" || exit 1; done; \
	fi

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/caliber"
	rm -rf "$(DESTDIR)$(PREFIX)/share/caliber" "$(DESTDIR)$(PREFIX)/share/doc/caliber"
	rm -f "$(DESTDIR)$(PREFIX)"/share/man/man1/caliber.1 "$(DESTDIR)$(PREFIX)"/share/man/man1/caliber-*.1

clean:
	rm -rf build caliber man
