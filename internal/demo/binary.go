package demo

import (
	"debug/elf"
	"errors"
	"fmt"
)

// Why a binary cannot go into the image, for errors.Is.
var (
	// ErrNotLinux means the binary is not a Linux executable of the
	// Engine's architecture.
	ErrNotLinux = errors.New("not a Linux executable of the engine's architecture")
	// ErrNotStatic means the binary needs a dynamic loader and C library,
	// which the image does not have.
	ErrNotStatic = errors.New("dynamically linked")
)

// machines are the ELF machines of Go's architectures, as the Engine names
// them.
var machines = map[string]elf.Machine{
	"amd64":   elf.EM_X86_64,
	"arm64":   elf.EM_AARCH64,
	"arm":     elf.EM_ARM,
	"386":     elf.EM_386,
	"ppc64le": elf.EM_PPC64,
	"s390x":   elf.EM_S390,
	"riscv64": elf.EM_RISCV,
}

// staticHint says how to get a binary the image can run.
const staticHint = "build a static Linux landlord for the engine's architecture, for example CGO_ENABLED=0 GOOS=linux GOARCH=%s go build -o landlord-linux ./cmd/landlord, and pass it with --binary"

// CheckBinary reports whether the file at path can be the image's
// entrypoint on an Engine of architecture arch (as the Engine names it:
// amd64, arm64, …): a static Linux ELF executable for arch. The error wraps
// ErrNotLinux or ErrNotStatic and says how to build one.
func CheckBinary(path, arch string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("demo: %s: %w (%w); "+staticHint, path, ErrNotLinux, err, arch)
	}
	defer f.Close()
	want, known := machines[arch]
	switch {
	case !known:
		return fmt.Errorf("demo: the engine's architecture %q: %w: landlord knows no ELF machine for it", arch, ErrNotLinux)
	case f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN, f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX:
		return fmt.Errorf("demo: %s is a %s %s file: %w; "+staticHint, path, f.OSABI, f.Type, ErrNotLinux, arch)
	case f.Machine != want:
		return fmt.Errorf("demo: %s is for %s and the engine runs %s (%s): %w; "+staticHint, path, f.Machine, arch, want, ErrNotLinux, arch)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("demo: %s is %w (go build links the C library when cgo is on, as where a C compiler is installed), and the image has none; "+staticHint,
				path, ErrNotStatic, arch)
		}
	}
	return nil
}
