# Build and install syncr: the binary (release build), its man pages and shell completions.
#
#   make                                  release build (.build/release/syncr)
#   sudo make install                     into /usr/local
#   make install PREFIX=$HOME/.local      into your home
#   make install DESTDIR=pkgroot PREFIX=/usr   staged, for packaging
#   make COMMIT=$(git rev-parse HEAD)     a build that names its commit in `syncr version`
#   make uninstall                        the same variables remove what install put there
#   make test                             the whole test suite (scripts/test)
#   make lint-man                         mandoc's checks of the man pages
#   make dist                             the release files in dist/: a tarball and a .deb whose
#                                         binary needs no Swift toolchain (see packaging/dist)
#
# `install` builds first; `install-files` installs an already built binary (BIN=...) alone.

PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
SWIFT       ?= swift
CONFIG      ?= release
BIN         ?= .build/$(CONFIG)/syncr
INSTALL     ?= install
# The commit `syncr version` names; empty: "unknown". `make dist` always sets it (packaging/dist).
COMMIT      ?=

.PHONY: all build install install-files uninstall test lint-man dist

all: build

build:
	$(SWIFT) build -c $(CONFIG) --product syncr $(if $(COMMIT),-Xcc '-DSYNCR_COMMIT="$(COMMIT)"')

install: build
	$(MAKE) install-files

install-files:
	@test -x "$(BIN)" || { echo "make: $(BIN) is not built; run 'make' first" >&2; exit 1; }
	$(INSTALL) -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(MANDIR)/man1" "$(DESTDIR)$(MANDIR)/man5" \
		"$(DESTDIR)$(BASHCOMPDIR)" "$(DESTDIR)$(ZSHCOMPDIR)" "$(DESTDIR)$(FISHCOMPDIR)"
	$(INSTALL) -m 755 "$(BIN)" "$(DESTDIR)$(BINDIR)/syncr"
	$(INSTALL) -m 644 man/syncr.1 "$(DESTDIR)$(MANDIR)/man1/syncr.1"
	$(INSTALL) -m 644 man/syncr-manifest.5 "$(DESTDIR)$(MANDIR)/man5/syncr-manifest.5"
	"$(BIN)" completions bash > "$(DESTDIR)$(BASHCOMPDIR)/syncr"
	"$(BIN)" completions zsh > "$(DESTDIR)$(ZSHCOMPDIR)/_syncr"
	"$(BIN)" completions fish > "$(DESTDIR)$(FISHCOMPDIR)/syncr.fish"
	chmod 644 "$(DESTDIR)$(BASHCOMPDIR)/syncr" "$(DESTDIR)$(ZSHCOMPDIR)/_syncr" "$(DESTDIR)$(FISHCOMPDIR)/syncr.fish"

uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/syncr" \
		"$(DESTDIR)$(MANDIR)/man1/syncr.1" "$(DESTDIR)$(MANDIR)/man5/syncr-manifest.5" \
		"$(DESTDIR)$(BASHCOMPDIR)/syncr" "$(DESTDIR)$(ZSHCOMPDIR)/_syncr" "$(DESTDIR)$(FISHCOMPDIR)/syncr.fish"

test:
	bash scripts/test

lint-man:
	mandoc -T lint -W warning man/syncr.1 man/syncr-manifest.5

dist:
	bash packaging/dist
