# SLEAPC_BUILD_FUZZERS=ON, with clang: libFuzzer targets (tests/fuzz/fuzz_*.c),
# e.g. fuzz_onnx_read. Everything in that build is instrumented for coverage
# and checked by ASan + UBSan, so the fuzzer is guided by, and catches bugs
# in, the library itself; only the fuzz targets link libFuzzer's main. Use a
# build folder of its own. The corpus replay (test_fuzz_*_replay) is an
# ordinary test in every build.
option(SLEAPC_BUILD_FUZZERS "Build the libFuzzer targets (clang only)" OFF)
if(SLEAPC_BUILD_FUZZERS AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "sleapc: SLEAPC_BUILD_FUZZERS needs clang (CC=clang); no fuzzers built")
elseif(SLEAPC_BUILD_FUZZERS)
  set(_fuzz_flags -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(-fsanitize=fuzzer-no-link ${_fuzz_flags}
    -Wno-unknown-warning-option)
  add_link_options(${_fuzz_flags})
  add_compile_definitions(SLEAPC_SANITIZED=1)
  find_package(HDF5 REQUIRED COMPONENTS C) # the HDF5 targets tune its free lists
  file(GLOB _fuzz_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/fuzz/fuzz_*.c)
  set(_fuzz_names "")
  foreach(_src ${_fuzz_sources})
    get_filename_component(_name ${_src} NAME_WE)
    list(APPEND _fuzz_names ${_name})
    add_executable(${_name} ${_src})
    # `sleapc` is defined after this file is included; the name resolves then.
    target_link_libraries(${_name} PRIVATE sleapc)
    target_include_directories(${_name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src
      ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
    target_compile_definitions(${_name} PRIVATE SLEAPC_LIBFUZZER _POSIX_C_SOURCE=200809L)
    target_compile_options(${_name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${_name} PRIVATE -fsanitize=fuzzer)
    sleapc_set_warnings(${_name})
  endforeach()
  message(STATUS "sleapc: libFuzzer targets: ${_fuzz_names}")
endif()
