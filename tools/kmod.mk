# SPDX-License-Identifier: GPL-2.0
#
# The outer half of the kernel modules' Makefiles (guest-kmod/, dom0-kmod/,
# tests/xen/hostile/), included when kbuild is not running them: `make`
# builds against the newest *-amd64 kernel headers installed, KVER=... or
# KDIR=... against others.  Never `uname -r`: the machine that builds need
# not run that kernel.

KVER ?= $(shell find /lib/modules -mindepth 1 -maxdepth 1 -name '*-amd64' \
	  -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build

.PHONY: all modules clean

all: modules

modules:
	@test -d "$(KDIR)" || { echo "no kernel build tree at '$(KDIR)'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	@test -d "$(KDIR)" || exit 0; $(MAKE) -C $(KDIR) M=$(CURDIR) clean
