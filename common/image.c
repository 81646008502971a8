// SPDX-License-Identifier: MIT
/* Measuring module images (image.h). */
#include <string.h>

#include "xcuda/proto.h"
#include "image.h"

struct xcuda_fatbin_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t header_size;
	uint64_t fat_size;
};

/* The parts of a 64-bit ELF header that give the file's extent. */
struct xcuda_elf64 {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct xcuda_elf64_shdr {
	uint32_t name, type;
	uint64_t flags, addr, offset, size;
	uint32_t link, info;
	uint64_t addralign, entsize;
};

#define XCUDA_SHT_NOBITS	8

static uint64_t xcuda_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* The end of a cubin: its headers' tables and its sections'. */
static uint64_t xcuda_elf_size(const uint8_t *p, uint64_t avail)
{
	struct xcuda_elf64 h;
	struct xcuda_elf64_shdr sh;
	uint64_t end, i;

	if (avail < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	if (h.ident[4] != 2 || h.shentsize != sizeof(sh) ||
	    h.shoff > XCUDA_MAX_MODULE || h.phoff > XCUDA_MAX_MODULE)
		return 0;
	end = xcuda_max64(sizeof(h), h.shoff + (uint64_t)h.shnum * sizeof(sh));
	end = xcuda_max64(end, h.phoff + (uint64_t)h.phnum * h.phentsize);
	/* The section table itself must be there to be read. */
	if (end > avail)
		return 0;
	for (i = 0; i < h.shnum; i++) {
		memcpy(&sh, p + h.shoff + i * sizeof(sh), sizeof(sh));
		if (sh.type == XCUDA_SHT_NOBITS)
			continue;
		if (sh.offset > XCUDA_MAX_MODULE || sh.size > XCUDA_MAX_MODULE)
			return 0;
		end = xcuda_max64(end, sh.offset + sh.size);
	}
	return end <= XCUDA_MAX_MODULE && end <= avail ? end : 0;
}

uint64_t xcuda_image_size(const void *image, uint64_t avail)
{
	struct xcuda_fatbin_hdr h;
	uint32_t magic = 0;
	uint64_t n;

	if (avail > XCUDA_MAX_MODULE + 1)
		avail = XCUDA_MAX_MODULE + 1;
	/* No magic has a NUL byte: shorter text is PTX. */
	if (strnlen(image, 4 < avail ? 4 : avail) == 4)
		memcpy(&magic, image, sizeof(magic));
	if (magic == XCUDA_FATBINC_MAGIC)
		return 0;
	if (magic == XCUDA_FATBIN_MAGIC) {
		if (avail < sizeof(h))
			return 0;
		memcpy(&h, image, sizeof(h));
		if (h.header_size < sizeof(h) || h.fat_size > XCUDA_MAX_MODULE)
			return 0;
		n = h.header_size + h.fat_size;
		return n <= avail ? n : 0;
	}
	if (magic == XCUDA_ELF_MAGIC)
		return xcuda_elf_size(image, avail);
	/* Anything else is PTX text, which CUDA reads up to its NUL. */
	n = strnlen(image, avail);
	return n < avail && n < XCUDA_MAX_MODULE ? n + 1 : 0;
}
