# Cross-compiling for 64-bit ARM Linux with Debian's gcc-aarch64-linux-gnu;
# programs run under qemu-user (qemu-aarch64). Libraries come from Debian's
# arm64 multiarch packages (/usr/lib/aarch64-linux-gnu), which the cross
# compiler searches; they bring the arm64 C library (libc6:arm64), and
# programs run on it. Not with `-L /usr/aarch64-linux-gnu`: the dynamic
# linker would then come from the cross toolchain's copy of glibc and libc
# from the multiarch one, a mismatch in which pthread_create never returns.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
